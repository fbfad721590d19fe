#include "compute/compute_model.h"

#include <algorithm>

namespace chakrasim::compute {

std::optional<Tick> ComputeModel::duration(const chakra::Graph& graph, std::uint32_t node) const {
  if (!uses_roofline(graph, node)) return replay_ns(graph.duration_micros(node));
  const chakra::OpAttrs& a = graph.attrs(node);
  if (a.tensor_size == 0) return std::nullopt;
  const double ops = static_cast<double>(a.num_ops);
  const double intensity = ops / static_cast<double>(a.tensor_size);
  const double perf = std::min(spec_.local_mem_bw_gbps * 1e9 * intensity, spec_.peak_perf_tflops * 1e12);
  if (perf <= 0) return 0;
  return static_cast<Tick>(ops / perf * 1e9);
}

}  // namespace chakrasim::compute
