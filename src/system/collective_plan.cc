#include "system/collective_plan.h"

#include "core/error.h"

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

const char* algorithm_name(AlgorithmKind kind) {
  switch (kind) {
    case AlgorithmKind::kRing: return "ring";
    case AlgorithmKind::kDirect: return "direct";
    case AlgorithmKind::kHalvingDoubling: return "halvingDoubling";
    case AlgorithmKind::kDoubleBinaryTree: return "doubleBinaryTree";
    case AlgorithmKind::kCustom: return "custom";
  }
  return "?";
}

std::uint64_t phase_output_bytes(CollectiveKind kind, std::uint64_t bytes, std::uint32_t ring_size) {
  switch (kind) {
    case CollectiveKind::kReduceScatter: return bytes / ring_size;
    case CollectiveKind::kAllGather: return bytes * ring_size;
    default: return bytes;
  }
}

std::uint64_t phase_output_bytes(AlgorithmKind algorithm, CollectiveKind kind, std::uint64_t bytes,
                                 std::uint32_t ring_size) {
  if (algorithm == AlgorithmKind::kDoubleBinaryTree) return bytes;
  return phase_output_bytes(kind, bytes, ring_size);
}

namespace {

bool is_power_of_two(std::uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

// Rejects a phase its algorithm cannot run (see plan_collective in the header).
void check_phase(const PhasePlan& p) {
  const char* what = collective_name(p.kind);
  if (p.algorithm == AlgorithmKind::kHalvingDoubling && p.kind == CollectiveKind::kAllToAll) {
    fail("the {}-implementation is halvingDoubling, which has no {} (the reference exits with "
         "\"unknown communication type\"); expected ring or direct for {}",
         what, what, what);
  }
  const bool needs_power_of_two = p.algorithm == AlgorithmKind::kHalvingDoubling ||
                                  p.algorithm == AlgorithmKind::kDoubleBinaryTree;
  if (needs_power_of_two && !is_power_of_two(p.ring_size)) {
    fail("the {}-implementation is {} on logical dimension {} of {} NPUs; expected a power of two "
         "(the reference hangs or crashes otherwise)",
         what, algorithm_name(p.algorithm), p.dim, p.ring_size);
  }
  if (p.algorithm == AlgorithmKind::kDoubleBinaryTree && p.members != nullptr) {
    fail("a {} on a communicator group of {} NPUs cannot run doubleBinaryTree: groups are rings "
         "(the reference's behaviour is undefined); expected ring, direct or halvingDoubling",
         what, p.ring_size);
  }
}

}  // namespace

ChunkPlan plan_collective(const SystemSpec& spec, const network::Topology& topology,
                          CollectiveKind kind, std::uint64_t bytes, std::uint32_t involved_dims,
                          const std::vector<NpuId>* group) {
  // A custom algorithm: one stream, one phase over every NPU, no chunking (§2.3 item 5).
  if (!spec.custom_prefixes[static_cast<std::size_t>(kind)].empty()) {
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
  const auto& choices = spec.implementations[static_cast<std::size_t>(kind)];
  if (choices.empty()) {
    fail("the system configuration has no {}-implementation, but the trace runs a {}",
         collective_name(kind), collective_name(kind));
  }
  ChunkPlan plan;

  // Chunking, with the reference's inflation of tiny chunks (all but all-gather) to one byte per
  // NPU of the whole network, and a full-size extra chunk for any remainder.
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

  if (group != nullptr && group->size() != topology.npu_count()) {
    if (group->size() > 1) {
      AlgorithmChoice choice = choices.size() == 1 ? choices.front() : AlgorithmChoice{};
      PhasePlan p{kind, choice.kind, 0, static_cast<std::uint32_t>(group->size()), 1, false, chunk,
                  QueuePick::kFirstHalf, group, choice.window};
      // The queue rules of the flat case: localBWAware all-reduce draws from the first half.
      if (!(kind == CollectiveKind::kAllReduce &&
            spec.collective_optimization == CollectiveOptimization::kLocalBwAware)) {
        p.pick = QueuePick::kRoundRobin;
      }
      check_phase(p);
      plan.phases.push_back(p);
    }
    return plan;
  }

  // Logical dimensions: one per token; a one* token makes one flat ring of every NPU and ends
  // the list.
  struct LogicalDim {
    std::uint32_t index;
    std::uint32_t size;
    NpuId stride;
    bool flat;
  };
  std::vector<LogicalDim> dims;
  for (std::uint32_t d = 0; d < choices.size(); ++d) {
    const bool flat = choices[d].one_flat;
    if (!flat && d >= topology.dims()) {
      fail("the {}-implementation lists {} algorithms but the network has {} dimensions; expected "
           "at most one per dimension",
           collective_name(kind), choices.size(), topology.dims());
    }
    const std::uint32_t npus = flat ? topology.npu_count() : topology.npus_in(d);
    if (npus > 1 && (involved_dims & (1u << d))) {
      dims.push_back({d, npus, flat ? 1 : topology.stride(d), flat});
    }
    if (flat) break;
  }
  auto phase = [&](CollectiveKind phase_kind, const LogicalDim& d, std::uint64_t in,
                   QueuePick pick) {
    const AlgorithmChoice& choice = choices[d.index];
    const PhasePlan p{phase_kind, choice.kind, d.index, d.size, d.stride, d.flat, in, pick, nullptr,
                      choice.window};
    check_phase(p);
    plan.phases.push_back(p);
    return phase_output_bytes(choice.kind, phase_kind, in, d.size);
  };

  std::uint64_t data = chunk;
  if (kind == CollectiveKind::kAllReduce &&
      spec.collective_optimization == CollectiveOptimization::kLocalBwAware && !dims.empty()) {
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
