// SCALE-sim v2's own files, so that its users can run their inputs here unchanged
// (`chakrasim compute`): the architecture config (.cfg) and the topology (.csv, convolution
// or M,N,K form) in, COMPUTE_REPORT.csv and DETAILED_ACCESS_REPORT.csv out, with its column
// names and number formats. docs/systolic.md lists what is read and what is reproduced.
#pragma once

#include <string>
#include <vector>

#include "compute/systolic/systolic_layer.h"

namespace chakrasim::compute::systolic {

struct ScaleSimConfig {
  std::string run_name;
  ArrayShape array;
  bool user_bandwidth = false;  // InterfaceBandwidth: USER (a finite DRAM bandwidth: stalls, approximated)
  std::uint64_t bandwidth_words_per_cycle = 0;  // USER: [architecture_presets] Bandwidth's first value
};

// The config file's [general] run_name, [architecture_presets] ArrayHeight, ArrayWidth,
// IfmapSramSzkB, FilterSramSzkB, OfmapSramSzkB, Dataflow and [run_presets] InterfaceBandwidth
// (keys case-insensitive, "key: value" or "key = value", ';' and '#' comments). Errors name the
// file and key.
ScaleSimConfig parse_scalesim_config(const std::string& text, const std::string& source);

// The topology: a header line, then one layer per line, "name, H, W, fh, fw, channels, filters,
// stride_h[, stride_w]," or with `gemm` "name, M, N, K,". As SCALE-sim reads them, the last
// comma-separated field of a row is dropped (rows end with a comma), and a convolution named
// with "DP" (depth-wise) becomes one single-channel layer per channel (at most 65536).
std::vector<Layer> parse_scalesim_topology(const std::string& text, const std::string& source, bool gemm);

// The three reports, byte for byte as SCALE-sim writes them for its stall-free mode.
std::string compute_report_csv(const std::vector<LayerReport>& layers);
std::string detailed_access_report_csv(const std::vector<LayerReport>& layers);
std::string bandwidth_report_csv(const std::vector<LayerReport>& layers);

// A double as Python's str() writes it (shortest round trip; "100.0", "1e-05").
std::string python_float(double value);

}  // namespace chakrasim::compute::systolic
