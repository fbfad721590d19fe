// How a collective becomes chunks and phases (docs/astra-sim-model.md §4.1): the chunk size
// and count from `preferred-dataset-splits`, and the ordered list of per-dimension phases each
// chunk runs. Pure functions of the spec and topology, so they are tested on their own.
#pragma once

#include <cstdint>
#include <vector>

#include "network/topology.h"
#include "system/system_spec.h"

namespace chakrasim::system {

// Which queue allocator a phase draws from (§4.2).
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
  std::uint32_t window = 0;  // direct: messages in flight, 0 = one per peer
  // What ran the phase when it is not one of the algorithm table's rows (the NCCL model's
  // "NCCL NVLS/Simple"); reports print it instead of the algorithm's name.
  const char* label = nullptr;
};

struct ChunkPlan {
  std::uint64_t chunk_bytes = 0;
  std::uint64_t chunks = 0;
  std::vector<PhasePlan> phases;  // the same for every chunk
};

// Data left on each NPU after a phase of `kind` over `ring_size` NPUs that started with `bytes`.
std::uint64_t phase_output_bytes(CollectiveKind kind, std::uint64_t bytes, std::uint32_t ring_size);
// The same for a phase run by `algorithm`: the double binary tree runs an all-reduce whatever
// the phase's kind, so its data keeps its size, as in the reference.
std::uint64_t phase_output_bytes(AlgorithmKind algorithm, CollectiveKind kind, std::uint64_t bytes,
                                 std::uint32_t ring_size);

// The plan for a collective of `bytes` per NPU over the whole network. `involved_dims` has bit d
// set when logical dimension d takes part. With `group` (a communicator group smaller than the
// network) the collective is one ring over the group's members in the order given, with the
// first token's algorithm (ring when the list has several), as the reference does (§1.5).
// A one* token at position d makes logical dimension d one ring of every NPU and ends the list,
// as the reference's GeneralComplexTopology does.
// Throws Error when the kind has no implementation, or when a phase's algorithm cannot run it:
// halving-doubling all-to-all (the reference exits), halving-doubling or double binary tree on a
// ring whose size is not a power of two (the reference hangs or crashes), and a double binary
// tree on a communicator group (the reference casts the group's ring to a tree). The check is
// here, when a collective is planned, not at config load: like the reference, a configuration
// that names such an algorithm is fine as long as no trace runs the collective.
ChunkPlan plan_collective(const SystemSpec& spec, const network::Topology& topology, CollectiveKind kind,
                          std::uint64_t bytes, std::uint32_t involved_dims, const std::vector<NpuId>* group = nullptr);

}  // namespace chakrasim::system
