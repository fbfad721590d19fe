// What the layers above see of the system layer: the requests the workload makes (a collective,
// a send, a receive, a group learnt at run time), how it hears that one is done, and what an
// observer (a timeline, a report) hears of collectives' phases. Kept apart from system.h, so a
// change to an algorithm or the system's internals recompiles nothing above it, and so the
// workload layer can be tested against a stub (tests/workload).
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"
#include "system/system_spec.h"

namespace chakrasim::system {

struct PhasePlan;

class CommListener {
 public:
  virtual ~CommListener() = default;
  // `npu`'s operation started with `token` (a collective, a send or a receive) is complete, at
  // the current tick.
  virtual void on_comm_done(NpuId npu, std::uint64_t token) = 0;
};

// Told when a chunk of a collective runs a phase, for timelines and reports. A chunk may wait
// in its queue between phases; a phase runs from its start to its end.
class CollectiveObserver {
 public:
  virtual ~CollectiveObserver() = default;
  // Chunk `chunk` of `npu`'s collective `token` starts running phase `phase` (plan: what it does).
  virtual void on_phase_start(NpuId npu, std::uint64_t token, std::uint32_t chunk, std::uint32_t phase,
                              const PhasePlan& plan, Tick now) = 0;
  virtual void on_phase_end(NpuId npu, std::uint64_t token, std::uint32_t chunk, std::uint32_t phase, Tick now) = 0;
};

// How a request's bytes are read. kAsIs: per NPU, with the meaning of docs/astra-sim-model.md
// §3.4 for its kind. The rooted collectives run as the native kind that moves the same bytes over
// every member's links as NCCL's ring (chain) form, in n-1 steps (§3.5): kBroadcast, a broadcast
// of `bytes` from one member, runs as an all-gather of ceil(bytes / (n-1)) per member; kReduce,
// a reduce of `bytes` to one member, as a reduce-scatter of ceil(bytes x n / (n-1)).
enum class RequestSizing : std::uint8_t { kAsIs, kBroadcast, kReduce };

// The bytes a request of `bytes` runs with on a group of `members` NPUs.
inline std::uint64_t sized_bytes(RequestSizing sizing, std::uint64_t bytes, std::uint64_t members) {
  if (members < 2) return bytes;
  switch (sizing) {
    case RequestSizing::kAsIs: break;
    case RequestSizing::kBroadcast: return (bytes + members - 2) / (members - 1);
    // ceil(bytes x members / (members - 1)), written so that it cannot wrap.
    case RequestSizing::kReduce: return bytes + (bytes + members - 2) / (members - 1);
  }
  return bytes;
}

struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  RequestSizing sizing = RequestSizing::kAsIs;
  std::uint64_t bytes = 0;    // per NPU, read as `sizing` says
  std::int32_t priority = 0;  // used under the EXPLICIT scheduling policy
  std::uint32_t involved_dims = ~0u;
  std::uint32_t group = 0;  // communicator group key; 0 = every NPU
};

// The operations the workload asks of the system layer. Each completes later (or in the same
// tick) through CommListener::on_comm_done with the token it was started with.
class Comm {
 public:
  virtual ~Comm() = default;
  // Starts `npu`'s part of a collective now. Throws Error if the group is unknown or does not
  // contain `npu`.
  virtual void start_collective(NpuId npu, const CollectiveRequest& request, std::uint64_t token) = 0;
  // Point-to-point: a send completes when its message has arrived; a receive when a message
  // with the same (tag, src, dst, bytes) has arrived.
  virtual void send(NpuId npu, NpuId dst, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) = 0;
  virtual void receive(NpuId npu, NpuId src, std::uint64_t bytes, std::int64_t tag, std::uint64_t token) = 0;
  // A send whose bytes pass through `relay` on their way, as NCCL's PXN sends a GPU's data to a
  // peer on another node through the GPU on the peer's rail. Received and completed as send()
  // is; straight where the layer below has no relays.
  virtual void send_via(NpuId npu, NpuId /*relay*/, NpuId dst, std::uint64_t bytes, std::int64_t tag,
                        std::uint64_t token) {
    send(npu, dst, bytes, tag, token);
  }
  // A group `npu` learns at run time (a PyTorch process-group METADATA node). An empty member
  // list means every NPU.
  virtual void register_group(NpuId npu, std::uint32_t key, std::vector<NpuId> members) = 0;
};

}  // namespace chakrasim::system
