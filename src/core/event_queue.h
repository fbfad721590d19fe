// The event queue: small plain events ordered by time, FIFO among equal times, kept in a radix
// heap with 8-bit digits.
//
// Contract. Events at the same time run in the order they were scheduled (FIFO), which makes
// every run bit-identical and matches the reference's per-timestamp FIFO buckets; an event
// scheduled at the current time runs after every event already due then. Events are never
// cancelled: an owner that may want to ignore a stale event keeps its own generation counter in
// `arg`. Time never goes backwards.
//
// How. Simulated time only grows, so a radix heap fits. Times are split into 8 digits of 8 bits.
// An event whose time first differs from the current time `now` at digit L sits in bucket
// (L, its digit L); one equal to `now` sits in (0, digit 0 of now), the bucket being popped.
// Level-0 buckets thus hold one exact time each. When the current bucket is used up, the next
// is the lowest occupied level-0 bucket (a bitmap scan); when level 0 is empty, the lowest
// occupied bucket of the lowest occupied level is emptied: its earliest time becomes `now` and
// its events move down to lower levels. An event therefore moves at most once per level, and
// at most twice for delays under 2^24 ns. Moving appends to empty buckets (every lower level is
// empty at that moment) in the source's order, and scheduling appends to the end, so every
// bucket stays in insertion order and FIFO needs no sequence numbers and no sorting.
//
// Buckets are chains of fixed-size blocks from one free list, so memory follows the pending
// events (not the most any bucket ever held), and a warm queue neither allocates nor faults in
// pages.
//
// Cost (D = the largest delay scheduled):
//   schedule  O(1), no allocation once the pool has grown
//   pop       amortised O(log256 D) moves plus a bitmap scan
//   next_time O(1) plus a bitmap scan when the current time is used up
//   advance_clock  re-files at most one bucket, whose events then sit one level lower or more
//   memory    24 bytes per pending event, plus at most one partly used block per bucket
// bench/event_queue_bench.cc measures it (before it: a 1-bit radix heap with 32-byte events,
// 7.1 M events/s at 1 Mi pending events; a 4-ary heap, 2.6 M/s).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/types.h"

namespace chakrasim {

// Which owner handles an event. Each owner interprets `kind` with its own enum. Memory needs no
// target of its own: the memory model returns a duration that the executor waits out on a
// per-NPU timer.
enum class EventTarget : std::uint8_t { kTimers, kNetwork };

struct Event {
  Tick time = 0;
  std::uint64_t arg = 0;
  NpuId npu = 0;
  EventTarget target = EventTarget::kTimers;
  std::uint8_t kind = 0;
};
static_assert(sizeof(Event) == 24, "events are meant to stay small");

class EventQueue {
 public:
  EventQueue();

  // Schedules an event at absolute `time`, which must not be in the past.
  void schedule(Tick time, EventTarget target, std::uint8_t kind, NpuId npu, std::uint64_t arg);

  bool empty() const { return pending_ == 0; }
  std::size_t size() const { return pending_; }

  // Removes and returns the earliest event and advances the clock to its time.
  Event pop();

  // The time of the earliest pending event (the one pop() returns next), or kNeverTick when
  // none is pending. Leaves the clock alone.
  Tick next_time() const;
  // Moves the clock forward to `time` without popping, for work done outside the queue at that
  // time (a network backend with its own event engine, network/network.h). `time` must be at
  // least now() and at most next_time(); events scheduled afterwards are relative to it.
  void advance_clock(Tick time);

  Tick now() const { return now_; }
  std::uint64_t events_processed() const { return popped_; }

 private:
  static constexpr unsigned kDigitBits = 8;
  static constexpr unsigned kDigits = 1u << kDigitBits;
  static constexpr unsigned kLevels = (64 + kDigitBits - 1) / kDigitBits;
  static constexpr unsigned kWords = (kDigits + 63) / 64;  // bitmap words per level

  static unsigned digit(Tick time, unsigned level) {
    return static_cast<unsigned>(time >> (level * kDigitBits)) & (kDigits - 1);
  }

  static constexpr std::uint32_t kBlockEvents = 64;
  struct Block {
    std::array<Event, kBlockEvents> events;
    Block* next;
  };
  // A FIFO of events: blocks from head to tail; `head_index` events of the head block are gone
  // and `tail_count` of the tail block are used. Only the current bucket may hold an empty block.
  struct Bucket {
    Block* head = nullptr;
    Block* tail = nullptr;
    std::uint32_t head_index = 0;
    std::uint32_t tail_count = 0;
    bool empty() const { return head == nullptr; }
  };

  void put(const Event& e);
  void append(Bucket& bucket, const Event& e);
  Block* new_block();
  void free_block(Block* block) {
    block->next = free_;
    free_ = block;
  }
  void set_occupied(unsigned level, unsigned d) { occupied_[level][d / 64] |= std::uint64_t{1} << (d % 64); }
  void clear_occupied(unsigned level, unsigned d) { occupied_[level][d / 64] &= ~(std::uint64_t{1} << (d % 64)); }
  // The lowest occupied bucket of `level`, or kDigits when there is none.
  unsigned lowest_occupied(unsigned level) const;
  // Makes the current bucket hold the earliest pending time's events.
  void advance();
  // Re-files every event of bucket (level, d) relative to the current now_.
  void refile(unsigned level, unsigned d);

  std::array<Bucket, kLevels * kDigits> buckets_{};   // level-major
  std::array<Tick, kLevels * kDigits> bucket_min_{};  // earliest time in each occupied bucket, level >= 1
  std::array<std::array<std::uint64_t, kWords>, kLevels> occupied_{};
  Bucket* current_ = nullptr;  // bucket (0, digit 0 of now_)
  Block* free_ = nullptr;      // free blocks, linked by `next`
  std::vector<std::unique_ptr<Block[]>> pool_;
  std::size_t pending_ = 0;
  Tick now_ = 0;
  std::uint64_t popped_ = 0;
};

}  // namespace chakrasim
