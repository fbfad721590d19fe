// One layer on a systolic array, in closed form: what SCALE-sim v2 (scalesim-project/scale-sim-v2)
// reports for it in its stall-free mode (InterfaceBandwidth: CALC), without walking its cycles.
// docs/systolic.md derives every figure and lists SCALE-sim's quirks this reproduces.
//
// A layer is a convolution (ifmap H x W x channels, filters of fh x fw, strides) or a GEMM
// (M, N, K), which SCALE-sim runs as the convolution H = M, W = K, fh = 1, fw = K, one channel,
// N filters, stride 1. Either way it is M ofmap pixels x N filters x K window elements:
//   output stationary  M pixels on the rows, N filters on the columns, K in time;
//   weight stationary  K window elements on the rows, N filters on the columns, M in time;
//   input stationary   K window elements on the rows, M pixels on the columns, N in time.
// The array holds R x C of the spatial pair at once; the rest comes in folds, each as long as a
// full one (os: T + R + C - 2 cycles, ws and is: 2R + C + T - 2, T the temporal size).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace chakrasim::compute::systolic {

enum class Dataflow : std::uint8_t { kOutputStationary, kWeightStationary, kInputStationary };
// "os", "ws", "is" (SCALE-sim's spellings); nullopt for anything else.
std::optional<Dataflow> dataflow_of(const std::string& name);
const char* dataflow_name(Dataflow dataflow);

struct ArrayShape {
  std::uint64_t rows = 0;  // R (SCALE-sim's ArrayHeight)
  std::uint64_t cols = 0;  // C (ArrayWidth)
  Dataflow dataflow = Dataflow::kOutputStationary;
  // SRAM per operand in KiB of one-byte words (IfmapSramSzkB, ...): only the DRAM figures use them.
  std::uint64_t ifmap_sram_kib = 0;
  std::uint64_t filter_sram_kib = 0;
  std::uint64_t ofmap_sram_kib = 0;
};

struct Layer {
  std::string name;
  std::uint64_t ifmap_h = 0, ifmap_w = 0;
  std::uint64_t filter_h = 0, filter_w = 0;
  std::uint64_t channels = 0, filters = 0;
  std::uint64_t stride_h = 1, stride_w = 1;
  // A GEMM of M x K by K x N, as SCALE-sim lays it out.
  static Layer gemm(std::string name, std::uint64_t m, std::uint64_t n, std::uint64_t k);
};

// A layer's figures, as SCALE-sim's COMPUTE_REPORT.csv and DETAILED_ACCESS_REPORT.csv give them.
struct LayerReport {
  // The GEMM the layer is: pixels x filters x window.
  std::uint64_t m = 0, n = 0, k = 0;
  std::uint64_t row_folds = 0, col_folds = 0;
  std::uint64_t total_cycles = 0;  // the last cycle's index: folds x fold length - 1
  std::uint64_t stall_cycles = 0;  // none: the stall-free mode
  double overall_util_pct = 0;     // MACs over total cycles x R x C
  double mapping_efficiency_pct = 0;
  double compute_util_pct = 0;
  // SRAM accesses; start and stop are the first and last cycle with one (-1: none).
  std::uint64_t ifmap_sram_reads = 0, filter_sram_reads = 0, ofmap_sram_writes = 0;
  std::int64_t ifmap_sram_start = -1, ifmap_sram_stop = -1;
  std::int64_t filter_sram_start = -1, filter_sram_stop = -1;
  std::int64_t ofmap_sram_start = -1, ofmap_sram_stop = -1;
  // Words per cycle: SRAM accesses over the total cycles (0 for a layer of 0 cycles).
  double ifmap_sram_bandwidth = 0, filter_sram_bandwidth = 0, ofmap_sram_bandwidth = 0;
  // DRAM traffic, exact when the operand fits its SRAM's working half (`dram_exact`); otherwise
  // each distinct element once (SCALE-sim then refetches what its 1%-sets evict: more reads).
  bool dram_exact = true;
  std::uint64_t ifmap_dram_reads = 0, filter_dram_reads = 0, ofmap_dram_writes = 0;
  std::int64_t ifmap_dram_start = 0, ifmap_dram_stop = 0;
  std::int64_t filter_dram_start = 0, filter_dram_stop = 0;
  std::int64_t ofmap_dram_start = 0, ofmap_dram_stop = 0;
};

// The whole report. Costs O(folds) for the two averages (summed fold by fold in SCALE-sim's
// order, so that they match to the last bit) and, for the SRAM start and stop of convolutions
// whose windows overrun the ifmap, O(ofmap pixels).
LayerReport analyse_layer(const ArrayShape& array, const Layer& layer);

// The cycles alone, in O(1): what a simulation needs per compute node.
std::uint64_t layer_cycles(const ArrayShape& array, const Layer& layer);
// Its parts: the layer's cycles are folds x fold_cycles - 1.
struct LayerFolds {
  std::uint64_t folds = 0, fold_cycles = 0;
};
LayerFolds layer_folds(const ArrayShape& array, const Layer& layer);

// What a simulation reports per compute node, in O(1). The two averages are the report's in
// exact arithmetic (the report sums them fold by fold in doubles, so its last bits may differ).
struct LayerFigures {
  std::uint64_t folds = 0, fold_cycles = 0;  // the layer's cycles are folds x fold_cycles - 1
  std::uint64_t macs = 0;
  double mapping_efficiency = 0;  // fractions, not percentages
  double compute_util = 0;
  std::uint64_t ifmap_sram_reads = 0, filter_sram_reads = 0, ofmap_sram_writes = 0;
  // Distinct words of each operand (what DRAM supplies once when it fits its SRAM) and the ofmap
  // words written back to DRAM.
  std::uint64_t ifmap_words = 0, filter_words = 0, ofmap_dram_writes = 0;
};
LayerFigures layer_figures(const ArrayShape& array, const Layer& layer);

// SCALE-sim's memory-stall mode (InterfaceBandwidth USER: each SRAM filled from DRAM at
// `words_per_cycle`), approximated in O(1): the cycles the layer's DRAM traffic needs, which
// bound its total from below (docs/systolic.md derives it and measures the error). An operand
// whose operand matrix (M x K ifmap, K x N filter) fits half its SRAM costs nothing: the first
// half is filled before cycle 0 and reuse hits it. A larger one streams every SRAM read but the
// first half's. The ofmap stalls only once a half fills while the one before still drains: all
// but its last full half at the bandwidth.
double memory_bound_cycles(const ArrayShape& array, const Layer& layer, double words_per_cycle);
// A report with `stall_cycles` more: its total, overall utilisation and SRAM bandwidths follow.
void add_stall_cycles(LayerReport& report, const ArrayShape& array, std::uint64_t stall_cycles);

}  // namespace chakrasim::compute::systolic
