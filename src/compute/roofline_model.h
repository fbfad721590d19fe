// The roofline compute model (ASTRA-sim's, docs/compute.md): a GPU compute node runs at
// min(peak FLOP/s, memory bandwidth x operation intensity), where the intensity is num_ops over
// tensor_size; its time is floor(num_ops / that rate) ns, and a node with tensor_size 0 takes
// no time at all. CPU nodes keep their recorded durations. One roofline serves every NPU; it
// ignores caches, kernel launch and overlap between kernels.
#pragma once

#include "compute/compute_model.h"

namespace chakrasim::compute {

class RooflineModel final : public ComputeModel {
 public:
  explicit RooflineModel(const ComputeSpec& spec)
      : peak_flops_per_s_(spec.peak_perf_tflops * 1e12), bytes_per_s_(spec.local_mem_bw_gb_per_s * 1e9) {}

  // Whether a GPU compute node carries what the roofline needs: num_ops and tensor_size.
  static bool has_inputs(const chakra::Graph& graph, std::uint32_t node) {
    const chakra::OpAttrs& a = graph.attrs(node);
    return a.has(chakra::OpAttrs::kNumOps) && a.has(chakra::OpAttrs::kTensorSize);
  }

  std::string check(const chakra::Graph& graph, std::uint32_t node) const override;
  std::optional<Tick> duration(const chakra::Graph& graph, std::uint32_t node) const override;
  std::optional<NodeUtilization> utilization(const chakra::Graph& graph, std::uint32_t node) const override;
  bool reports_utilization() const override { return true; }

 private:
  double peak_flops_per_s_;
  double bytes_per_s_;
};

}  // namespace chakrasim::compute
