// Halving-doubling ("halvingDoubling", "oneHalvingDoubling") as a state machine, step for step
// the reference's HalvingDoubling (docs/astra-sim-model.md §5). The ring size n is a power of
// two (the planner checks). One message is in flight at a time, exchanged with a partner at ring
// distance d: towards higher positions when floor(index / d) is even, else towards lower ones.
//   reduce-scatter  sizes c/2, c/4, ..., c/n at distances 1, 2, ..., n/2
//   all-gather      sizes c, 2c, ..., (n/2)c at distances n/2, ..., 1
//   all-reduce      the reduce-scatter steps, then back: c/n, ..., c/2 at n/2, ..., 1
// Per phase, without contention: the sum over steps of (E + T(size)) plus a final E, plus P
// after each reduced receive. Quirk kept for compatibility: the reduction is charged on the
// size of the message prepared next, not the one received, and the last reduce-scatter
// receive is not reduced. Ring8 1 MiB (CU): AR 64835, RS 44217, AG 140258.
//
// Same Io as RingState (ring.h): bundle(reduce, bytes), send(dst, bytes), receive(src, bytes),
// finish().
#pragma once

#include <cstdint>

#include "core/types.h"
#include "system/ring_layout.h"
#include "system/system_spec.h"

namespace chakrasim::system {

struct HalvingDoublingState {
  RingLayout ring;
  std::uint64_t msg_bytes = 0;    // size of the next message to prepare
  std::uint64_t ready_bytes = 0;  // the prepared message waiting to leave
  NpuId partner = 0;              // peer of the next message to prepare
  NpuId ready_partner = 0;
  std::uint32_t distance = 1;  // the reference's rank_offset
  std::uint32_t sends_left = 0;
  std::uint32_t free_steps = 0;
  std::uint32_t fresh_left = 0;
  std::uint32_t received_left = 0;
  std::uint32_t log2_size = 0;
  bool halving = true;     // distance doubles and size halves; false: the reverse
  bool has_ready = false;  // one prepared message at most: the next is prepared on receipt
  bool toggle = false;
  CollectiveKind kind = CollectiveKind::kAllReduce;

  void configure(CollectiveKind phase_kind, std::uint64_t bytes, const RingLayout& layout) {
    kind = phase_kind;
    ring = layout;
    log2_size = 0;
    while ((1u << (log2_size + 1)) <= layout.size) ++log2_size;
    sends_left = kind == CollectiveKind::kAllReduce ? 2 * log2_size : log2_size;
    if (kind == CollectiveKind::kAllGather) {
      msg_bytes = bytes;
      distance = layout.size / 2;
      halving = false;
    } else {
      msg_bytes = bytes / 2;
      distance = 1;
      halving = true;
    }
    partner = partner_at(distance);
  }

  template <class Io>
  void start(Io& io) {
    prepare(io);
  }

  template <class Io>
  void on_receive(Io& io) {
    prepare(io);
  }

  template <class Io>
  void on_step_ready(Io& io) {
    ++free_steps;
    if (has_ready && sends_left > 0 && free_steps > 0) {
      // Counters first: the receive below may complete at once and prepare the next message.
      has_ready = false;
      --sends_left;
      --free_steps;
      io.send(ready_partner, ready_bytes);
      io.receive(ready_partner, ready_bytes);
    }
    if (sends_left == 0 && free_steps == 1) io.finish();
  }

 private:
  NpuId partner_at(std::uint32_t d) const {
    const bool towards_higher = d == 0 || (ring.index / d) % 2 == 0;
    return ring.away(d, towards_higher);
  }

  // The reference's insert_packet and process_max_count: prepare a message of the current size
  // to the current partner, pay E (and P) on that size, then move to the next step.
  template <class Io>
  void prepare(Io& io) {
    if (fresh_left == 0 && received_left == 0) {
      fresh_left = 1;
      received_left = log2_size - 1;
      toggle = !toggle;
    }
    bool reduce = false;
    if (fresh_left > 0) {
      --fresh_left;
    } else {
      --received_left;
      reduce = kind == CollectiveKind::kReduceScatter || (kind == CollectiveKind::kAllReduce && toggle);
    }
    has_ready = true;
    ready_bytes = msg_bytes;
    ready_partner = partner;
    io.bundle(reduce, msg_bytes);
    advance();
  }

  void advance() {
    if (halving) {
      distance *= 2;
      msg_bytes /= 2;
    } else {
      distance /= 2;
      msg_bytes *= 2;
    }
    // An all-reduce turns round at the far end and walks back with the same size.
    if (distance == ring.size && kind == CollectiveKind::kAllReduce) {
      halving = false;
      distance /= 2;
      msg_bytes *= 2;
    }
    partner = partner_at(distance);
  }
};

}  // namespace chakrasim::system
