// Loading a whole workload: PREFIX.<rank>.et for every rank. Ranks whose files are
// byte-identical share one parsed graph (data-parallel replicas usually are).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chakra/graph.h"

namespace chakrasim::chakra {

std::vector<std::shared_ptr<const Graph>> load_workload(const std::string& prefix, std::size_t ranks);

}  // namespace chakrasim::chakra
