// The system JSON's "systolic" object: a preset, and any of its numbers overridden, e.g.
//   "systolic": {"preset": "tpu-v4", "arrays": 8, "memory-stalls": true}
// Keys: preset, rows, cols, arrays, dataflow (os | ws | is), clock-mhz, word-bytes,
// ifmap-sram-kib, filter-sram-kib, ofmap-sram-kib, dram-gb-per-s, memory-stalls. Without a
// preset, rows, cols, clock-mhz and dram-gb-per-s are required.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "compute/compute_spec.h"

namespace chakrasim::config {

// Throws Error naming `source`, the key and what was expected.
compute::SystolicSpec parse_systolic(const nlohmann::json& value, const std::string& source);

// The object back, as parse_systolic reads it (every key written out).
std::string systolic_json(const compute::SystolicSpec& spec);

}  // namespace chakrasim::config
