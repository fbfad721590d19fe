// Checking a run's inputs against each other before it starts (validate), and the memory a run
// will need (estimate_memory_bytes): sim/simulation.h declares both.
#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "core/resources.h"
#include "network/topology.h"
#include "sim/simulation.h"
#include "sim/workload_options.h"
#include "system/collective_plan.h"
#include "workload/executor.h"

namespace chakrasim::sim {

// Rough sizes of the per-NPU, per-node and per-chunk state (measured orders of magnitude; the
// estimate only has to catch runs that cannot fit at all).
constexpr std::uint64_t kBytesPerNpu = 512;
constexpr std::uint64_t kBytesPerGraphNode = 96;  // a parsed node, once per distinct trace
constexpr std::uint64_t kBytesPerRankNode = 8;    // countdown and state, per NPU and node
constexpr std::uint64_t kBytesPerChunk = 256;     // a stream, its queue entry and messages

std::uint64_t network_state_bytes(std::uint64_t npus) { return npus * kBytesPerNpu; }

namespace {

// The chunk count of the largest collective: every chunk is a stream alive at once. Chunks
// smaller than one byte per NPU are inflated to that size (all but all-gather), so their count
// is the split count however small the collective.
std::uint64_t largest_collective_chunks(const Inputs& inputs) {
  const std::uint64_t splits = std::max<std::uint64_t>(1, inputs.system.preferred_dataset_splits);
  std::set<const chakra::Graph*> seen;
  std::uint64_t max_chunks = 0;
  for (const auto& g : inputs.graphs) {
    if (!seen.insert(g.get()).second) continue;
    for (std::uint32_t i = 0; i < g->size(); ++i) {
      if (g->type(i) != chakra::NodeType::kCommColl) continue;
      const chakra::OpAttrs& a = g->attrs(i);
      const bool all_gather = a.comm_type == static_cast<std::int64_t>(chakra::CommType::kAllGather);
      max_chunks = std::max(max_chunks, all_gather ? std::min(splits + 1, a.comm_size + 1) : splits + 1);
    }
  }
  return max_chunks;
}

}  // namespace

std::uint64_t estimate_memory_bytes(const Inputs& inputs) {
  std::uint64_t npus = inputs.graphs.size();
  std::uint64_t bytes = network_state_bytes(npus);
  std::set<const chakra::Graph*> seen;
  for (const auto& g : inputs.graphs) {
    bytes += static_cast<std::uint64_t>(g->size()) * kBytesPerRankNode;
    if (seen.insert(g.get()).second) bytes += static_cast<std::uint64_t>(g->size()) * kBytesPerGraphNode;
  }
  // In doubles: 2^32 splits x 2^31 NPUs x 256 bytes would wrap 64 bits.
  const double total = static_cast<double>(bytes) + static_cast<double>(largest_collective_chunks(inputs)) *
                                                        static_cast<double>(npus) * static_cast<double>(kBytesPerChunk);
  return total >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(total);
}

namespace {

// The run's inputs agree with each other in size: one trace per NPU, at most one algorithm per
// network dimension, one custom-algorithm ET per NPU.
void validate_sizes(const Inputs& inputs) {
  const network::Topology topology(inputs.network);
  if (inputs.graphs.size() != topology.npu_count()) {
    fail("the workload has {} rank files but the network has {} NPUs; expected one trace per NPU", inputs.graphs.size(),
         topology.npu_count());
  }
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    const auto& list = inputs.system.implementations[k];
    if (!list.empty() && !list.front().one_flat && list.size() > topology.dims()) {
      fail("{}: key \"{}-implementation\" lists {} algorithms but the network has {} dimensions; expected "
           "at most one per dimension",
           inputs.system_source, system::collective_name(static_cast<system::CollectiveKind>(k)), list.size(),
           topology.dims());
    }
  }
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    const std::string& prefix = inputs.system.custom_prefixes[k];
    if (!prefix.empty() && inputs.custom_algorithms[k].size() != inputs.graphs.size()) {
      fail("{}: the custom {} \"{}\" has {} algorithm ETs; expected one per NPU ({})", inputs.system_source,
           system::collective_name(static_cast<system::CollectiveKind>(k)), prefix, inputs.custom_algorithms[k].size(),
           inputs.graphs.size());
    }
  }
}

// A communicator group a graph's collective names (the first node naming it).
struct GroupUse {
  const chakra::Graph* graph;
  std::uint32_t node;
  std::uint32_t key;
};
using GroupUses = std::map<const chakra::Graph*, std::vector<GroupUse>>;

// One distinct graph: its collectives all have an implementation, and the groups it names are
// recorded in `group_uses` unless the graph defines its own at run time.
void validate_collectives(const Inputs& inputs, const chakra::Graph& g, GroupUses& group_uses) {
  bool defines_groups = false;
  for (std::uint32_t i = 0; i < g.size(); ++i) defines_groups |= g.attrs(i).has(chakra::OpAttrs::kInputsValues);
  std::set<std::uint32_t> keys;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    if (g.type(i) != chakra::NodeType::kCommColl) continue;
    const chakra::OpAttrs& a = g.attrs(i);
    const auto kind = workload::collective_of(a.comm_type, inputs.system.broadcast_by_duration);
    if (!kind) continue;
    if (inputs.system.implementations[static_cast<std::size_t>(*kind)].empty() &&
        inputs.system.custom_prefixes[static_cast<std::size_t>(*kind)].empty()) {
      fail("{}: node {} (\"{}\") runs a collective of type {}, but {} has no \"{}-implementation\"; expected a "
           "list of algorithms such as [\"ring\"]",
           g.source(), g.id(i), g.name(i), chakra::comm_type_name(a.comm_type), inputs.system_source,
           system::collective_name(*kind));
    }
    const std::uint32_t key = workload::group_of(g.string(a.pg_name)).value_or(0);
    if (key != 0 && !defines_groups && keys.insert(key).second) group_uses[&g].push_back({&g, i, key});
  }
}

// Every group a rank's trace names exists in the group file and includes that rank.
void validate_group_membership(const Inputs& inputs, const GroupUses& group_uses) {
  std::map<std::uint32_t, std::vector<NpuId>> sorted_groups;
  for (const auto& [key, members] : inputs.groups) {
    auto& sorted = sorted_groups[key];
    sorted = members;
    std::sort(sorted.begin(), sorted.end());
  }
  for (NpuId r = 0; r < inputs.graphs.size(); ++r) {
    auto uses = group_uses.find(inputs.graphs[r].get());
    if (uses == group_uses.end()) continue;
    for (const GroupUse& u : uses->second) {
      const chakra::Graph& g = *u.graph;
      auto group = sorted_groups.find(u.key);
      if (group == sorted_groups.end()) {
        fail("{}: node {} (\"{}\"): pg_name \"{}\" names communicator group {}, which {}; expected a group of "
             "the --comm-groups file (or a process-group METADATA node)",
             g.source(), g.id(u.node), g.name(u.node), g.string(g.attrs(u.node).pg_name), u.key,
             inputs.groups.empty() ? std::string("is not defined: the run has no --comm-groups file")
                                   : fmt::format("{} does not define", inputs.groups_source));
      }
      if (!std::binary_search(group->second.begin(), group->second.end(), r)) {
        fail("{}: node {} (\"{}\") on NPU {}: pg_name \"{}\" names communicator group {} of {}, which does not "
             "include NPU {}; expected the group to list every NPU that runs its collectives",
             g.source(), g.id(u.node), g.name(u.node), r, g.string(g.attrs(u.node).pg_name), u.key,
             inputs.groups_source, r);
      }
    }
  }
}

}  // namespace

void validate(const Inputs& inputs) {
  validate_sizes(inputs);
  // The split count alone can exceed any machine (4e9 chunks of one all-reduce): say so by name.
  const std::uint64_t chunks = largest_collective_chunks(inputs);
  require_memory(chunks * kBytesPerChunk,
                 fmt::format("{}: \"preferred-dataset-splits\" {}: the largest collective in {} chunks (one NPU's "
                             "share)",
                             inputs.system_source, inputs.system.preferred_dataset_splits, chunks));
  require_memory(estimate_memory_bytes(inputs), fmt::format("simulating {} NPUs", inputs.graphs.size()));
  const workload::WorkloadOptions options = workload_options(inputs);
  // Each distinct graph once: ranks sharing a trace share its checks.
  GroupUses group_uses;
  std::set<const chakra::Graph*> seen;
  for (const auto& g : inputs.graphs) {
    if (!seen.insert(g.get()).second) continue;
    workload::validate(*g, options);
    if (!inputs.replay_only) validate_collectives(inputs, *g, group_uses);
  }
  if (!group_uses.empty()) validate_group_membership(inputs, group_uses);
}

}  // namespace chakrasim::sim
