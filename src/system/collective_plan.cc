#include "system/collective_plan.h"

#include <fmt/format.h>

#include "core/error.h"
#include "system/algorithms.h"

namespace chakrasim::system {

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all-reduce";
    case CollectiveKind::kAllGather: return "all-gather";
    case CollectiveKind::kReduceScatter: return "reduce-scatter";
    case CollectiveKind::kAllToAll: return "all-to-all";
  }
  return "?";
}

const char* algorithm_name(AlgorithmKind kind) { return algorithm_info(kind).token; }

std::uint64_t phase_output_bytes(CollectiveKind kind, std::uint64_t bytes, std::uint32_t ring_size) {
  switch (kind) {
    case CollectiveKind::kReduceScatter: return bytes / ring_size;
    case CollectiveKind::kAllGather: return bytes * ring_size;
    default: return bytes;
  }
}

std::uint64_t phase_output_bytes(AlgorithmKind algorithm, CollectiveKind kind, std::uint64_t bytes,
                                 std::uint32_t ring_size) {
  if (algorithm_info(algorithm).keeps_size) return bytes;
  return phase_output_bytes(kind, bytes, ring_size);
}

namespace {

bool is_power_of_two(std::uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

// Rejects a phase its algorithm cannot run (see plan_collective in the header).
// " (note)" or "".
std::string parenthesised(const char* note) { return *note != 0 ? fmt::format(" ({})", note) : ""; }

// Rejects a phase its algorithm cannot run, as its row of the algorithm table says (see
// plan_collective in the header).
void check_phase(const PhasePlan& p) {
  const char* what = collective_name(p.kind);
  const AlgorithmInfo& info = algorithm_info(p.algorithm);
  if (!runs_kind(info, p.kind)) {
    fail("the {}-implementation is {}, which has no {}{}; expected {} for {}", what, info.token, what,
         parenthesised(info.no_kind_note), tokens_where([&](const AlgorithmInfo& r) { return runs_kind(r, p.kind); }),
         what);
  }
  if (info.needs_power_of_two && !is_power_of_two(p.ring_size)) {
    fail("the {}-implementation is {} on logical dimension {} of {} NPUs; expected a power of two{}", what, info.token,
         p.dim, p.ring_size, parenthesised(info.power_of_two_note));
  }
  if (!info.runs_on_groups && p.members != nullptr) {
    fail("a {} on a communicator group of {} NPUs cannot run {}{}; expected {}", what, p.ring_size, info.token,
         *info.no_groups_note != 0 ? fmt::format(": {}", info.no_groups_note) : "",
         tokens_where([](const AlgorithmInfo& r) { return r.runs_on_groups; }));
  }
}

}  // namespace

namespace {

// A custom algorithm: one stream, one phase over every NPU, no chunking (docs/astra-sim-model.md §4.4).
ChunkPlan plan_custom(const SystemSpec& spec, const network::Topology& topology, CollectiveKind kind,
                      std::uint64_t bytes, const std::vector<NpuId>* group) {
  if (group != nullptr && group->size() != topology.npu_count()) {
    fail("a {} on a communicator group of {} NPUs cannot use the custom implementation \"{}\": custom "
         "algorithms run over all NPUs here",
         collective_name(kind), group->size(), spec.custom_prefixes[static_cast<std::size_t>(kind)]);
  }
  ChunkPlan plan;
  plan.chunk_bytes = bytes;
  plan.chunks = 1;
  plan.phases.push_back(
      {kind, AlgorithmKind::kCustom, 0, topology.npu_count(), 1, true, bytes, QueuePick::kRoundRobin, nullptr, 0});
  return plan;
}

// Chunking, with the reference's inflation of tiny chunks (all but all-gather) to one byte per
// NPU of the whole network, and a full-size extra chunk for any remainder.
void plan_chunks(const SystemSpec& spec, const network::Topology& topology, CollectiveKind kind, std::uint64_t bytes,
                 ChunkPlan& plan) {
  const std::uint64_t total_npus = topology.npu_count();
  std::uint64_t size = bytes;
  std::uint64_t chunk = size / spec.preferred_dataset_splits;
  if (kind != CollectiveKind::kAllGather && chunk < total_npus) {
    chunk = total_npus;
    size = spec.preferred_dataset_splits * total_npus;
  }
  // The reference loops forever on an all-gather smaller than the split count (chunk 0);
  // we make every byte its own chunk instead.
  if (chunk == 0) chunk = 1;
  plan.chunk_bytes = chunk;
  plan.chunks = size == 0 ? 0 : (size + chunk - 1) / chunk;
}

// A communicator group smaller than the network: one ring over its members (§1.5).
void plan_group_phase(const SystemSpec& spec, CollectiveKind kind, const std::vector<AlgorithmChoice>& choices,
                      const std::vector<NpuId>& group, ChunkPlan& plan) {
  if (group.size() <= 1) return;
  AlgorithmChoice choice = choices.size() == 1 ? choices.front() : AlgorithmChoice{};
  PhasePlan p{kind,
              choice.kind,
              0,
              static_cast<std::uint32_t>(group.size()),
              1,
              false,
              plan.chunk_bytes,
              QueuePick::kFirstHalf,
              &group,
              choice.window};
  // The queue rules of the flat case: localBWAware all-reduce draws from the first half.
  if (!(kind == CollectiveKind::kAllReduce && spec.collective_optimization == CollectiveOptimization::kLocalBwAware)) {
    p.pick = QueuePick::kRoundRobin;
  }
  check_phase(p);
  plan.phases.push_back(p);
}

struct LogicalDim {
  std::uint32_t index;
  std::uint32_t size;
  NpuId stride;
  bool flat;
};

// Logical dimensions: one per token; a one* token makes one flat ring of every NPU and ends
// the list. Dimensions of one NPU or outside `involved_dims` take no part.
std::vector<LogicalDim> logical_dims(const network::Topology& topology, CollectiveKind kind,
                                     const std::vector<AlgorithmChoice>& choices, std::uint32_t involved_dims) {
  std::vector<LogicalDim> dims;
  for (std::uint32_t d = 0; d < choices.size(); ++d) {
    const bool flat = choices[d].one_flat;
    if (!flat && d >= topology.dims()) {
      fail("the {}-implementation lists {} algorithms but the network has {} dimensions; expected "
           "at most one per dimension",
           collective_name(kind), choices.size(), topology.dims());
    }
    const std::uint32_t npus = flat ? topology.npu_count() : topology.npus_in(d);
    if (npus > 1 && (involved_dims & (1u << d))) dims.push_back({d, npus, flat ? 1 : topology.stride(d), flat});
    if (flat) break;
  }
  return dims;
}

}  // namespace

ChunkPlan plan_collective(const SystemSpec& spec, const network::Topology& topology, CollectiveKind kind,
                          std::uint64_t bytes, std::uint32_t involved_dims, const std::vector<NpuId>* group) {
  if (!spec.custom_prefixes[static_cast<std::size_t>(kind)].empty()) {
    return plan_custom(spec, topology, kind, bytes, group);
  }
  const auto& choices = spec.implementations[static_cast<std::size_t>(kind)];
  if (choices.empty()) {
    fail("the system configuration has no {}-implementation, but the trace runs a {}", collective_name(kind),
         collective_name(kind));
  }
  ChunkPlan plan;
  plan_chunks(spec, topology, kind, bytes, plan);
  if (group != nullptr && group->size() != topology.npu_count()) {
    plan_group_phase(spec, kind, choices, *group, plan);
    return plan;
  }
  const std::vector<LogicalDim> dims = logical_dims(topology, kind, choices, involved_dims);
  auto phase = [&](CollectiveKind phase_kind, const LogicalDim& d, std::uint64_t in, QueuePick pick) {
    const AlgorithmChoice& choice = choices[d.index];
    const PhasePlan p{phase_kind, choice.kind, d.index, d.size, d.stride, d.flat, in, pick, nullptr, choice.window};
    check_phase(p);
    plan.phases.push_back(p);
    return phase_output_bytes(choice.kind, phase_kind, in, d.size);
  };

  std::uint64_t data = plan.chunk_bytes;
  if (kind == CollectiveKind::kAllReduce && spec.collective_optimization == CollectiveOptimization::kLocalBwAware &&
      !dims.empty()) {
    // Reduce-scatter up the dimensions, all-reduce in the last one, all-gather back down.
    for (std::size_t i = 0; i + 1 < dims.size(); ++i) {
      data = phase(CollectiveKind::kReduceScatter, dims[i], data, QueuePick::kFirstHalf);
    }
    data = phase(CollectiveKind::kAllReduce, dims.back(), data, QueuePick::kFirstHalf);
    for (std::size_t i = dims.size() - 1; i-- > 0;) {
      data = phase(CollectiveKind::kAllGather, dims[i], data, QueuePick::kSecondHalf);
    }
  } else if (kind == CollectiveKind::kAllGather) {
    for (std::size_t i = dims.size(); i-- > 0;) data = phase(kind, dims[i], data, QueuePick::kRoundRobin);
  } else {
    for (const LogicalDim& d : dims) data = phase(kind, d, data, QueuePick::kRoundRobin);
  }
  return plan;
}

}  // namespace chakrasim::system
