#include "chakra/workload_files.h"

#include <filesystem>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "core/error.h"
#include "core/read_file.h"

namespace chakrasim::chakra {

std::vector<std::shared_ptr<const Graph>> load_workload(const std::string& prefix, std::size_t ranks,
                                                        const std::string& what, const LoadProgress& on_rank) {
  std::uint64_t bytes_read = 0;
  std::vector<std::shared_ptr<const Graph>> graphs(ranks);
  // A hash of the content -> the ranks parsed with it, so that identical files are parsed once.
  // Only the hash is kept, not the bytes (1.7 GB for a 1024-rank GPT-3 run): a file whose hash
  // matches is compared with that rank's file, read again.
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> parsed;
  for (std::size_t r = 0; r < ranks; ++r) {
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
    std::string bytes = read_file(path, fmt::format("{} file for rank {}", what, r),
                                  fmt::format("the Chakra trace of rank {}", r), kTraceFileMaxBytes);
    bytes_read += bytes.size();
    if (on_rank) on_rank(r + 1, ranks, bytes_read);
    const std::uint64_t hash = std::hash<std::string_view>{}(bytes);
    std::vector<std::size_t>& same_hash = parsed[hash];
    bool shared = false;
    for (const std::size_t earlier : same_hash) {
      if (read_file(rank_path(prefix, earlier), "trace file", "a Chakra trace file", kTraceFileMaxBytes) == bytes) {
        graphs[r] = graphs[earlier];
        shared = true;
        break;
      }
    }
    if (shared) continue;
    auto graph = std::make_shared<const Graph>(Graph::parse(bytes, path));
    if (graph->size() == 0 && what == "workload") {
      fail("{}: the trace of rank {} has no nodes; expected at least one node after the GlobalMetadata", path, r);
    }
    graphs[r] = std::move(graph);
    same_hash.push_back(r);
  }
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

}  // namespace chakrasim::chakra
