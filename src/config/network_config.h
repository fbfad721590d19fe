// Reading the analytical network YAML (docs/astra-sim-model.md §1.2):
//   topology:   [ Ring, FullyConnected, Switch ]   one entry per dimension, dimension 0 first
//   npus_count: [ 2, 8, 4 ]                        NPUs per dimension
//   bandwidth:  [ 200.0, 100.0, 50.0 ]             GB/s per link and direction (GB = 2^30 B)
//   latency:    [ 50.0, 500.0, 2000.0 ]            ns per hop
// Every key is listed once in a table (network_config.cc) with its type, unit, default and
// meaning; that table drives parsing, the warning for an unknown key (which names the nearest
// valid one: the reference ignores such keys silently) and `chakrasim run --help-network`.
#pragma once

#include <string>
#include <vector>

#include "network/topology.h"

namespace chakrasim::config {

// `warnings`, when given, receives one line per key the table does not know ("net.yml: unknown
// key "bandwith" ignored; did you mean "bandwidth"?"); such keys are ignored, as by the reference.
network::TopologySpec load_network(const std::string& path, std::vector<std::string>* warnings = nullptr);
// Parses YAML text; `source` names it in errors and warnings.
network::TopologySpec parse_network(const std::string& text, const std::string& source,
                                    std::vector<std::string>* warnings = nullptr);

// Every key of the table, in table order.
std::vector<std::string> network_keys();
// A table of every key: name, type, unit, default, meaning, and the backends that read it.
std::string describe_network_keys();

}  // namespace chakrasim::config
