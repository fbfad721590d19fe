// Communicator groups: group id (>= 1) -> member NPUs in the order the file lists them
// (docs/astra-sim-model.md §1.5).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/types.h"

namespace chakrasim::system {

using CommGroups = std::map<std::uint32_t, std::vector<NpuId>>;

}  // namespace chakrasim::system
