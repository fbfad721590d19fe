#include "sim/time_splitter.h"

#include <algorithm>

#include <fmt/format.h>

namespace chakrasim::sim {
namespace {

// The dimensions in which a group's members differ, e.g. "dim 0" or "dims 0-1" or "dims 0, 2".
std::string differing_dims(const std::vector<NpuId>& members, const network::Topology& topology) {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < topology.dims(); ++d) {
    const std::uint32_t first = topology.coordinate(members.front(), d);
    for (const NpuId m : members) {
      if (topology.coordinate(m, d) != first) {
        dims.push_back(d);
        break;
      }
    }
  }
  if (dims.empty()) return "one NPU";
  if (dims.size() == 1) return fmt::format("dim {}", dims.front());
  if (dims.back() - dims.front() + 1 == dims.size()) return fmt::format("dims {}-{}", dims.front(), dims.back());
  return fmt::format("dims {}", fmt::join(dims, ", "));
}

}  // namespace

GroupKinds::GroupKinds(const system::CommGroups& groups, const std::map<std::uint32_t, std::string>& names,
                       const network::Topology& topology) {
  // Named kinds first, in the order of their groups' ids, then shapes, then the world group.
  for (const auto& [id, members] : groups) {
    if (const auto name = names.find(id); name != names.end()) kind_of_group_[id] = intern(name->second);
  }
  for (const auto& [id, members] : groups) {
    if (kind_of_group_.count(id) != 0 || members.empty()) continue;
    kind_of_group_[id] = intern(fmt::format("{}-NPU groups, {}", members.size(), differing_dims(members, topology)));
  }
  world_ = intern("all NPUs");
  other_ = intern("other groups");
}

std::uint16_t GroupKinds::intern(const std::string& label) {
  const auto at = std::find(labels_.begin(), labels_.end(), label);
  if (at != labels_.end()) return static_cast<std::uint16_t>(at - labels_.begin());
  labels_.push_back(label);
  return static_cast<std::uint16_t>(labels_.size() - 1);
}

std::uint16_t GroupKinds::kind_of(std::uint32_t group) const {
  if (group == 0) return world_;
  const auto it = kind_of_group_.find(group);
  return it == kind_of_group_.end() ? other_ : it->second;
}

TimeSplitter::TimeSplitter(std::vector<const chakra::Graph*> graphs, const GroupKinds& kinds,
                           workload::NodeObserver* next)
    : graphs_(std::move(graphs)), kinds_(kinds), next_(next), npus_(graphs_.size()) {
  for (Running& r : npus_) {
    r.collectives_of_kind.assign(kinds.labels().size(), 0);
    r.split.by_group_kind_ns.assign(kinds.labels().size(), 0);
  }
}

TimeSplitter::Part TimeSplitter::part_of(const chakra::Graph& graph, std::uint32_t node, std::uint16_t& kind) const {
  switch (graph.type(node)) {
    case chakra::NodeType::kComp: return kCompute;
    case chakra::NodeType::kCommColl: {
      const std::uint32_t group =
          graph.has_attrs(node) ? workload::group_of(graph.string(graph.attrs(node).pg_name)).value_or(0) : 0;
      kind = kinds_.kind_of(group);
      return kCollective;
    }
    case chakra::NodeType::kCommSend:
    case chakra::NodeType::kCommRecv: return kP2p;
    case chakra::NodeType::kMemLoad:
    case chakra::NodeType::kMemStore: return kMemory;
    default: return kOther;
  }
}

void TimeSplitter::charge(Running& r, Tick until_ns) {
  if (until_ns <= r.since_ns) return;
  const Tick span = until_ns - r.since_ns;
  r.since_ns = until_ns;
  TimeSplit& s = r.split;
  if (r.count[kCompute] > 0) {
    s.compute_ns += span;
  } else if (r.count[kCollective] > 0) {
    s.collective_ns += span;
    const auto kind =
        std::find_if(r.collectives_of_kind.begin(), r.collectives_of_kind.end(), [](std::uint32_t n) { return n > 0; });
    s.by_group_kind_ns[static_cast<std::size_t>(kind - r.collectives_of_kind.begin())] += span;
  } else if (r.count[kP2p] > 0) {
    s.p2p_wait_ns += span;
  } else if (r.count[kMemory] > 0) {
    s.memory_ns += span;
  } else {
    s.idle_ns += span;
  }
}

void TimeSplitter::step(NpuId npu, std::uint32_t node, Tick now, int delta) {
  Running& r = npus_[npu];
  charge(r, now);
  const chakra::Graph& graph = *graphs_[npu];
  std::uint16_t kind = 0;
  const Part part = part_of(graph, node, kind);
  if (part == kOther) return;
  r.count[part] += static_cast<std::uint32_t>(delta);
  if (part == kCollective) r.collectives_of_kind[kind] += static_cast<std::uint32_t>(delta);
  if (part == kCompute && delta < 0 && graph.has_attrs(node) && !graph.is_cpu_op(node)) {
    r.split.model_flops += static_cast<double>(graph.attrs(node).num_ops);
  }
}

void TimeSplitter::on_node_start(NpuId npu, std::uint32_t node, Tick now) {
  step(npu, node, now, +1);
  if (next_ != nullptr) next_->on_node_start(npu, node, now);
}

void TimeSplitter::on_node_end(NpuId npu, std::uint32_t node, Tick now) {
  step(npu, node, now, -1);
  if (next_ != nullptr) next_->on_node_end(npu, node, now);
}

TimeSplit TimeSplitter::split(NpuId npu, Tick finish_ns) const {
  Running r = npus_[npu];
  charge(r, finish_ns);
  return r.split;
}

}  // namespace chakrasim::sim
