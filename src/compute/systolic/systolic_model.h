// The systolic compute model: a compute node that carries its operation's shape (chakra/op_shape.h)
// runs on a chip of systolic arrays for the cycles SCALE-sim v2 counts for it in its stall-free
// mode (systolic_layer.h), at the chip's clock. Its `count` GEMMs' folds are shared among the
// chip's arrays, each array taking whole folds: ceil(count x folds / arrays) x fold cycles - 1.
// With memory stalls on, a node takes at least the cycles SCALE-sim's USER mode would stall for
// with every SRAM filled at the DRAM bandwidth (approximated: systolic_layer.h's
// memory_bound_cycles; docs/systolic.md measures its error). GPU nodes without
// a shape fall back to the roofline (peak-perf, else the arrays' peak; local-mem-bw, else the
// DRAM bandwidth), or without num_ops and tensor_size to their recorded durations (a converted
// PyTorch trace's element-wise kernels); CPU nodes keep their recorded durations. It ignores the vector unit,
// transposes and layout changes, and overlap between nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compute/compute_model.h"
#include "compute/roofline_model.h"

namespace chakrasim::compute {

class SystolicModel final : public ComputeModel {
 public:
  explicit SystolicModel(const ComputeSpec& spec);

  std::string check(const chakra::Graph& graph, std::uint32_t node) const override;
  std::optional<Tick> duration(const chakra::Graph& graph, std::uint32_t node) const override;
  std::optional<NodeUtilization> utilization(const chakra::Graph& graph, std::uint32_t node) const override;
  bool reports_utilization() const override { return true; }
  std::optional<NodeFigures> figures(const chakra::Graph& graph, std::uint32_t node) const override;
  bool reports_figures() const override { return true; }
  bool falls_back(const chakra::Graph& graph, std::uint32_t node) const override;
  const char* fallback_name() const override {
    return "roofline (or, without num_ops and tensor_size, their recorded duration)";
  }

 private:
  struct Timing {
    std::uint64_t compute_cycles = 0, cycles = 0;
    double macs = 0;               // of all `count` GEMMs (a double: it may pass 64 bits)
    systolic::LayerFigures layer;  // of one of the node's `count` GEMMs
    std::uint64_t count = 1;
    std::uint64_t dram_read_words = 0, dram_write_words = 0;
  };
  Timing timing(const chakra::OpShape& shape) const;
  std::uint64_t compute_cycles(const systolic::LayerFolds& folds, std::uint64_t count) const;
  std::uint64_t cycles_ns(std::uint64_t cycles) const;

  SystolicSpec spec_;
  RooflineModel fallback_;
  // check()'s verdict per shape of the graph it last checked (the contract calls it for the
  // nodes of one graph after another, on one thread).
  mutable const chakra::Graph* checked_graph_ = nullptr;
  mutable std::vector<std::optional<std::string>> verdicts_;
};

}  // namespace chakrasim::compute
