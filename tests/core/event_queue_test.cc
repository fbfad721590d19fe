// Tests of EventQueue: time order, FIFO ties, the current-time fast lane, the clock and
// the counters, and a randomized run checked against a stable sort of (time, insertion index);
// next_time() and advance_clock(), alone and in a randomized run with clock jumps.
#include "core/event_queue.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace chakrasim {
namespace {

// Schedules a kTimers event on NPU 0 whose arg is `id`.
void push(EventQueue& q, Tick time, std::uint64_t id) { q.schedule(time, EventTarget::kTimers, 0, 0, id); }

// Pops everything and returns the args in pop order.
std::vector<std::uint64_t> drain(EventQueue& q) {
  std::vector<std::uint64_t> order;
  while (!q.empty()) order.push_back(q.pop().arg);
  return order;
}

TEST(EventQueue, PopsInTimeOrderAndAdvancesTheClock) {
  // Scheduled at 30, 10, 20 (args 0, 1, 2): popped 10 (1), 20 (2), 30 (0); now() follows.
  EventQueue q;
  push(q, 30, 0);
  push(q, 10, 1);
  push(q, 20, 2);
  EXPECT_EQ(q.now(), 0u);

  Event e = q.pop();
  EXPECT_EQ(e.time, 10u);
  EXPECT_EQ(e.arg, 1u);
  EXPECT_EQ(q.now(), 10u);
  e = q.pop();
  EXPECT_EQ(e.time, 20u);
  EXPECT_EQ(e.arg, 2u);
  EXPECT_EQ(q.now(), 20u);
  e = q.pop();
  EXPECT_EQ(e.time, 30u);
  EXPECT_EQ(e.arg, 0u);
  EXPECT_EQ(q.now(), 30u);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, CarriesEveryFieldOfTheEvent) {
  // schedule(7, kNetwork, kind 3, npu 5, arg 99) comes back as exactly that, and so does the
  // next one (kTimers, kind 4, npu 6, arg 100).
  EventQueue q;
  q.schedule(7, EventTarget::kNetwork, 3, 5, 99);
  q.schedule(8, EventTarget::kTimers, 4, 6, 100);
  Event e = q.pop();
  EXPECT_EQ(e.time, 7u);
  EXPECT_EQ(e.target, EventTarget::kNetwork);
  EXPECT_EQ(e.kind, 3u);
  EXPECT_EQ(e.npu, 5u);
  EXPECT_EQ(e.arg, 99u);
  e = q.pop();
  EXPECT_EQ(e.time, 8u);
  EXPECT_EQ(e.target, EventTarget::kTimers);
  EXPECT_EQ(e.kind, 4u);
  EXPECT_EQ(e.npu, 6u);
  EXPECT_EQ(e.arg, 100u);
}

TEST(EventQueue, EqualTimesPopInInsertionOrder) {
  // Ten events at t=5 (args 0..9) interleaved with events at t=3 and t=8 (args 100+):
  // all of t=3 first, then 0..9 in the order scheduled, then t=8.
  EventQueue q;
  for (std::uint64_t i = 0; i < 10; ++i) {
    push(q, 5, i);
    push(q, i % 2 == 0 ? 3 : 8, 100 + i);
  }
  const std::vector<std::uint64_t> expected = {100, 102, 104, 106, 108, 0,   1,   2,   3,   4,
                                               5,   6,   7,   8,   9,   101, 103, 105, 107, 109};
  EXPECT_EQ(drain(q), expected);
}

TEST(EventQueue, FastLaneRunsAfterHeapEventsAtTheSameTime) {
  // A (1) and B (2) are scheduled for t=10 while now=0. After A pops (now=10), C (3) and D (4)
  // are scheduled at t=10 (the fast lane) and E (5) at t=11. Order: A, B, C, D, E: B was in the
  // heap at t=10 before C and D were scheduled, so it runs first; C and D run FIFO.
  EventQueue q;
  push(q, 10, 1);
  push(q, 10, 2);
  EXPECT_EQ(q.pop().arg, 1u);
  EXPECT_EQ(q.now(), 10u);
  push(q, 10, 3);
  push(q, 11, 5);
  push(q, 10, 4);
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{2, 3, 4, 5}));
  EXPECT_EQ(q.now(), 11u);
}

TEST(EventQueue, FastLaneEventsScheduledWhileDrainingTheLaneKeepFifo) {
  // At now=0 (the start) every t=0 event is a lane event: 0, then 1 scheduled after t=4,
  // then, while popping 0, event 2 at t=0: order 0, 1, 2, then 4 at t=4.
  EventQueue q;
  push(q, 0, 0);
  push(q, 4, 4);
  push(q, 0, 1);
  EXPECT_EQ(q.pop().arg, 0u);
  push(q, 0, 2);
  EXPECT_EQ(q.pop().arg, 1u);
  EXPECT_EQ(q.pop().arg, 2u);
  EXPECT_EQ(q.now(), 0u);
  EXPECT_EQ(q.pop().arg, 4u);
  EXPECT_EQ(q.now(), 4u);
  // The lane is reusable after it emptied: two more events at t=4 run FIFO.
  push(q, 4, 5);
  push(q, 4, 6);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{5, 6}));
}

TEST(EventQueue, SizeEmptyAndEventsProcessedCountHeapAndLane) {
  // Two heap events (t=5, t=6), then after the first pop one lane event at t=5:
  // sizes 0, 1, 2, (pop) 1, 2 (lane), (pop) 1, (pop) 0; processed 0, 1, 2, 3.
  EventQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.events_processed(), 0u);
  push(q, 5, 0);
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.size(), 1u);
  push(q, 6, 1);
  EXPECT_EQ(q.size(), 2u);
  q.pop();
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.events_processed(), 1u);
  push(q, 5, 2);  // fast lane
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.pop().arg, 2u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.events_processed(), 2u);
  EXPECT_EQ(q.pop().arg, 1u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.events_processed(), 3u);
}

TEST(EventQueue, RandomizedRunMatchesStableSortOfTimeAndInsertionIndex) {
  // 40000 events at times 0..199 (about 200 per time, so ties everywhere), then, while popping,
  // each popped event schedules 0-2 more at now + {0 (fast lane), 1, 2, 5, 50} until 100000
  // events in all. Because no event is ever scheduled in the past, the whole pop sequence must
  // equal the stable sort by time of every event in insertion order.
  constexpr std::size_t kInitial = 40000;
  constexpr std::size_t kTotal = 100000;
  constexpr Tick kDelays[] = {0, 1, 2, 5, 50};
  std::mt19937_64 rng(20240601);
  EventQueue q;
  std::vector<Tick> time_of;  // by insertion index
  auto add = [&](Tick t) {
    q.schedule(t, EventTarget::kTimers, 0, 0, time_of.size());
    time_of.push_back(t);
  };
  for (std::size_t i = 0; i < kInitial; ++i) add(rng() % 200);

  std::vector<std::uint64_t> popped;
  popped.reserve(kTotal);
  Tick last = 0;
  std::size_t max_size = 0;
  while (!q.empty()) {
    max_size = std::max(max_size, q.size());
    const Event e = q.pop();
    ASSERT_GE(e.time, last);
    ASSERT_EQ(e.time, q.now());
    ASSERT_EQ(e.time, time_of[e.arg]);
    last = e.time;
    popped.push_back(e.arg);
    const std::uint64_t children = rng() % 3;
    for (std::uint64_t c = 0; c < children && time_of.size() < kTotal; ++c) {
      add(q.now() + kDelays[rng() % 5]);
    }
  }
  ASSERT_EQ(time_of.size(), kTotal);
  ASSERT_EQ(popped.size(), kTotal);
  EXPECT_EQ(q.events_processed(), kTotal);
  EXPECT_GE(max_size, kInitial);

  std::vector<std::uint64_t> expected(kTotal);
  for (std::size_t i = 0; i < kTotal; ++i) expected[i] = i;
  std::stable_sort(expected.begin(), expected.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return time_of[a] < time_of[b]; });
  // Compare element by element so a failure names the first divergence, not 100k numbers.
  for (std::size_t i = 0; i < kTotal; ++i) {
    ASSERT_EQ(popped[i], expected[i]) << "first divergence at pop " << i;
  }
}

TEST(EventQueue, WideDelaysCrossEveryDigitLevelInOrder) {
  // Delays drawn from 1 ns to 2^50 ns (log-uniform, so every 8-bit digit level is used, with
  // events landing in the same higher-level bucket and moving down together), plus exact
  // repeats of pending times to make ties across levels. Pops must come in (time, insertion)
  // order: each popped (time, index) pair is greater than the previous one.
  std::mt19937_64 rng(7);
  EventQueue q;
  std::vector<Tick> time_of;
  auto add = [&](Tick t) {
    q.schedule(t, EventTarget::kTimers, 0, 0, time_of.size());
    time_of.push_back(t);
  };
  auto delay = [&]() -> Tick { return (rng() & ((Tick{1} << (rng() % 51)) - 1)) + 1; };
  for (int i = 0; i < 5000; ++i) add(delay());
  Tick last_time = 0;
  std::uint64_t last_index = 0;
  std::size_t popped = 0;
  while (!q.empty()) {
    const Event e = q.pop();
    ASSERT_EQ(e.time, time_of[e.arg]);
    ASSERT_TRUE(e.time > last_time || (e.time == last_time && (popped == 0 || e.arg > last_index)))
        << "pop " << popped << ": (" << e.time << ", " << e.arg << ") after (" << last_time << ", " << last_index
        << ")";
    last_time = e.time;
    last_index = e.arg;
    ++popped;
    if (time_of.size() < 60000) {
      add(q.now() + delay());
      const Tick again = time_of[rng() % time_of.size()];
      if (rng() % 4 == 0) add(again > q.now() ? again : q.now());
    }
  }
  EXPECT_EQ(popped, time_of.size());
}

TEST(EventQueue, NextTimeIsTheEarliestPendingTimeAndLeavesTheClock) {
  // Empty: kNeverTick. With events at 300, 70000 and 2^40 pending from t = 0: 300, and now()
  // stays 0. After popping 300 (now 300): 70000, then 2^40, then kNeverTick.
  EventQueue q;
  EXPECT_EQ(q.next_time(), kNeverTick);
  push(q, Tick{1} << 40, 0);
  push(q, 70000, 1);
  push(q, 300, 2);
  EXPECT_EQ(q.next_time(), 300u);
  EXPECT_EQ(q.now(), 0u);
  EXPECT_EQ(q.pop().arg, 2u);
  EXPECT_EQ(q.next_time(), 70000u);
  // An event at the current time is next, ahead of the later ones.
  push(q, 300, 3);
  EXPECT_EQ(q.next_time(), 300u);
  EXPECT_EQ(q.pop().arg, 3u);
  EXPECT_EQ(q.next_time(), 70000u);
  EXPECT_EQ(q.pop().arg, 1u);
  EXPECT_EQ(q.next_time(), Tick{1} << 40);
  EXPECT_EQ(q.pop().arg, 0u);
  EXPECT_EQ(q.next_time(), kNeverTick);
}

TEST(EventQueue, AdvanceClockMovesNowWithoutPopping) {
  // Events at 1000 and 1005 pending; the clock moves to 1000 (the earliest, allowed), then an
  // event scheduled "now" lands at 1000, behind the one already there; popping goes on in
  // (time, insertion) order, and nothing was counted as processed by the move.
  EventQueue q;
  push(q, 1005, 0);
  push(q, 1000, 1);
  q.advance_clock(1000);
  EXPECT_EQ(q.now(), 1000u);
  EXPECT_EQ(q.events_processed(), 0u);
  push(q, q.now(), 2);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{1, 2, 0}));
  // On an empty queue the clock moves anywhere forward, across digit levels.
  q.advance_clock(Tick{1} << 33);
  EXPECT_EQ(q.now(), Tick{1} << 33);
  push(q, q.now() + 1, 3);
  push(q, q.now(), 4);
  EXPECT_EQ(q.next_time(), Tick{1} << 33);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{4, 3}));
}

TEST(EventQueue, AdvanceClockIntoAHigherLevelBucketRefilesIt) {
  // From t = 0, events at 0x1234 and 0x12ff share digit 1 (0x12) with the new clock 0x1200, so
  // they sit in one level-1 bucket that must move down when the clock gets there. New events
  // at 0x1200 and 0x1240 then pop in time order among them.
  EventQueue q;
  push(q, 0x12ff, 0);
  push(q, 0x1234, 1);
  push(q, 0x5000, 2);
  q.advance_clock(0x1200);
  push(q, 0x1240, 3);
  push(q, 0x1200, 4);
  EXPECT_EQ(q.next_time(), 0x1200u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{4, 1, 3, 0, 2}));
}

TEST(EventQueue, RandomizedRunWithClockJumpsKeepsTimeAndInsertionOrder) {
  // As the randomized run above, but between pops the clock sometimes jumps to a random time
  // between now() and next_time() (what the simulation does for a backend with its own event
  // engine), with delays from 0 to 2^30 ns. Events scheduled after a jump are relative to the
  // new clock. Pops must still come in (time, insertion) order, each at the time it was given.
  std::mt19937_64 rng(99);
  EventQueue q;
  std::vector<Tick> time_of;
  auto add = [&](Tick t) {
    q.schedule(t, EventTarget::kTimers, 0, 0, time_of.size());
    time_of.push_back(t);
  };
  auto delay = [&]() -> Tick { return rng() % 3 == 0 ? 0 : (rng() & ((Tick{1} << (rng() % 31)) - 1)); };
  for (int i = 0; i < 2000; ++i) add(delay());
  Tick last_time = 0;
  std::uint64_t last_index = 0;
  std::size_t popped = 0;
  std::size_t jumps = 0;
  while (!q.empty()) {
    if (rng() % 3 == 0) {
      const Tick next = q.next_time();
      const Tick to = q.now() + (next == q.now() ? 0 : rng() % (next - q.now() + 1));
      q.advance_clock(to);
      ASSERT_EQ(q.now(), to);
      ASSERT_EQ(q.next_time(), next);
      jumps += to != next;
      if (time_of.size() < 40000 && rng() % 2 == 0) add(q.now() + delay());
    }
    const Tick expected_time = q.next_time();
    const Event e = q.pop();
    ASSERT_EQ(e.time, expected_time);
    ASSERT_EQ(e.time, time_of[e.arg]);
    ASSERT_TRUE(e.time > last_time || (e.time == last_time && (popped == 0 || e.arg > last_index)))
        << "pop " << popped << ": (" << e.time << ", " << e.arg << ") after (" << last_time << ", " << last_index
        << ")";
    last_time = e.time;
    last_index = e.arg;
    ++popped;
    for (int c = static_cast<int>(rng() % 3); c > 0 && time_of.size() < 40000; --c) add(q.now() + delay());
  }
  EXPECT_EQ(popped, time_of.size());
  EXPECT_GT(jumps, 1000u);
}

}  // namespace
}  // namespace chakrasim
