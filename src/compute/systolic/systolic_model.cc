#include "compute/systolic/systolic_model.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/sim_time.h"

namespace chakrasim::compute {
namespace {

// The roofline that times nodes without a shape: the user's peak-perf and local-mem-bw where
// given, else the arrays' peak and the DRAM bandwidth.
ComputeSpec fallback_spec(const ComputeSpec& spec) {
  ComputeSpec r = spec;
  if (r.peak_perf_tflops <= 0) r.peak_perf_tflops = spec.systolic.peak_tflops();
  if (r.local_mem_bw_gb_per_s <= 0) r.local_mem_bw_gb_per_s = spec.systolic.dram_gb_per_s;
  return r;
}

// The node's layer as SCALE-sim would run it: a forward convolution of one image as the
// convolution itself (its SRAM and DRAM figures depend on the windows), anything else as its GEMM.
systolic::Layer layer_of(const chakra::OpShape& shape) {
  const std::array<std::uint64_t, 9>& d = shape.dims;
  if (shape.kind == chakra::OpShape::Kind::kConv && shape.pass == chakra::OpShape::Pass::kForward && d[8] == 1) {
    return systolic::Layer{"", d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]};
  }
  const chakra::OpShape::Gemm g = shape.gemm();
  return systolic::Layer::gemm("", g.m, g.n, g.k);
}

// a x b, or the largest count when it would pass 64 bits: a figure of 2^64 bytes says "too many"
// rather than wrapping round to a small one. (A node's cycles are refused past 2^62; its traffic,
// up to rows + columns times that, is only reported.)
std::uint64_t saturating(std::uint64_t a, std::uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

}  // namespace

SystolicModel::SystolicModel(const ComputeSpec& spec) : spec_(spec.systolic), fallback_(fallback_spec(spec)) {}

SystolicModel::Timing SystolicModel::timing(const chakra::OpShape& shape) const {
  Timing t;
  const systolic::Layer layer = layer_of(shape);
  t.layer = systolic::layer_figures(spec_.array, layer);
  t.count = shape.gemm().count;
  t.compute_cycles = compute_cycles({t.layer.folds, t.layer.fold_cycles}, t.count);
  t.macs = static_cast<double>(t.count) * static_cast<double>(t.layer.macs);
  // An operand that fits its SRAM's working half comes from DRAM once; one that does not is
  // fetched again for every SRAM read (no reuse survives the eviction).
  auto from_dram = [&](std::uint64_t distinct, std::uint64_t sram_reads, std::uint64_t sram_kib) {
    const std::uint64_t half_words = sram_kib * 1024 / spec_.word_bytes / 2;
    return distinct <= half_words ? distinct : sram_reads;
  };
  t.dram_read_words =
      saturating(t.count, from_dram(t.layer.ifmap_words, t.layer.ifmap_sram_reads, spec_.array.ifmap_sram_kib) +
                              from_dram(t.layer.filter_words, t.layer.filter_sram_reads, spec_.array.filter_sram_kib));
  t.dram_write_words = saturating(t.count, t.layer.ofmap_dram_writes);
  t.cycles = t.compute_cycles;
  if (spec_.memory_stalls) {
    // SCALE-sim's USER mode, approximated (systolic_layer.h), with each SRAM filled at the DRAM
    // bandwidth; the node's GEMMs share it, one after another.
    systolic::ArrayShape in_words = spec_.array;  // SCALE-sim counts SRAM in KiB of one-word entries
    for (std::uint64_t* kib : {&in_words.ifmap_sram_kib, &in_words.filter_sram_kib, &in_words.ofmap_sram_kib}) {
      *kib /= spec_.word_bytes;
    }
    const double words_per_cycle =
        spec_.dram_gb_per_s * 1e9 / (spec_.clock_mhz * 1e6) / static_cast<double>(spec_.word_bytes);
    const double memory =
        static_cast<double>(t.count) * systolic::memory_bound_cycles(in_words, layer, words_per_cycle);
    if (!(memory < 0x1p62)) {
      fail("{} GEMMs wait {} cycles for DRAM at {} GB/s; expected fewer than 2^62 cycles", t.count, memory,
           spec_.dram_gb_per_s);
    }
    t.cycles = std::max(t.cycles, static_cast<std::uint64_t>(std::ceil(memory)));
  }
  return t;
}

// Whole folds per array; one GEMM on one array is SCALE-sim's count exactly.
std::uint64_t SystolicModel::compute_cycles(const systolic::LayerFolds& folds, std::uint64_t count) const {
  __extension__ typedef unsigned __int128 u128;  // count x folds x fold cycles may pass 64 bits
  const u128 rounds = (u128{count} * folds.folds + spec_.arrays - 1) / spec_.arrays;
  const u128 cycles = rounds * folds.fold_cycles - 1;
  if (cycles >> 62 != 0) {
    fail("{} GEMMs of {} folds of {} cycles are too many; expected fewer than 2^62 cycles", count, folds.folds,
         folds.fold_cycles);
  }
  return static_cast<std::uint64_t>(cycles);
}

std::uint64_t SystolicModel::cycles_ns(std::uint64_t cycles) const {
  return ticks_from_ns(std::ceil(static_cast<double>(cycles) * 1e3 / spec_.clock_mhz),
                       [&] { return fmt::format("{} cycles at {} MHz", cycles, spec_.clock_mhz); });
}

std::string SystolicModel::check(const chakra::Graph& graph, std::uint32_t node) const {
  if (graph.is_cpu_op(node)) return {};
  const chakra::OpShape* shape = graph.op_shape(node);
  if (shape == nullptr) return {};
  // Each distinct shape of a graph once: a graph keeps one table entry per shape, and ranks have
  // thousands of nodes of a few dozen shapes.
  if (&graph != checked_graph_) {
    checked_graph_ = &graph;
    verdicts_.clear();
  }
  const std::uint32_t index = graph.attrs(node).shape;
  if (index >= verdicts_.size()) verdicts_.resize(index + 1);
  std::optional<std::string>& verdict = verdicts_[index];
  if (!verdict) {
    verdict.emplace();
    try {
      cycles_ns(timing(*shape).cycles);
    } catch (const Error& e) {
      *verdict = fmt::format("{}: {}", shape->describe(), e.what());
    }
  }
  return *verdict;
}

std::optional<Tick> SystolicModel::duration(const chakra::Graph& graph, std::uint32_t node) const {
  if (graph.is_cpu_op(node)) return replay_ns(graph.duration_micros(node));
  const chakra::OpShape* shape = graph.op_shape(node);
  if (shape == nullptr) {
    if (!RooflineModel::has_inputs(graph, node)) return replay_ns(graph.duration_micros(node));
    return fallback_.duration(graph, node);
  }
  if (spec_.memory_stalls) return cycles_ns(timing(*shape).cycles);
  // The folds alone: the figures (SRAM and DRAM counts, averages) are for the reports.
  const systolic::LayerFolds f = systolic::layer_folds(spec_.array, layer_of(*shape));
  return cycles_ns(compute_cycles(f, shape->gemm().count));
}

bool SystolicModel::falls_back(const chakra::Graph& graph, std::uint32_t node) const {
  return !graph.is_cpu_op(node) && graph.op_shape(node) == nullptr;
}

std::optional<NodeUtilization> SystolicModel::utilization(const chakra::Graph& graph, std::uint32_t node) const {
  if (graph.is_cpu_op(node)) return std::nullopt;
  const chakra::OpShape* shape = graph.op_shape(node);
  if (shape == nullptr) {
    if (!RooflineModel::has_inputs(graph, node)) return std::nullopt;
    return fallback_.utilization(graph, node);
  }
  const Timing t = timing(*shape);
  NodeUtilization u;
  const double units = static_cast<double>(spec_.array.rows * spec_.array.cols * spec_.arrays);
  const double cycles = static_cast<double>(std::max<std::uint64_t>(t.cycles, 1));
  const double bytes = (static_cast<double>(t.dram_read_words) + static_cast<double>(t.dram_write_words)) *
                       static_cast<double>(spec_.word_bytes);
  const double bytes_per_cycle = spec_.dram_gb_per_s * 1e9 / (spec_.clock_mhz * 1e6);
  u.compute = t.macs / (cycles * units);
  u.memory = bytes_per_cycle > 0 ? bytes / (cycles * bytes_per_cycle) : 0;
  u.intensity = bytes > 0 ? 2.0 * t.macs / bytes : 0;
  u.compute_bound = t.cycles == t.compute_cycles;
  return u;
}

std::optional<NodeFigures> SystolicModel::figures(const chakra::Graph& graph, std::uint32_t node) const {
  if (graph.is_cpu_op(node)) return std::nullopt;
  const chakra::OpShape* shape = graph.op_shape(node);
  if (shape == nullptr) return std::nullopt;
  const Timing t = timing(*shape);
  NodeFigures f;
  f.shape = shape->describe();
  f.cycles = t.cycles;
  f.stall_cycles = t.cycles - t.compute_cycles;
  const double units = static_cast<double>(spec_.array.rows * spec_.array.cols * spec_.arrays);
  f.compute_util = t.macs / (static_cast<double>(std::max<std::uint64_t>(t.cycles, 1)) * units);
  f.mapping_efficiency = t.layer.mapping_efficiency;
  const std::uint64_t w = spec_.word_bytes;
  f.sram_read_bytes = saturating(saturating(t.count, t.layer.ifmap_sram_reads + t.layer.filter_sram_reads), w);
  f.sram_write_bytes = saturating(saturating(t.count, t.layer.ofmap_sram_writes), w);
  f.dram_read_bytes = saturating(t.dram_read_words, w);
  f.dram_write_bytes = saturating(t.dram_write_words, w);
  return f;
}

}  // namespace chakrasim::compute
