#include "config/systolic_config.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compute/systolic/systolic_presets.h"
#include "config/nearest_key.h"
#include "core/error.h"
#include "core/json_input.h"

namespace chakrasim::config {
namespace {

using Json = nlohmann::json;

const std::vector<std::string>& keys() {
  static const std::vector<std::string> kKeys = {"preset",          "rows",           "cols",          "arrays",
                                                 "dataflow",        "clock-mhz",      "word-bytes",    "ifmap-sram-kib",
                                                 "filter-sram-kib", "ofmap-sram-kib", "dram-gb-per-s", "memory-stalls"};
  return kKeys;
}

}  // namespace

compute::SystolicSpec parse_systolic(const Json& value, const std::string& source) {
  auto bad = [&](const std::string& key, const Json& v, const std::string& expected) {
    fail("{}: key \"systolic\": \"{}\" is {}; expected {}", source, key, json_excerpt(v), expected);
  };
  if (!value.is_object()) {
    fail("{}: key \"systolic\" is {}; expected an object such as {{\"preset\": \"tpu-v4\"}}", source,
         json_excerpt(value));
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (std::find(keys().begin(), keys().end(), it.key()) != keys().end()) continue;
    const auto near = nearest_key(it.key(), keys());
    fail("{}: key \"systolic\": unknown key \"{}\"{}; expected one of: {}", source, it.key(),
         near ? fmt::format(" (did you mean \"{}\"?)", *near) : "", fmt::join(keys(), ", "));
  }
  compute::SystolicSpec spec;
  spec.clock_mhz = 0;
  spec.dram_gb_per_s = 0;
  if (const auto it = value.find("preset"); it != value.end()) {
    if (!it->is_string()) bad("preset", *it, "a preset's name");
    try {
      spec = compute::systolic::preset(it->get<std::string>()).spec;
    } catch (const Error& e) {
      fail("{}: key \"systolic\": {}", source, e.what());
    }
  } else {
    for (const char* key : {"rows", "cols", "clock-mhz", "dram-gb-per-s"}) {
      if (!value.contains(key)) {
        fail("{}: key \"systolic\" has no \"preset\" and no \"{}\"; expected a preset or rows, cols, clock-mhz and "
             "dram-gb-per-s",
             source, key);
      }
    }
  }
  auto count = [&](const char* key, std::uint64_t min, std::uint64_t max, std::uint64_t& out) {
    const auto it = value.find(key);
    if (it == value.end()) return;
    const bool integral = it->is_number_unsigned() || (it->is_number_integer() && it->get<std::int64_t>() >= 0);
    if (!integral || it->get<std::uint64_t>() < min || it->get<std::uint64_t>() > max) {
      bad(key, *it, fmt::format("an integer from {} to {}", min, max));
    }
    out = it->get<std::uint64_t>();
  };
  auto positive = [&](const char* key, double& out) {
    const auto it = value.find(key);
    if (it == value.end()) return;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0) {
      bad(key, *it, "a positive number");
    }
    out = it->get<double>();
  };
  count("rows", 1, 1u << 16, spec.array.rows);
  count("cols", 1, 1u << 16, spec.array.cols);
  count("arrays", 1, 1u << 16, spec.arrays);
  count("word-bytes", 1, 64, spec.word_bytes);
  count("ifmap-sram-kib", 0, 1u << 30, spec.array.ifmap_sram_kib);
  count("filter-sram-kib", 0, 1u << 30, spec.array.filter_sram_kib);
  count("ofmap-sram-kib", 0, 1u << 30, spec.array.ofmap_sram_kib);
  positive("clock-mhz", spec.clock_mhz);
  positive("dram-gb-per-s", spec.dram_gb_per_s);
  if (const auto it = value.find("dataflow"); it != value.end()) {
    const auto dataflow = it->is_string() ? compute::systolic::dataflow_of(it->get<std::string>()) : std::nullopt;
    if (!dataflow) bad("dataflow", *it, "\"os\", \"ws\" or \"is\" (output, weight or input stationary)");
    spec.array.dataflow = *dataflow;
  }
  if (const auto it = value.find("memory-stalls"); it != value.end()) {
    if (!it->is_boolean()) bad("memory-stalls", *it, "true or false");
    spec.memory_stalls = it->get<bool>();
  }
  return spec;
}

std::string systolic_json(const compute::SystolicSpec& s) {
  return fmt::format("{{\"rows\": {}, \"cols\": {}, \"arrays\": {}, \"dataflow\": \"{}\", \"clock-mhz\": {}, "
                     "\"word-bytes\": {}, "
                     "\"ifmap-sram-kib\": {}, \"filter-sram-kib\": {}, \"ofmap-sram-kib\": {}, \"dram-gb-per-s\": {}, "
                     "\"memory-stalls\": {}}}",
                     s.array.rows, s.array.cols, s.arrays, compute::systolic::dataflow_name(s.array.dataflow),
                     s.clock_mhz, s.word_bytes, s.array.ifmap_sram_kib, s.array.filter_sram_kib, s.array.ofmap_sram_kib,
                     s.dram_gb_per_s, s.memory_stalls ? "true" : "false");
}

}  // namespace chakrasim::config
