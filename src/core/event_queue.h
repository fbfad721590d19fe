// The event queue: small plain events ordered by (time, seq), kept in a radix heap with a FIFO
// fast lane for events scheduled at the current time.
//
// Contract. `seq` is a global insertion counter, so events at the same time run in the order
// they were scheduled (FIFO), which makes every run bit-identical and matches the reference's
// per-timestamp FIFO buckets. Events are never cancelled: an owner that may want to ignore a
// stale event keeps its own generation counter in `arg`. Time never goes backwards.
//
// How. Simulated time only grows, so a radix heap fits: bucket b holds the events whose time
// first differs from the last popped time at bit b-1 (bucket 0: equal to it). Scheduling appends
// to one bucket; popping takes bucket 0 in order, and when it is empty, the lowest non-empty
// bucket is scanned for its earliest time, which becomes the new "last", and its events move to
// lower buckets. An event moves at most 64 times (in practice log2 of the delays), always by
// appending to a vector, so the queue streams through memory instead of chasing heap paths.
// Equal-time events that met in bucket 0 are put back in seq order there (a tiny sort).
//
// Cost (D = the largest delay scheduled):
//   schedule at a future time     O(1), no allocation once the buckets have grown
//   schedule at the current time  O(1) (fast lane)
//   pop                           amortised O(log D)
//   memory                        32 bytes per pending event
// bench/event_queue_bench.cc measures it (a 4-ary heap before it: 2.6 M events/s at 1 Mi
// pending events).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/types.h"

namespace chakrasim {

// Which owner handles an event. Each owner interprets `kind` with its own enum.
enum class EventTarget : std::uint8_t { kTimers, kNetwork, kMemory };

struct Event {
  Tick time = 0;
  std::uint64_t seq = 0;
  std::uint64_t arg = 0;
  NpuId npu = 0;
  EventTarget target = EventTarget::kTimers;
  std::uint8_t kind = 0;
};
static_assert(sizeof(Event) == 32, "events are meant to stay small");

class EventQueue {
 public:
  // Schedules an event at absolute `time`, which must not be in the past.
  void schedule(Tick time, EventTarget target, std::uint8_t kind, NpuId npu, std::uint64_t arg);

  bool empty() const { return pending_ == 0; }
  std::size_t size() const { return pending_; }

  // Removes and returns the earliest event and advances the clock to its time.
  Event pop();

  Tick now() const { return now_; }
  std::uint64_t events_processed() const { return popped_; }

 private:
  static constexpr std::size_t kBuckets = 65;
  std::size_t bucket_of(Tick time) const {
    return time == now_ ? 0 : static_cast<std::size_t>(64 - __builtin_clzll(time ^ now_));
  }
  // Makes bucket 0 hold the earliest pending time's events, in seq order.
  void advance();
  void put(std::size_t bucket, const Event& e) {
    std::vector<Event>& v = buckets_[bucket];
    if (v.empty() || e.time < bucket_min_[bucket]) bucket_min_[bucket] = e.time;
    v.push_back(e);
  }

  std::array<std::vector<Event>, kBuckets> buckets_;
  std::array<Tick, kBuckets> bucket_min_;  // earliest time in each bucket (while non-empty)
  std::size_t bucket0_head_ = 0;  // next event of bucket 0 to run
  std::size_t pending_ = 0;
  // Events at time now_, in insertion order; lane_head_ is the next one to run.
  std::vector<Event> lane_;
  std::size_t lane_head_ = 0;
  Tick now_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t popped_ = 0;
};

}  // namespace chakrasim
