// The direct algorithm ("direct", "direct<W>", "oneDirect"; the reference's AllToAll class, a
// Ring with a rotating peer) as a state machine, step for step the reference
// (docs/astra-sim-model.md §5). The k-th message this NPU prepares goes to the peer
// (k mod (n-1)) + 1 positions away in the phase's direction and its matching receive comes from
// as far the other way, so the first n-1 messages reach every peer once. Up to W messages are
// prepared at a time (W = n-1 unless direct<W> says fewer). Per phase, n = ring size,
// c = phase data, T(s) the network time of an s-byte message to the farthest peer, without
// contention:
//   reduce-scatter  2E + T(c/n) + P(c/n)       (every received piece is reduced)
//   all-gather      2E + T(c)
//   all-to-all      2E + T(c/n)
//   all-reduce      3E + 2T(c/n) + P(c/n)      when T is the same to every peer (FC8: 13775)
// In an all-reduce the reduce-scatter pieces go out first; the all-gather half is held until
// all n-1 pieces have arrived, then each finished reduction releases one send, in the order
// the messages were prepared. With peers at different distances (a ring) those releases are
// staggered: Ring8 1 MiB gives 15775, not the closed form.
//
// Same Io as RingState (ring.h): bundle(reduce, bytes), send(dst, bytes), receive(src, bytes),
// finish().
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/types.h"
#include "system/ring_layout.h"
#include "system/system_spec.h"

namespace chakrasim::system {

struct DirectState {
  RingLayout ring;
  std::uint64_t msg_bytes = 0;
  std::uint32_t in_flight = 1;   // W: messages prepared at a time
  std::uint32_t sends_left = 0;  // the reference's stream_count
  std::uint32_t received = 0;
  std::uint32_t free_steps = 0;     // prepared steps whose endpoint delay is over
  std::uint32_t prepared = 0;       // messages prepared so far; the k-th has peer k
  std::uint32_t sent = 0;           // messages sent so far, in preparation order
  std::uint32_t fresh_left = 0;     // the reference's zero_latency_packets
  std::uint32_t received_left = 0;  // the reference's non_zero_latency_packets
  bool toggle = false;
  bool clockwise = true;
  bool group_ring = false;
  CollectiveKind kind = CollectiveKind::kAllReduce;

  // `window` 0 means one message per peer. A communicator group's ring (`group_ring`, the
  // reference's "Local" dimension) counts its received steps differently, as the reference does.
  void configure(CollectiveKind phase_kind, std::uint64_t bytes, const RingLayout& layout, bool towards_higher,
                 std::uint32_t window, bool on_group_ring) {
    kind = phase_kind;
    ring = layout;
    clockwise = towards_higher;
    group_ring = on_group_ring;
    const std::uint32_t peers = layout.size - 1;
    in_flight = window == 0 ? peers : std::min(window, peers);
    switch (kind) {
      case CollectiveKind::kAllReduce: sends_left = 2 * peers; break;
      default: sends_left = peers; break;
    }
    msg_bytes = kind == CollectiveKind::kAllGather ? bytes : bytes / layout.size;
  }

  template <class Io>
  void start(Io& io) {
    for (std::uint32_t i = 0; i < in_flight; ++i) prepare(io);
  }

  template <class Io>
  void on_receive(Io& io) {
    ++received;
    prepare(io);
  }

  template <class Io>
  void on_step_ready(Io& io) {
    ++free_steps;
    const std::uint32_t half = ring.size - 1;  // the reference's middle_point
    if (kind == CollectiveKind::kAllReduce && sends_left <= half) {
      // The all-gather half waits for every reduce-scatter piece.
      if (received < half) return;
      for (std::uint32_t i = 0; i < in_flight; ++i) send_next(io);
    } else {
      send_next(io);
    }
    if (sends_left == 0 && free_steps == in_flight) io.finish();
  }

 private:
  // The reference's insert_packet: a new message, fresh data for the first W of each round of
  // 2W, received (and in reduce-scatter or the first all-reduce round, reduced) data after.
  template <class Io>
  void prepare(Io& io) {
    if (fresh_left == 0 && received_left == 0) {
      fresh_left = in_flight;
      received_left = group_ring ? (ring.size - 1) * in_flight : in_flight;
      toggle = !toggle;
    }
    ++prepared;
    if (fresh_left > 0) {
      --fresh_left;
      io.bundle(false, msg_bytes);
      return;
    }
    --received_left;
    const bool reduce = kind == CollectiveKind::kReduceScatter || (kind == CollectiveKind::kAllReduce && toggle);
    io.bundle(reduce, msg_bytes);
  }

  // The reference's ready(): the oldest prepared message leaves, and its answer is awaited.
  template <class Io>
  void send_next(Io& io) {
    if (sent == prepared || sends_left == 0 || free_steps == 0) return;
    const std::uint32_t distance = sent % (ring.size - 1) + 1;
    // Counters first: the receive below may complete at once and prepare the next message.
    ++sent;
    --sends_left;
    --free_steps;
    io.send(ring.away(distance, clockwise), msg_bytes);
    io.receive(ring.away(distance, !clockwise), msg_bytes);
  }
};

}  // namespace chakrasim::system
