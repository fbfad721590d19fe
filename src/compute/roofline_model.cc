#include "compute/roofline_model.h"

#include <algorithm>

#include "core/sim_time.h"

namespace chakrasim::compute {

std::string RooflineModel::check(const chakra::Graph& graph, std::uint32_t node) const {
  if (!graph.is_cpu_op(node) && !has_inputs(graph, node)) {
    return "roofline-enabled is set, so a GPU compute node needs the attributes \"num_ops\" and \"tensor_size\"";
  }
  return {};
}

// The rate is computed as the reference computes it (bandwidth x intensity, then the minimum
// with the peak, then ops / rate x 1e9, truncated), so that every figure matches it to the ns.
std::optional<Tick> RooflineModel::duration(const chakra::Graph& graph, std::uint32_t node) const {
  if (graph.is_cpu_op(node)) return replay_ns(graph.duration_micros(node));
  const chakra::OpAttrs& a = graph.attrs(node);
  if (a.tensor_size == 0) return std::nullopt;
  const double ops = static_cast<double>(a.num_ops);
  const double intensity = ops / static_cast<double>(a.tensor_size);
  const double perf = std::min(bytes_per_s_ * intensity, peak_flops_per_s_);
  if (perf <= 0) return 0;
  return ticks_from_ns(ops / perf * 1e9, [&] {
    return fmt::format("{}: node {} (\"{}\"), {} operations at {} FLOP/s,", graph.source(), graph.id(node),
                       graph.name(node), a.num_ops, perf);
  });
}

std::optional<NodeUtilization> RooflineModel::utilization(const chakra::Graph& graph, std::uint32_t node) const {
  const chakra::OpAttrs& a = graph.attrs(node);
  if (graph.is_cpu_op(node) || a.tensor_size == 0) return std::nullopt;
  NodeUtilization u;
  u.intensity = static_cast<double>(a.num_ops) / static_cast<double>(a.tensor_size);
  const double perf = std::min(bytes_per_s_ * u.intensity, peak_flops_per_s_);
  u.compute_bound = bytes_per_s_ * u.intensity >= peak_flops_per_s_;
  u.compute = peak_flops_per_s_ > 0 ? perf / peak_flops_per_s_ : 0;
  u.memory = bytes_per_s_ > 0 && u.intensity > 0 ? perf / u.intensity / bytes_per_s_ : 0;
  return u;
}

}  // namespace chakrasim::compute
