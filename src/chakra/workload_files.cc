#include "chakra/workload_files.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "core/read_file.h"

namespace chakrasim::chakra {
namespace {

// The threads for_each_parallel runs on: all cores.
std::size_t worker_count() { return std::max(1u, std::thread::hardware_concurrency()); }

// Runs task(i, worker) for i in [0, count) on worker_count() threads (`worker` says which, for
// state of its own), skipping an i that already has an error; an exception stops nothing: it is
// kept as errors[i].
void for_each_parallel(std::size_t count, const std::function<void(std::size_t, std::size_t)>& task,
                       std::vector<std::exception_ptr>& errors) {
  std::atomic<std::size_t> next{0};
  auto work = [&](std::size_t worker) {
    for (std::size_t i = next++; i < count; i = next++) {
      if (errors[i]) continue;
      try {
        task(i, worker);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min(worker_count(), count);
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
  }
}

// A file's size and first bytes, or nullopt where reading it all says better what is wrong.
struct FileHead {
  std::uint64_t size = 0;
  std::string bytes;
};
using ReadHead = std::function<std::optional<FileHead>(std::size_t rank, std::size_t max_bytes)>;

// Parses every rank's bytes (read_rank(r); errors name rank_path(prefix, r)) into graphs that
// share what their ranks share. read_head (optional) reads less where it can.
std::vector<std::shared_ptr<const Graph>> load_ranks(const std::string& prefix, std::size_t ranks,
                                                     const std::function<std::string(std::size_t)>& read_rank,
                                                     const ReadHead& read_head, const std::string& what,
                                                     const LoadProgress& on_rank) {
  // Graphs whose structure is shared by later ones, by the structure's hash: ranks that differ
  // only in peers, tags and groups keep one copy of the rest (graph.h).
  std::unordered_map<std::uint64_t, std::vector<std::shared_ptr<const Graph>>> by_structure;
  std::mutex structure_mutex;
  auto parse_rank = [&](std::size_t r, const std::string& bytes) {
    const std::string path = rank_path(prefix, r);
    auto graph = std::make_shared<Graph>(Graph::parse(bytes, path));
    if (graph->size() == 0 && what == "workload") {
      fail("{}: the trace of rank {} has no nodes; expected at least one node after the GlobalMetadata", path, r);
    }
    const std::uint64_t hash = graph->structure_hash();
    const std::lock_guard lock(structure_mutex);
    std::vector<std::shared_ptr<const Graph>>& same_hash = by_structure[hash];
    const bool shared = std::any_of(same_hash.begin(), same_hash.end(),
                                    [&graph](const auto& other) { return graph->share_structure(*other); });
    if (!shared) same_hash.push_back(graph);
    return std::shared_ptr<const Graph>(std::move(graph));
  };

  // Ranks whose files are byte-identical share one graph, parsed once. Each file's size and
  // first bytes first: a file alone with them is unlike every other and is parsed as it is
  // read. The others are told apart by their whole bytes' hash (the bytes are not kept: 1.7 GB
  // for a 1024-rank GPT-3 run); the first rank of each hash is parsed and the others compared
  // with it, each file read again. All on all cores; the error reported is the lowest rank's, as
  // a loop over the ranks in order would raise it.
  std::vector<std::exception_ptr> errors(ranks);
  auto raise_first = [&errors] {
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  };
  struct Sample {
    std::uint64_t head = 0;  // of the size and the first kHeadBytes
    std::uint64_t whole = 0;
    bool has_whole = false;
  };
  constexpr std::size_t kHeadBytes = 64 * 1024;
  auto head_hash = [](std::uint64_t size, std::string_view head) {
    return std::hash<std::string_view>{}(head)*0x9e3779b97f4a7c15ull ^ size;
  };
  std::vector<Sample> samples(ranks);
  std::mutex progress_mutex;
  std::size_t loaded = 0;
  std::uint64_t bytes_read = 0;
  for_each_parallel(
      ranks,
      [&](std::size_t r, std::size_t) {
        Sample& s = samples[r];
        std::uint64_t size = 0;
        if (const std::optional<FileHead> head = read_head ? read_head(r, kHeadBytes) : std::nullopt) {
          size = head->size;
          s.head = head_hash(size, head->bytes);
        } else {  // read_rank reports what is wrong, or reads it all
          const std::string bytes = read_rank(r);
          size = bytes.size();
          s.head = head_hash(size, std::string_view(bytes).substr(0, kHeadBytes));
          s.whole = std::hash<std::string_view>{}(bytes);
          s.has_whole = true;
        }
        if (on_rank) {
          const std::lock_guard lock(progress_mutex);
          bytes_read += size;
          on_rank(++loaded, ranks, bytes_read);
        }
      },
      errors);
  std::unordered_map<std::uint64_t, std::size_t> with_head;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (!errors[r]) ++with_head[samples[r].head];
  }
  for_each_parallel(
      ranks,
      [&](std::size_t r, std::size_t) {
        Sample& s = samples[r];
        if (with_head[s.head] == 1 || s.has_whole) return;
        s.whole = std::hash<std::string_view>{}(read_rank(r));
        s.has_whole = true;
      },
      errors);
  std::vector<std::size_t> first_of(ranks);
  std::unordered_map<std::uint64_t, std::size_t> first_with_hash;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (errors[r]) continue;
    const Sample& s = samples[r];
    first_of[r] = with_head[s.head] == 1 ? r : first_with_hash.try_emplace(s.whole ^ s.head, r).first->second;
  }
  std::vector<std::shared_ptr<const Graph>> graphs(ranks);
  for_each_parallel(
      ranks,
      [&](std::size_t r, std::size_t) {
        if (first_of[r] == r) graphs[r] = parse_rank(r, read_rank(r));
      },
      errors);
  // Each worker keeps the last first rank's bytes it read: the copies of one file (all the ranks
  // of a symmetric run) read it once per worker, not once per copy.
  std::vector<std::pair<std::size_t, std::string>> first_bytes(worker_count(), {ranks, ""});
  for_each_parallel(
      ranks,
      [&](std::size_t r, std::size_t worker) {
        if (first_of[r] == r || errors[first_of[r]]) return;  // parsed, or its bytes failed already
        const std::string bytes = read_rank(r);
        auto& [first, first_text] = first_bytes[worker];
        if (first != first_of[r]) {
          first_text = read_rank(first_of[r]);
          first = first_of[r];
        }
        if (bytes == first_text) {
          graphs[r] = graphs[first_of[r]];
        } else {
          graphs[r] = parse_rank(r, bytes);  // the same hash, other bytes
        }
      },
      errors);
  raise_first();
  return graphs;
}

}  // namespace

std::vector<std::shared_ptr<const Graph>> load_workload(const std::string& prefix, std::size_t ranks,
                                                        const std::string& what, const LoadProgress& on_rank) {
  auto read_rank = [&](std::size_t r) {
    const std::string path = rank_path(prefix, r);
    // A missing file gets a hint about the prefix (rank 0) or the rank count; everything else
    // (a directory, no permission) the shared messages of read_file.
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      if (r == 0 && what != "workload") {
        fail("{}: the {} file for rank 0 does not exist; expected the prefix of per-rank files PREFIX.<rank>.et", path,
             what);
      }
      if (r == 0) {
        fail("{}: the workload file for rank 0 does not exist; --workload expects the prefix of "
             "per-rank files PREFIX.<rank>.et (for example traces/allreduce for "
             "traces/allreduce.0.et)",
             path);
      }
      fail("{}: cannot open the {} file for rank {} (the network has {} NPUs, so ranks 0 to "
           "{} need a file each)",
           path, what, r, ranks, ranks - 1);
    }
    return read_file(path, fmt::format("{} file for rank {}", what, r), fmt::format("the Chakra trace of rank {}", r),
                     kTraceFileMaxBytes);
  };
  auto read_head = [&](std::size_t r, std::size_t max_bytes) -> std::optional<FileHead> {
    const std::string path = rank_path(prefix, r);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    const std::uint64_t size = std::filesystem::file_size(path, ec);
    if (ec || size == 0 || size > kTraceFileMaxBytes) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    FileHead head{size, std::string(std::min<std::uint64_t>(size, max_bytes), '\0')};
    in.read(head.bytes.data(), static_cast<std::streamsize>(head.bytes.size()));
    if (!in || static_cast<std::size_t>(in.gcount()) != head.bytes.size()) return std::nullopt;
    return head;
  };
  std::vector<std::shared_ptr<const Graph>> graphs = load_ranks(prefix, ranks, read_rank, read_head, what, on_rank);
  // A file for one rank more than the network has means the workload and the network disagree.
  std::error_code ec;
  const std::string extra = rank_path(prefix, ranks);
  if (std::filesystem::exists(extra, ec)) {
    fail("{}: the {} has a file for rank {}, but the network has {} NPUs; expected exactly one trace per "
         "NPU (ranks 0 to {})",
         extra, what, ranks, ranks, ranks - 1);
  }
  return graphs;
}

std::vector<std::shared_ptr<const Graph>> load_from_memory(const std::string& prefix, std::size_t ranks,
                                                           const std::function<std::string(std::size_t)>& bytes_of,
                                                           const LoadProgress& on_rank) {
  return load_ranks(prefix, ranks, bytes_of, {}, "workload", on_rank);
}

}  // namespace chakrasim::chakra
