#include "config/other_configs.h"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_input.h"
#include "core/read_file.h"
#include "core/sim_time.h"

namespace chakrasim::config {
namespace {

using Json = nlohmann::json;

Json parse_object(const std::string& text, const std::string& source, const char* expected) {
  Json root = parse_json_input(text, source, fmt::format("a JSON object {}", expected));
  if (!root.is_object()) fail("{}: expected a JSON object {}", source, expected);
  return root;
}

std::uint64_t unsigned_key(const Json& root, const char* key, const std::string& source,
                           std::uint64_t max = UINT64_MAX) {
  auto it = root.find(key);
  if (it == root.end()) return 0;
  if ((!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) ||
      it->get<std::uint64_t>() > max) {
    fail("{}: key \"{}\": value {} is invalid; expected an integer, 0 or more (and at most {})", source, key,
         json_excerpt(*it), max);
  }
  return it->get<std::uint64_t>();
}

}  // namespace

memory::RemoteMemorySpec parse_memory(const std::string& text, const std::string& source) {
  const Json root = parse_object(text, source, "with a \"memory-type\" key");
  memory::RemoteMemorySpec spec;
  auto it = root.find("memory-type");
  if (it == root.end()) {
    fail("{}: missing key \"memory-type\"; expected NO_MEMORY_EXPANSION, PER_NPU_MEMORY_EXPANSION, "
         "PER_NODE_MEMORY_EXPANSION or MEMORY_POOL",
         source);
  }
  const std::string type = it->is_string() ? it->get<std::string>() : json_excerpt(*it);
  if (type == "NO_MEMORY_EXPANSION") spec.kind = memory::RemoteMemoryKind::kNone;
  else if (type == "PER_NPU_MEMORY_EXPANSION") spec.kind = memory::RemoteMemoryKind::kPerNpu;
  else if (type == "PER_NODE_MEMORY_EXPANSION") spec.kind = memory::RemoteMemoryKind::kPerNode;
  else if (type == "MEMORY_POOL") spec.kind = memory::RemoteMemoryKind::kPool;
  else {
    fail("{}: key \"memory-type\": value \"{}\" is invalid; expected NO_MEMORY_EXPANSION, "
         "PER_NPU_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION or MEMORY_POOL",
         source, type);
  }
  spec.latency_ns = unsigned_key(root, "remote-mem-latency", source, kMaxSimulatedNs);
  spec.bandwidth_gb_per_s = unsigned_key(root, "remote-mem-bw", source);
  spec.nodes = static_cast<std::uint32_t>(unsigned_key(root, "num-nodes", source, UINT32_MAX));
  spec.npus_per_node = static_cast<std::uint32_t>(unsigned_key(root, "num-npus-per-node", source, UINT32_MAX));
  return spec;
}

memory::RemoteMemorySpec load_memory(const std::string& path) {
  return parse_memory(read_file(path, "remote-memory configuration", "the remote-memory configuration file"), path);
}

system::CommGroups parse_comm_groups(const std::string& text, const std::string& source, NpuId npus) {
  const Json root = parse_object(text, source, "mapping group ids to lists of NPU ids");
  system::CommGroups groups;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    std::size_t used = 0;
    unsigned long id = 0;
    try {
      id = std::stoul(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || key.empty() || id == 0 || id > 0xffffffffu) {
      fail("{}: group id \"{}\" is invalid; expected a decimal integer of at least 1 (0 means all NPUs)", source, key);
    }
    if (!it->is_array() || it->empty()) {
      fail("{}: group \"{}\": value {} is invalid; expected a non-empty list of NPU ids", source, key,
           json_excerpt(*it));
    }
    std::vector<NpuId> members;
    std::set<NpuId> seen;
    for (const Json& m : *it) {
      if (!m.is_number_unsigned() && !(m.is_number_integer() && m.get<std::int64_t>() >= 0)) {
        fail("{}: group \"{}\": member {} is invalid; expected an NPU id from 0 to {}", source, key, json_excerpt(m),
             npus - 1);
      }
      const std::uint64_t npu = m.get<std::uint64_t>();
      if (npu >= npus) {
        fail("{}: group \"{}\": NPU {} is outside the network; expected an NPU id from 0 to {}", source, key, npu,
             npus - 1);
      }
      if (!seen.insert(static_cast<NpuId>(npu)).second) {
        fail("{}: group \"{}\": NPU {} is listed twice; expected each NPU at most once", source, key, npu);
      }
      members.push_back(static_cast<NpuId>(npu));
    }
    if (!groups.emplace(static_cast<std::uint32_t>(id), std::move(members)).second) {
      fail("{}: group id {} is given twice (\"{}\" repeats an earlier key)", source, id, key);
    }
  }
  return groups;
}

std::map<std::uint32_t, std::string> parse_group_names(const std::string& text, const std::string& source) {
  const Json root = parse_object(text, source, "mapping group ids to group kinds such as \"TP\"");
  std::map<std::uint32_t, std::string> names;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    const bool digits = !key.empty() && key.size() <= 10 && key.find_first_not_of("0123456789") == std::string::npos;
    const std::uint64_t id = digits ? std::stoull(key) : 0;
    if (id == 0 || id > 0xffffffffu) {
      fail("{}: group id \"{}\" is invalid; expected a decimal integer of at least 1", source, key);
    }
    if (!it->is_string() || it->get<std::string>().empty()) {
      fail("{}: group \"{}\": value {} is invalid; expected a name such as \"TP\"", source, key, json_excerpt(*it));
    }
    names[static_cast<std::uint32_t>(id)] = it->get<std::string>();
  }
  return names;
}

std::map<std::uint32_t, std::string> load_group_names(const std::string& path) {
  return parse_group_names(read_file(path, "group-names file", "the group-names JSON"), path);
}

std::string group_names_path_for(const std::string& groups_path) {
  const std::string suffix = ".groups.json";
  if (groups_path.size() <= suffix.size() ||
      groups_path.compare(groups_path.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return "";
  }
  return groups_path.substr(0, groups_path.size() - suffix.size()) + ".group-names.json";
}

system::CommGroups load_comm_groups(const std::string& path, NpuId npus) {
  return parse_comm_groups(read_file(path, "communicator-group configuration",
                                     "the communicator-group configuration file"),
                           path, npus);
}

std::string comm_groups_json(const system::CommGroups& groups) {
  std::string out = "{";
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    out += fmt::format("{}\n  \"{}\": [{}]", it == groups.begin() ? "" : ",", it->first, fmt::join(it->second, ", "));
  }
  return out + "\n}\n";
}

std::string group_names_json(const std::map<std::uint32_t, std::string>& names) {
  std::string out = "{";
  for (auto it = names.begin(); it != names.end(); ++it) {
    out +=
        fmt::format("{}\n  \"{}\": {}", it == names.begin() ? "" : ",", it->first, nlohmann::json(it->second).dump());
  }
  return out + "\n}\n";
}

}  // namespace chakrasim::config
