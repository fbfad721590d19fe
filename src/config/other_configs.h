// Reading the remote-memory JSON and the communicator-group JSON.
#pragma once

#include <cstdint>
#include <map>
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

// The kind of each communicator group, for reports: {"1": "TP", "9": "DP"}; ids as in the group
// file, names non-empty strings. `generate llm` writes PREFIX.group-names.json beside
// PREFIX.groups.json (the group file itself stays as the reference reads it).
std::map<std::uint32_t, std::string> parse_group_names(const std::string& text, const std::string& source);
std::map<std::uint32_t, std::string> load_group_names(const std::string& path);
// The two files' text, as the readers above take it and the reference reads the group file: one
// group a line, {"1": [0, 1],\n  "2": ...}, in id order.
std::string comm_groups_json(const system::CommGroups& groups);
std::string group_names_json(const std::map<std::uint32_t, std::string>& names);
// PREFIX.group-names.json for a group file PREFIX.groups.json, or "" for other names.
std::string group_names_path_for(const std::string& groups_path);

}  // namespace chakrasim::config
