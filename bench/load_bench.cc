// Loading a workload's traces: load_workload on PREFIX.<rank>.et for RANKS ranks, as `run` does.
// Prints the bytes read, the wall and CPU time, the rate per core, and how many graphs and
// structures the ranks came to (graph.h). Usage: chakrasim_load_bench PREFIX RANKS
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "chakra/et_file.h"
#include "chakra/workload_files.h"

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PREFIX RANKS\n", argv[0]);
    return 1;
  }
  const std::string prefix = argv[1];
  const std::size_t ranks = std::strtoull(argv[2], nullptr, 10);
  std::uintmax_t bytes = 0;
  for (std::size_t r = 0; r < ranks; ++r) bytes += std::filesystem::file_size(chakrasim::chakra::rank_path(prefix, r));
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  const auto graphs = chakrasim::chakra::load_workload(prefix, ranks);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  std::set<const void*> distinct, structures;
  std::uint64_t nodes = 0;
  for (const auto& g : graphs) {
    distinct.insert(g.get());
    structures.insert(g->structure_id());
    nodes += g->size();
  }
  std::printf("ranks=%zu bytes=%ju nodes=%ju graphs=%zu structures=%zu wall_s=%.3f cpu_s=%.3f mb_per_cpu_s=%.0f\n",
              ranks, bytes, static_cast<std::uintmax_t>(nodes), distinct.size(), structures.size(), wall, cpu,
              static_cast<double>(bytes) / 1e6 / cpu);
  return 0;
}
