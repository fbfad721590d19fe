#include "sim/symmetry.h"

#include "network/network.h"
#include "system/algorithms.h"
#include "workload/executor.h"

namespace chakrasim::sim {

bool is_symmetric(const Inputs& inputs) {
  // The backend must look the same from every NPU (delays depend on offsets only) and fold its
  // shared state onto NPU 0's; its row says so.
  if (!network::find_backend(inputs.backend).shift_invariant) return false;
  if (inputs.graphs.size() < 2) return false;
  // NCCL's traffic runs per member; only its cost alone folds.
  if (inputs.system.collectives == system::CollectiveModel::kNcclTraffic) return false;
  const chakra::Graph* graph = inputs.graphs.front().get();
  for (const auto& g : inputs.graphs) {
    if (g.get() != graph) return false;
  }
  bool kinds_used[system::kCollectiveKinds] = {};
  for (std::uint32_t i = 0; i < graph->size(); ++i) {
    const chakra::OpAttrs& a = graph->attrs(i);
    switch (graph->type(i)) {
      case chakra::NodeType::kComp:
      case chakra::NodeType::kInvalid: break;
      case chakra::NodeType::kMetadata:
        if (a.has(chakra::OpAttrs::kInputsValues)) return false;  // may define groups
        break;
      case chakra::NodeType::kCommColl: {
        if (workload::group_of(graph->string(a.pg_name)).value_or(1) != 0) return false;
        const auto kind = workload::collective_of(a.comm_type, inputs.system.broadcast_by_duration);
        if (kind) kinds_used[static_cast<std::size_t>(*kind)] = true;
        break;
      }
      default: return false;  // point-to-point, remote memory, unknown
    }
  }
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    if (!kinds_used[k]) continue;
    if (!inputs.system.custom_prefixes[k].empty()) return false;
    for (const system::AlgorithmChoice& c : inputs.system.implementations[k]) {
      if (!system::algorithm_info(c.kind).symmetric_safe) return false;
      if (c.one_flat && inputs.network.dims.size() > 1) return false;
    }
  }
  return true;
}

}  // namespace chakrasim::sim
