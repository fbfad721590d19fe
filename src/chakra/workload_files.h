// Loading a whole workload: PREFIX.<rank>.et for every rank. Ranks whose files are
// byte-identical share one parsed graph (data-parallel replicas usually are).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chakra/graph.h"

namespace chakrasim::chakra {

// `what` names the set of files in messages: "workload" (the --workload traces, with a hint at
// the flag) or, e.g., "custom algorithm".
// `on_rank(loaded, ranks, bytes_read)`, when given, is told after every file (for a progress line).
using LoadProgress = std::function<void(std::size_t loaded, std::size_t ranks, std::uint64_t bytes_read)>;
std::vector<std::shared_ptr<const Graph>> load_workload(const std::string& prefix, std::size_t ranks,
                                                        const std::string& what = "workload",
                                                        const LoadProgress& on_rank = {});

// The same from bytes a generator makes (bytes_of(r): rank r's .et file, asked for once or
// twice), without files; errors name rank_path(prefix, r).
std::vector<std::shared_ptr<const Graph>> load_from_memory(const std::string& prefix, std::size_t ranks,
                                                           const std::function<std::string(std::size_t)>& bytes_of,
                                                           const LoadProgress& on_rank = {});

}  // namespace chakrasim::chakra
