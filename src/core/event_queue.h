// The event queue: a vector-backed 4-ary min-heap of small plain events ordered by
// (time, seq), with a FIFO fast lane for events scheduled at the current time.
//
// Contract. `seq` is a global insertion counter, so events at the same time run in the order
// they were scheduled (FIFO), which makes every run bit-identical and matches the reference's
// per-timestamp FIFO buckets. Events are never cancelled: an owner that may want to ignore a
// stale event keeps its own generation counter in `arg`.
//
// Cost (n = events pending in the heap):
//   schedule at a future time   O(log4 n), no allocation once the vector has grown
//   schedule at the current time  O(1) (fast lane)
//   pop                         O(log4 n) from the heap, O(1) from the fast lane
//   memory                      32 bytes per pending event
// A 4-ary heap halves the depth of a binary heap and keeps a node's children in one cache
// line; bench/event_queue_bench.cc measures it.
#pragma once

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

  bool empty() const { return heap_.empty() && lane_head_ == lane_.size(); }
  std::size_t size() const { return heap_.size() + (lane_.size() - lane_head_); }

  // Removes and returns the earliest event and advances the clock to its time.
  Event pop();

  Tick now() const { return now_; }
  std::uint64_t events_processed() const { return popped_; }

 private:
  static bool earlier(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  Event pop_heap();

  std::vector<Event> heap_;
  // Events at time now_, in insertion order; lane_head_ is the next one to run.
  std::vector<Event> lane_;
  std::size_t lane_head_ = 0;
  Tick now_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t popped_ = 0;
};

}  // namespace chakrasim
