// Writers of the configuration files the loaders read: the system JSON from a SystemConfig and
// the network YAML from a TopologySpec. Whatever writes such files (the demo's inputs, the LLM
// generator's matching system and network) goes through them, so a written file always loads
// back to the specs it came from (tests/config/config_writers_test.cc round-trips both).
//
// Numbers are written in their shortest form that reads back to the same double, with ".0" on
// whole numbers ("50.0", "418.193"), so nothing is lost on the way.
#pragma once

#include <string>

#include "config/system_config.h"
#include "network/topology.h"

namespace chakrasim::config {

// Every key the loader reads into `config` (and only those), in the order of ASTRA-sim's example
// files: scheduling, chunking, the four implementation lists (and custom prefixes where set),
// then local-mem-bw, peak-perf, roofline-enabled and, when set, replay-only.
std::string system_json(const SystemConfig& config);

// The four keys, one list element per dimension; `comment` (may be empty, may have several
// lines) goes first, each line behind "# ".
std::string network_yaml(const network::TopologySpec& spec, const std::string& comment = "");

// The shortest text that reads back as `value`, with ".0" on whole numbers.
std::string number_text(double value);

}  // namespace chakrasim::config
