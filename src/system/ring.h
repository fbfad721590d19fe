// The ring algorithm as a state machine, step for step the reference's Ring (docs/astra-sim-model.md
// §5): every step moves `msg_bytes` to the ring successor after an endpoint delay, and the
// steps that receive reduced data also pay the reduction cost. Per-phase time without
// contention, n = ring size, c = phase data:
//   all-reduce      2(n-1)(E + T(c/n)) + (n-1) P(c/n) + E
//   reduce-scatter  (n-1)(E + T(c/n)) + (n-1) P(c/n) + E
//   all-gather      (n-1)(E + T(c)) + E
//   all-to-all      n(n-1)/2 (E + T(c/n)) + E
//
// The algorithm talks to the system layer through `Io`, any type with
//   bundle(bool reduce, bytes)  pay E (and P if reduce), then call on_step_ready
//   send(dst, bytes)            hand a message to the network
//   receive(src, bytes)         post a receive; on_receive runs when it is matched
//   finish()                    the phase is over
// so the state machine knows nothing of streams, queues or the network.
#pragma once

#include <cstdint>

#include "core/types.h"
#include "system/system_spec.h"

namespace chakrasim::system {

struct RingState {
  std::uint64_t msg_bytes = 0;
  NpuId next = 0;  // where this NPU sends
  NpuId prev = 0;  // where it receives from
  std::uint32_t ring_size = 0;
  std::uint32_t sends_left = 0;
  std::uint32_t free_packets = 0;
  std::uint32_t packets = 0;  // steps prepared but not yet sent
  std::uint32_t zero_latency = 0;
  std::uint32_t non_zero_latency = 0;
  std::uint32_t parallel_reduce = 1;
  bool toggle = false;
  CollectiveKind kind = CollectiveKind::kAllReduce;

  void configure(CollectiveKind phase_kind, std::uint64_t bytes, std::uint32_t n, NpuId to, NpuId from) {
    kind = phase_kind;
    ring_size = n;
    next = to;
    prev = from;
    switch (kind) {
      case CollectiveKind::kAllReduce: sends_left = 2 * (n - 1); break;
      case CollectiveKind::kAllToAll: sends_left = (n - 1) * n / 2; break;
      default: sends_left = n - 1; break;
    }
    msg_bytes = kind == CollectiveKind::kAllGather ? bytes : bytes / n;
  }

  template <class Io>
  void start(Io& io) {
    for (std::uint32_t i = 0; i < parallel_reduce; ++i) insert_packet(io);
  }

  template <class Io>
  void on_receive(Io& io) {
    insert_packet(io);
  }

  template <class Io>
  void on_step_ready(Io& io) {
    ++free_packets;
    if (packets > 0 && sends_left > 0 && free_packets > 0) {
      // Counters first: the receive below may complete at once and prepare the next step.
      --packets;
      --sends_left;
      --free_packets;
      io.send(next, msg_bytes);
      io.receive(prev, msg_bytes);
    }
    if (sends_left == 0 && free_packets == parallel_reduce) io.finish();
  }

 private:
  // A step's data is ready to leave: the first of each round of n comes straight from the
  // NPU; the others arrived from the predecessor and are reduced in reduce-scatter and in the
  // first round of an all-reduce.
  template <class Io>
  void insert_packet(Io& io) {
    if (zero_latency == 0 && non_zero_latency == 0) {
      zero_latency = parallel_reduce;
      non_zero_latency = (ring_size - 1) * parallel_reduce;
      toggle = !toggle;
    }
    ++packets;
    if (zero_latency > 0) {
      --zero_latency;
      io.bundle(false, msg_bytes);
      return;
    }
    --non_zero_latency;
    const bool reduce = kind == CollectiveKind::kReduceScatter || (kind == CollectiveKind::kAllReduce && toggle);
    io.bundle(reduce, msg_bytes);
  }
};

}  // namespace chakrasim::system
