// Reading the remote-memory JSON and the communicator-group JSON.
#pragma once

#include <string>

#include "core/types.h"
#include "memory/remote_memory_spec.h"
#include "system/comm_groups.h"

namespace chakrasim::config {

// {"memory-type": NO_MEMORY_EXPANSION | PER_NPU_MEMORY_EXPANSION | PER_NODE_MEMORY_EXPANSION |
//  MEMORY_POOL, "remote-mem-latency": ns, "remote-mem-bw": GB/s, "num-nodes", "num-npus-per-node"}
memory::RemoteMemorySpec parse_memory(const std::string& text, const std::string& source);
memory::RemoteMemorySpec load_memory(const std::string& path);

// {"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]}: ids >= 1, members distinct and below `npus`.
system::CommGroups parse_comm_groups(const std::string& text, const std::string& source, NpuId npus);
system::CommGroups load_comm_groups(const std::string& path, NpuId npus);

}  // namespace chakrasim::config
