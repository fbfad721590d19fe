// The topology text files users already have, read into a Fabric and written back:
//
//   ASTRA-sim (topology: [ Custom ], topology_file) and its ns-3 examples:
//     <nodes> <switches> <links>
//     <the switch ids>
//     <src> <dst> <bandwidth> <latency> <error rate>      one line per link
//   SimAI's generated topologies, which add fields to the first line and list the NVSwitch ids
//   first among the switches:
//     <nodes> <gpus per server> <nvswitches> <other switches> <links> <gpu type> [...]
//
// Bandwidths carry a unit, bits or bytes per second ("400Gbps", "50GBps", "100Mb/s"); latencies
// a unit of time ("0.0005ms", "500ns", "1us"). NPUs are the non-switch ids, in id order. In a
// file without switches (a torus) NPUs forward traffic; behind switches they do not.
//
// Each line is one cable (both directions, as ns-3 and SimAI build them), unless every line's
// reverse is listed too: then each line is one direction (ASTRA-sim's Custom topology lists
// both). A file mixing the two is refused, naming a line whose reverse is missing.
#pragma once

#include <string>

#include "network/fabric/fabric.h"

namespace chakrasim::network {

// Parses `text`; `source` names it in errors. The result is finished (Fabric::finish).
Fabric parse_fabric_text(const std::string& text, const std::string& source);
Fabric load_fabric_text(const std::string& path);

// The fabric in the ns-3 form above, one line per cable; with scale-up switches, in SimAI's
// form (nodes renumbered: NPUs, then scale-up, then scale-out switches) so that their role is
// kept. Throws Error for a link without a reverse of the same bandwidth and latency, which
// neither form can say.
std::string fabric_text(const Fabric& fabric);

// "400Gbps" -> bytes per ns (50); "0.0005ms" -> ns (500). Throw Error naming `where`.
double parse_bandwidth_bytes_per_ns(const std::string& text, const std::string& where);
double parse_latency_ns(const std::string& text, const std::string& where);

}  // namespace chakrasim::network
