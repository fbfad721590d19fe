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

std::uint64_t phase_output_bytes(CollectiveKind kind, std::uint64_t bytes, std::uint32_t ring_size) {
  switch (kind) {
    case CollectiveKind::kReduceScatter: return bytes / ring_size;
    case CollectiveKind::kAllGather: return bytes * ring_size;
    default: return bytes;
  }
}

ChunkPlan plan_collective(const SystemSpec& spec, const network::Topology& topology,
                          CollectiveKind kind, std::uint64_t bytes, std::uint32_t involved_dims,
                          const std::vector<NpuId>* group) {
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
                  QueuePick::kFirstHalf, group};
      // The queue rules of the flat case: localBWAware all-reduce draws from the first half.
      if (!(kind == CollectiveKind::kAllReduce &&
            spec.collective_optimization == CollectiveOptimization::kLocalBwAware)) {
        p.pick = QueuePick::kRoundRobin;
      }
      plan.phases.push_back(p);
    }
    return plan;
  }

  // Logical dimensions: one per token; a one* token makes one flat ring of every NPU.
  struct LogicalDim {
    std::uint32_t index;
    std::uint32_t size;
    NpuId stride;
    bool flat;
  };
  std::vector<LogicalDim> dims;
  const AlgorithmChoice first = choices.front();
  if (first.one_flat) {
    if (topology.npu_count() > 1 && (involved_dims & 1u)) {
      dims.push_back({0, topology.npu_count(), 1, true});
    }
  } else {
    for (std::uint32_t d = 0; d < choices.size(); ++d) {
      if (topology.npus_in(d) == 1 || !(involved_dims & (1u << d))) continue;
      dims.push_back({d, topology.npus_in(d), topology.stride(d), false});
    }
  }
  auto phase = [&](CollectiveKind phase_kind, const LogicalDim& d, std::uint64_t in,
                   QueuePick pick) {
    const AlgorithmChoice& choice = first.one_flat ? first : choices[d.index];
    plan.phases.push_back(
        {phase_kind, choice.kind, d.index, d.size, d.stride, d.flat, in, pick});
    return phase_output_bytes(phase_kind, in, d.size);
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
