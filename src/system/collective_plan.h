// How a collective becomes chunks and phases (ASTRA-SIM-BEHAVIOUR.md §2.3): the chunk size
// and count from `preferred-dataset-splits`, and the ordered list of per-dimension phases each
// chunk runs. Pure functions of the spec and topology, so they are tested on their own.
#pragma once

#include <cstdint>
#include <vector>

#include "network/topology.h"
#include "system/system_spec.h"

namespace chakrasim::system {

// Which queue allocator a phase draws from (§2.4).
enum class QueuePick : std::uint8_t { kRoundRobin, kFirstHalf, kSecondHalf };

struct PhasePlan {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  AlgorithmKind algorithm = AlgorithmKind::kRing;
  std::uint32_t dim = 0;        // logical dimension: selects the queues
  std::uint32_t ring_size = 0;  // NPUs taking part in this phase
  NpuId stride = 1;             // rank distance between ring neighbours
  bool flat = false;            // one ring over all NPUs 0..N-1
  std::uint64_t bytes = 0;      // data entering the phase, per NPU
  QueuePick pick = QueuePick::kRoundRobin;
  // A communicator group's ring: its members in ring order (else nullptr: a network dimension).
  const std::vector<NpuId>* members = nullptr;
};

struct ChunkPlan {
  std::uint64_t chunk_bytes = 0;
  std::uint64_t chunks = 0;
  std::vector<PhasePlan> phases;  // the same for every chunk
};

// Data left on each NPU after a phase of `kind` over `ring_size` NPUs that started with `bytes`.
std::uint64_t phase_output_bytes(CollectiveKind kind, std::uint64_t bytes, std::uint32_t ring_size);

// The plan for a collective of `bytes` per NPU over the whole network. `involved_dims` has bit d
// set when logical dimension d takes part. With `group` (a communicator group smaller than the
// network) the collective is one ring over the group's members in the order given, with the
// first token's algorithm (ring when the list has several), as the reference does (§1.5).
// Throws Error when the kind has no implementation.
ChunkPlan plan_collective(const SystemSpec& spec, const network::Topology& topology,
                          CollectiveKind kind, std::uint64_t bytes, std::uint32_t involved_dims,
                          const std::vector<NpuId>* group = nullptr);

}  // namespace chakrasim::system
