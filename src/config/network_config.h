// Reading the analytical network YAML (ASTRA-SIM-BEHAVIOUR.md §1.2):
//   topology:   [ Ring, FullyConnected, Switch ]   one entry per dimension, dimension 0 first
//   npus_count: [ 2, 8, 4 ]                        NPUs per dimension
//   bandwidth:  [ 200.0, 100.0, 50.0 ]             GB/s per link and direction (GB = 2^30 B)
//   latency:    [ 50.0, 500.0, 2000.0 ]            ns per hop
// Other keys are ignored, as by the reference.
#pragma once

#include <string>

#include "network/topology.h"

namespace chakrasim::config {

network::TopologySpec load_network(const std::string& path);
// Parses YAML text; `source` names it in errors.
network::TopologySpec parse_network(const std::string& text, const std::string& source);

}  // namespace chakrasim::config
