// chakrasim-sweep-mpi: `chakrasim sweep` across the ranks of an MPI job. `chakrasim sweep` started
// by mpirun hands over to this binary (built when Open MPI is found), which runs the same command
// line with the points handed out dynamically: rank 0 answers each rank's request for a point
// with the next one, collects the rows, and writes the table; it also runs points itself, on a
// thread beside the one that serves the requests.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "cli/app.h"
#include "cli/sweep_distributor.h"

namespace chakrasim::cli {
namespace {

constexpr int kTagRequest = 1;  // a rank's finished row (empty the first time): it wants a point
constexpr int kTagPoint = 2;    // rank 0's answer: the point's index, or kNoPoint
constexpr long long kNoPoint = -1;

// Row cells joined by NUL (cells never hold one); empty for no row.
std::string pack(const sweep::Row& row) {
  std::string out;
  for (const std::string& c : row.cells) {
    out += c;
    out += '\0';
  }
  return out;
}

sweep::Row unpack(const std::string& bytes) {
  sweep::Row row;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::size_t end = bytes.find('\0', at);
    row.cells.push_back(bytes.substr(at, end - at));
    at = end + 1;
  }
  row.point = row.cells.empty() ? 0 : std::stoull(row.cells.front());
  return row;
}

// Waits for a message without spinning a core: Open MPI's blocking calls poll, which would take
// the CPU the points run on.
void wait_for(MPI_Request& request, MPI_Status* status) {
  int done = 0;
  for (;;) {
    MPI_Test(&request, &done, status);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

class MpiDistributor final : public PointDistributor {
 public:
  MpiDistributor() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }

  std::size_t processes() const override { return static_cast<std::size_t>(size_); }

  bool run(const SweepRunner& runner, const std::vector<std::size_t>& todo, std::size_t,
           const std::function<void(sweep::Row)>& on_row) override {
    if (rank_ != 0) {
      work(runner, todo);
      return false;
    }
    std::atomic<std::size_t> next{0};
    std::mutex rows;
    // Rank 0's own points, on a thread; this thread serves the others.
    std::thread local([&] {
      for (std::size_t i = next++; i < todo.size(); i = next++) {
        sweep::Row row = runner.run(todo[i]);
        std::lock_guard lock(rows);
        on_row(std::move(row));
      }
    });
    int serving = size_ - 1;
    while (serving > 0) {
      MPI_Status status;
      MPI_Message message;
      int flag = 0;
      MPI_Improbe(MPI_ANY_SOURCE, kTagRequest, MPI_COMM_WORLD, &flag, &message, &status);
      if (!flag) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      int bytes = 0;
      MPI_Get_count(&status, MPI_CHAR, &bytes);
      std::string packed(static_cast<std::size_t>(bytes), '\0');
      MPI_Mrecv(packed.data(), bytes, MPI_CHAR, &message, MPI_STATUS_IGNORE);
      if (!packed.empty()) {
        std::lock_guard lock(rows);
        on_row(unpack(packed));
      }
      const std::size_t i = next++;
      const long long point = i < todo.size() ? static_cast<long long>(i) : kNoPoint;
      if (point == kNoPoint) --serving;
      MPI_Send(&point, 1, MPI_LONG_LONG, status.MPI_SOURCE, kTagPoint, MPI_COMM_WORLD);
    }
    local.join();
    return true;
  }

 private:
  void work(const SweepRunner& runner, const std::vector<std::size_t>& todo) {
    std::string packed;
    for (;;) {
      MPI_Send(packed.data(), static_cast<int>(packed.size()), MPI_CHAR, 0, kTagRequest, MPI_COMM_WORLD);
      long long point = kNoPoint;
      MPI_Request request;
      MPI_Irecv(&point, 1, MPI_LONG_LONG, 0, kTagPoint, MPI_COMM_WORLD, &request);
      wait_for(request, MPI_STATUS_IGNORE);
      if (point == kNoPoint || static_cast<std::size_t>(point) >= todo.size()) return;
      packed = pack(runner.run(todo[static_cast<std::size_t>(point)]));
    }
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace
}  // namespace chakrasim::cli

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int code = 0;
  {
    chakrasim::cli::MpiDistributor distributor;
    chakrasim::cli::set_sweep_distributor(&distributor);
    code = chakrasim::cli::run_chakrasim(argc, argv);
    chakrasim::cli::set_sweep_distributor(nullptr);
  }
  // A rank that failed (a bad spec fails on every rank alike) ends the job with its code.
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
