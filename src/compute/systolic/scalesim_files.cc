#include "compute/systolic/scalesim_files.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "core/parse_number.h"

namespace chakrasim::compute::systolic {
namespace {

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])) != 0) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])) != 0) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    if (end == text.size()) break;
    at = end + 1;
  }
  return lines;
}

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (;;) {
    const std::size_t end = s.find(by, at);
    parts.push_back(s.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) return parts;
    at = end + 1;
  }
}

std::uint64_t number(const std::string& text, const std::string& where) {
  const std::string t = trim(text);
  const auto v = parse_number<std::uint64_t>(t);
  if (!v) fail("{}: \"{}\" is not a whole number; expected one", where, t);
  return *v;
}

}  // namespace

ScaleSimConfig parse_scalesim_config(const std::string& text, const std::string& source) {
  // section -> key (lower case) -> value, as Python's configparser reads them.
  std::map<std::string, std::map<std::string, std::string>> sections;
  std::string section;
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') fail("{}: line {}: \"{}\" opens a section without closing it", source, i + 1, line);
      section = trim(std::string_view(line).substr(1, line.size() - 2));
      sections[section];
      continue;
    }
    const std::size_t sep = line.find_first_of(":=");
    if (sep == std::string::npos || section.empty()) {
      fail("{}: line {}: \"{}\" is neither a [section] nor a key: value line in one", source, i + 1, line);
    }
    sections[section][lower(trim(std::string_view(line).substr(0, sep)))] =
        trim(std::string_view(line).substr(sep + 1));
  }
  auto get = [&](const std::string& sec, const std::string& key) -> const std::string& {
    const auto s = sections.find(sec);
    if (s == sections.end()) fail("{}: no [{}] section; expected one with the key {}", source, sec, key);
    const auto v = s->second.find(lower(key));
    if (v == s->second.end()) fail("{}: [{}] has no key {}", source, sec, key);
    return v->second;
  };
  ScaleSimConfig cfg;
  cfg.run_name = get("general", "run_name");
  const std::string mode = get("run_presets", "InterfaceBandwidth");
  if (mode != "CALC" && mode != "USER") {
    fail("{}: [run_presets] InterfaceBandwidth is \"{}\"; expected CALC or USER", source, mode);
  }
  cfg.user_bandwidth = mode == "USER";
  const std::string arch = "architecture_presets";
  auto key = [&](const char* k) { return number(get(arch, k), fmt::format("{}: [{}] {}", source, arch, k)); };
  if (cfg.user_bandwidth) {  // SCALE-sim uses the first of a comma-separated list
    const std::string& list = get(arch, "Bandwidth");
    cfg.bandwidth_words_per_cycle =
        number(trim(std::string_view(list).substr(0, list.find(','))), fmt::format("{}: [{}] Bandwidth", source, arch));
    if (cfg.bandwidth_words_per_cycle == 0) {
      fail("{}: [{}] Bandwidth is 0; expected at least 1 word per cycle for InterfaceBandwidth USER", source, arch);
    }
  }
  cfg.array.rows = key("ArrayHeight");
  cfg.array.cols = key("ArrayWidth");
  cfg.array.ifmap_sram_kib = key("IfmapSramSzkB");
  cfg.array.filter_sram_kib = key("FilterSramSzkB");
  cfg.array.ofmap_sram_kib = key("OfmapSramSzkB");
  if (cfg.array.rows == 0 || cfg.array.cols == 0) {
    fail("{}: [{}] ArrayHeight {} x ArrayWidth {}: expected at least one row and column", source, arch, cfg.array.rows,
         cfg.array.cols);
  }
  const std::string flow = get(arch, "Dataflow");
  const auto dataflow = dataflow_of(flow);
  if (!dataflow) fail("{}: [{}] Dataflow is \"{}\"; expected os, ws or is", source, arch, flow);
  cfg.array.dataflow = *dataflow;
  return cfg;
}

std::vector<Layer> parse_scalesim_topology(const std::string& text, const std::string& source, bool gemm) {
  std::vector<Layer> layers;
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = 1; i < lines.size(); ++i) {  // the first line is a header, whatever it holds
    const std::string row = trim(lines[i]);
    if (row.empty()) continue;
    std::vector<std::string> fields = split(row, ',');
    fields.pop_back();  // SCALE-sim drops the last field: rows end with a comma
    const std::string where = fmt::format("{}: line {}", source, i + 1);
    const std::size_t needed = gemm ? 4 : 8;
    if (fields.size() < needed) {
      fail("{}: \"{}\" has {} fields before its last comma; expected {} ({}), each row ending with a comma", where, row,
           fields.size(), needed,
           gemm ? "name, M, N, K"
                : "name, ifmap height, ifmap width, filter height, filter width, channels, filters, "
                  "stride");
    }
    const std::string name = trim(fields[0]);
    if (gemm) {
      layers.push_back(Layer::gemm(name, number(fields[1], where + " M"), number(fields[2], where + " N"),
                                   number(fields[3], where + " K")));
      continue;
    }
    Layer l;
    l.name = name;
    l.ifmap_h = number(fields[1], where + " ifmap height");
    l.ifmap_w = number(fields[2], where + " ifmap width");
    l.filter_h = number(fields[3], where + " filter height");
    l.filter_w = number(fields[4], where + " filter width");
    l.channels = number(fields[5], where + " channels");
    l.filters = number(fields[6], where + " filters");
    l.stride_h = number(fields[7], where + " stride");
    l.stride_w = fields.size() > 8 ? number(fields[8], where + " horizontal stride") : l.stride_h;
    if (l.filter_h > l.ifmap_h || l.filter_w > l.ifmap_w) {
      fail("{}: layer \"{}\": a {} x {} filter on a {} x {} ifmap; expected a filter no larger than the ifmap", where,
           name, l.filter_h, l.filter_w, l.ifmap_h, l.ifmap_w);
    }
    if (name.find("DP") != std::string::npos) {  // depth-wise: one layer per channel
      const std::uint64_t channels = l.channels;
      constexpr std::uint64_t kMaxDepthwiseLayers = 1 << 16;
      if (channels > kMaxDepthwiseLayers) {
        fail("{}: layer \"{}\" is depth-wise (its name has DP), so each of its {} channels becomes a layer; expected "
             "at most {}",
             where, name, channels, kMaxDepthwiseLayers);
      }
      for (std::uint64_t c = 0; c < channels; ++c) {
        Layer one = l;
        one.name = fmt::format("{}Channel_{}", name, c);
        one.channels = 1;
        layers.push_back(one);
      }
      continue;
    }
    layers.push_back(l);
  }
  return layers;
}

std::string python_float(double value) {
  std::string s = fmt::format("{}", value);
  if (s.find_first_of(".einf") == std::string::npos) s += ".0";
  return s;
}

std::string compute_report_csv(const std::vector<LayerReport>& layers) {
  std::string out = "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerReport& l = layers[i];
    out += fmt::format("{}, {}, {}, {}, {}, {},\n", i, l.total_cycles, l.stall_cycles, python_float(l.overall_util_pct),
                       python_float(l.mapping_efficiency_pct), python_float(l.compute_util_pct));
  }
  return out;
}

std::string detailed_access_report_csv(const std::vector<LayerReport>& layers) {
  std::string out =
      "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, SRAM Filter Start Cycle, SRAM Filter "
      "Stop Cycle, SRAM Filter Reads, SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, DRAM IFMAP "
      "Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM "
      "Filter Reads, DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,\n";
  // Start and stop cycles are floats in SCALE-sim's report ("1.0").
  auto cycle = [](std::int64_t c) { return python_float(static_cast<double>(c)); };
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerReport& l = layers[i];
    out +=
        fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {},\n", i,
                    cycle(l.ifmap_sram_start), cycle(l.ifmap_sram_stop), l.ifmap_sram_reads, cycle(l.filter_sram_start),
                    cycle(l.filter_sram_stop), l.filter_sram_reads, cycle(l.ofmap_sram_start), cycle(l.ofmap_sram_stop),
                    l.ofmap_sram_writes, cycle(l.ifmap_dram_start), cycle(l.ifmap_dram_stop), l.ifmap_dram_reads,
                    cycle(l.filter_dram_start), cycle(l.filter_dram_stop), l.filter_dram_reads,
                    cycle(l.ofmap_dram_start), cycle(l.ofmap_dram_stop), l.ofmap_dram_writes);
  }
  return out;
}

std::string bandwidth_report_csv(const std::vector<LayerReport>& layers) {
  std::string out = "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER "
                    "DRAM BW, Avg "
                    "OFMAP DRAM BW,\n";
  // DRAM: words over the cycles from start to stop, in doubles as SCALE-sim's numpy does it.
  auto dram = [](std::uint64_t words, std::int64_t start, std::int64_t stop) {
    return python_float(static_cast<double>(words) / (static_cast<double>(stop) - static_cast<double>(start) + 1.0));
  };
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LayerReport& l = layers[i];
    out += fmt::format("{}, {}, {}, {}, {}, {}, {},\n", i, python_float(l.ifmap_sram_bandwidth),
                       python_float(l.filter_sram_bandwidth), python_float(l.ofmap_sram_bandwidth),
                       dram(l.ifmap_dram_reads, l.ifmap_dram_start, l.ifmap_dram_stop),
                       dram(l.filter_dram_reads, l.filter_dram_start, l.filter_dram_stop),
                       dram(l.ofmap_dram_writes, l.ofmap_dram_start, l.ofmap_dram_stop));
  }
  return out;
}

}  // namespace chakrasim::compute::systolic
