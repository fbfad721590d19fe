// The network YAML's keys for backends that route through a graph (their row says
// routes_fabric): how routes are chosen and what each NPU's NIC can inject.
//   routing:       ecmp | d-mod-k      ECMP hashes each flow; d-mod-k picks by destination
//   ecmp_seed:     1                   the ECMP hash's seed
//   routes_file:   "routes.txt"        fixed routes per NPU pair (topology: [ Custom ] only)
//   nic_bandwidth: 50 | "400Gbps"      a cap on what each NPU sends and receives at once
// The analytical backends ignore them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "network/topology.h"

namespace chakrasim::config {

// The keys, in the order --help-network lists them.
std::vector<std::string> fabric_keys();

// Reads the keys present in `root` into `spec`. `spec.fabric` is the graph when the YAML names
// one (topology: [ Custom ]); routes_file needs it. Relative paths are relative to `source`'s
// folder. Throws Error naming the source, the key and what was expected.
void read_fabric_keys(const YAML::Node& root, const std::string& source, network::TopologySpec& spec);

// One block per key for `chakrasim run --help-network`, in its format; `readers_of(key)` names
// the backends that read a key.
std::string describe_fabric_keys(const std::function<std::string(const char*)>& readers_of);

}  // namespace chakrasim::config
