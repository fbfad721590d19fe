// Tests of NpuTimers: entries batched into one queue event per (NPU, tick), firing order,
// zero-delay entries added while a bucket drains, and bucket reuse against a simple model.
#include "core/npu_timers.h"

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace chakrasim {
namespace {

struct Fired {
  Tick time;
  NpuId npu;
  std::uint64_t arg;
  bool operator==(const Fired&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Fired& f) {
  return os << "{t=" << f.time << " npu=" << f.npu << " arg=" << f.arg << "}";
}

// Pops every queue event, fires it through `timers` and calls on_entry(entry) for each entry;
// returns how many queue events there were.
template <typename OnEntry>
std::size_t run_all(EventQueue& q, NpuTimers& timers, OnEntry&& on_entry) {
  std::size_t events = 0;
  while (!q.empty()) {
    const Event e = q.pop();
    EXPECT_EQ(e.target, EventTarget::kTimers);
    ++events;
    timers.fire(e, [&](const TimerEntry& entry) {
      EXPECT_EQ(entry.npu, e.npu);
      on_entry(entry);
    });
  }
  return events;
}

TEST(NpuTimers, EntriesForTheSameNpuAndTickShareOneEvent) {
  // NPU 0, delay 5, args 1, 2, 3 (owner/kind vary): one queue event at t=5 that runs 1, 2, 3
  // in scheduling order with their owner and kind intact.
  EventQueue q;
  NpuTimers timers(q, 2);
  timers.schedule(0, 5, TimerOwner::kWorkload, 7, 1);
  timers.schedule(0, 5, TimerOwner::kSystem, 8, 2);
  timers.schedule(0, 5, TimerOwner::kWorkload, 9, 3);
  EXPECT_EQ(q.size(), 1u);

  std::vector<TimerEntry> seen;
  const std::size_t events = run_all(q, timers, [&](const TimerEntry& e) {
    EXPECT_EQ(q.now(), 5u);
    seen.push_back(e);
  });
  EXPECT_EQ(events, 1u);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].arg, 1u);
  EXPECT_EQ(seen[0].owner, TimerOwner::kWorkload);
  EXPECT_EQ(seen[0].kind, 7u);
  EXPECT_EQ(seen[1].arg, 2u);
  EXPECT_EQ(seen[1].owner, TimerOwner::kSystem);
  EXPECT_EQ(seen[1].kind, 8u);
  EXPECT_EQ(seen[2].arg, 3u);
  EXPECT_EQ(seen[2].kind, 9u);
}

TEST(NpuTimers, DifferentNpusOrTicksGetSeparateEvents) {
  // a: NPU 1 @5, b: NPU 0 @5, c: NPU 1 @5, d: NPU 0 @6, e: NPU 1 @4.
  // Buckets: (1,5)={a,c}, (0,5)={b}, (0,6)={d}, (1,4)={e}: four events. Firing order by
  // (tick, bucket creation): e@4, then a, c (NPU 1's bucket was created before NPU 0's), b, d@6.
  EventQueue q;
  NpuTimers timers(q, 2);
  timers.schedule(1, 5, TimerOwner::kSystem, 0, 'a');
  timers.schedule(0, 5, TimerOwner::kSystem, 0, 'b');
  timers.schedule(1, 5, TimerOwner::kSystem, 0, 'c');
  timers.schedule(0, 6, TimerOwner::kSystem, 0, 'd');
  timers.schedule(1, 4, TimerOwner::kSystem, 0, 'e');
  EXPECT_EQ(q.size(), 4u);

  std::vector<Fired> seen;
  const std::size_t events = run_all(q, timers, [&](const TimerEntry& e) { seen.push_back({q.now(), e.npu, e.arg}); });
  EXPECT_EQ(events, 4u);
  const std::vector<Fired> expected = {{4, 1, 'e'}, {5, 1, 'a'}, {5, 1, 'c'}, {5, 0, 'b'}, {6, 0, 'd'}};
  EXPECT_EQ(seen, expected);
}

TEST(NpuTimers, ZeroDelayDuringADrainJoinsThatDrain) {
  // NPU 0 @5 holds 1, 2. While 1 runs it schedules 10 (NPU 0, delay 0) and 20 (NPU 1,
  // delay 0); while 10 runs it schedules 11 (NPU 0, delay 0). NPU 0's drain runs 1, 2, 10, 11
  // in one event; 20 gets its own event at t=5 after it: two events, all at t=5.
  EventQueue q;
  NpuTimers timers(q, 2);
  timers.schedule(0, 5, TimerOwner::kSystem, 0, 1);
  timers.schedule(0, 5, TimerOwner::kSystem, 0, 2);
  std::vector<Fired> seen;
  const std::size_t events = run_all(q, timers, [&](const TimerEntry& e) {
    seen.push_back({q.now(), e.npu, e.arg});
    if (e.arg == 1) {
      timers.schedule(0, 0, TimerOwner::kSystem, 0, 10);
      timers.schedule(1, 0, TimerOwner::kSystem, 0, 20);
      EXPECT_EQ(q.size(), 1u);  // only NPU 1's new bucket
    }
    if (e.arg == 10) timers.schedule(0, 0, TimerOwner::kSystem, 0, 11);
  });
  EXPECT_EQ(events, 2u);
  const std::vector<Fired> expected = {{5, 0, 1}, {5, 0, 2}, {5, 0, 10}, {5, 0, 11}, {5, 1, 20}};
  EXPECT_EQ(seen, expected);
}

TEST(NpuTimers, FutureScheduleDuringADrainJoinsAnOpenBucket) {
  // NPU 0 has buckets @5 {1} and @10 {2}. While 1 runs (now 5) it schedules 3 with delay 5,
  // i.e. at t=10: it joins the open @10 bucket, so the queue still holds one event, and @10
  // runs 2 then 3.
  EventQueue q;
  NpuTimers timers(q, 1);
  timers.schedule(0, 10, TimerOwner::kSystem, 0, 2);
  timers.schedule(0, 5, TimerOwner::kSystem, 0, 1);
  std::vector<Fired> seen;
  const std::size_t events = run_all(q, timers, [&](const TimerEntry& e) {
    seen.push_back({q.now(), e.npu, e.arg});
    if (e.arg == 1) {
      timers.schedule(0, 5, TimerOwner::kSystem, 0, 3);
      EXPECT_EQ(q.size(), 1u);
    }
  });
  EXPECT_EQ(events, 2u);
  const std::vector<Fired> expected = {{5, 0, 1}, {10, 0, 2}, {10, 0, 3}};
  EXPECT_EQ(seen, expected);
}

TEST(NpuTimers, AScheduleAfterABucketFiredMakesANewEvent) {
  // NPU 0 @5 {1} fires and closes. At now=5, a zero-delay schedule of 2 is a new bucket and a
  // new queue event (size 1), which fires on its own: two events, both at t=5.
  EventQueue q;
  NpuTimers timers(q, 1);
  timers.schedule(0, 5, TimerOwner::kSystem, 0, 1);
  std::vector<std::uint64_t> seen;
  Event e = q.pop();
  timers.fire(e, [&](const TimerEntry& entry) { seen.push_back(entry.arg); });
  EXPECT_TRUE(q.empty());
  timers.schedule(0, 0, TimerOwner::kSystem, 0, 2);
  EXPECT_EQ(q.size(), 1u);
  e = q.pop();
  EXPECT_EQ(e.time, 5u);
  timers.fire(e, [&](const TimerEntry& entry) { seen.push_back(entry.arg); });
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(q.events_processed(), 2u);
}

TEST(NpuTimers, BucketReuseOverManyRounds) {
  // 500 rounds; round r schedules, from now, NPU r%3 @+1 {3r, 3r+1} and NPU (r+1)%3 @+2 {3r+2}
  // and drains: exactly two events per round and the entries in that order at those ticks.
  // Buckets are recycled from the free list every round, so stale entries would show up here.
  EventQueue q;
  NpuTimers timers(q, 3);
  for (std::uint64_t r = 0; r < 500; ++r) {
    const Tick start = q.now();
    const auto a = static_cast<NpuId>(r % 3);
    const auto b = static_cast<NpuId>((r + 1) % 3);
    timers.schedule(a, 1, TimerOwner::kSystem, 0, 3 * r);
    timers.schedule(b, 2, TimerOwner::kSystem, 0, 3 * r + 2);
    timers.schedule(a, 1, TimerOwner::kSystem, 0, 3 * r + 1);
    std::vector<Fired> seen;
    const std::size_t events = run_all(q, timers, [&](const TimerEntry& e) {
      seen.push_back({q.now(), e.npu, e.arg});
    });
    ASSERT_EQ(events, 2u) << "round " << r;
    const std::vector<Fired> expected = {{start + 1, a, 3 * r}, {start + 1, a, 3 * r + 1}, {start + 2, b, 3 * r + 2}};
    ASSERT_EQ(seen, expected) << "round " << r;
  }
}

// An independent model of the reference's grouping (docs/astra-sim-model.md §2.2): per NPU a map
// tick -> callbacks, one global event per new (NPU, tick) ordered by (tick, creation order); a
// firing runs the list including entries appended to it, then forgets the tick.
class TimerModel {
 public:
  explicit TimerModel(std::size_t npus) : lists_(npus) {}
  void schedule(NpuId npu, Tick delay, std::uint64_t arg) {
    const Tick t = now_ + delay;
    auto [it, inserted] = lists_[npu].try_emplace(t);
    it->second.push_back(arg);
    if (inserted) events_.insert({t, seq_++, npu});
  }
  bool empty() const { return events_.empty(); }
  Tick now() const { return now_; }
  template <typename OnEntry>
  void fire_next(OnEntry&& on_entry) {
    const auto [t, seq, npu] = *events_.begin();
    events_.erase(events_.begin());
    now_ = t;
    for (std::size_t i = 0; i < lists_[npu][t].size(); ++i) {
      const std::uint64_t arg = lists_[npu][t][i];
      on_entry(npu, arg);
    }
    lists_[npu].erase(t);
  }

 private:
  std::vector<std::map<Tick, std::vector<std::uint64_t>>> lists_;
  std::set<std::tuple<Tick, std::uint64_t, NpuId>> events_;
  std::uint64_t seq_ = 0;
  Tick now_ = 0;
};

TEST(NpuTimers, RandomCascadeMatchesTheReferenceModel) {
  // 4 NPUs, 20 seed entries; every entry k spawns 1-2 children, chosen from k alone, on NPU
  // (k*7+i)%4 with delay (k*13+i)%4 (0 = same tick, often joining a draining bucket), until
  // 20000 entries. The (tick, npu, arg) sequence and the event count must equal the model's.
  constexpr std::uint64_t kLimit = 20000;
  auto children = [](std::uint64_t k) { return 1 + ((k * 2654435761u) >> 7) % 2; };
  auto child_npu = [](std::uint64_t k, std::uint64_t i) { return static_cast<NpuId>((k * 7 + i) % 4); };
  auto child_delay = [](std::uint64_t k, std::uint64_t i) { return static_cast<Tick>((k * 13 + i) % 4); };

  EventQueue q;
  NpuTimers timers(q, 4);
  TimerModel model(4);
  std::uint64_t next_real = 0;
  std::uint64_t next_model = 0;
  for (std::uint64_t s = 0; s < 20; ++s) {
    timers.schedule(static_cast<NpuId>(s % 4), s % 3, TimerOwner::kSystem, 0, next_real++);
    model.schedule(static_cast<NpuId>(s % 4), s % 3, next_model++);
  }

  std::vector<Fired> real;
  const std::size_t real_events = run_all(q, timers, [&](const TimerEntry& e) {
    real.push_back({q.now(), e.npu, e.arg});
    for (std::uint64_t i = 0; i < children(e.arg) && next_real < kLimit; ++i) {
      timers.schedule(child_npu(e.arg, i), child_delay(e.arg, i), TimerOwner::kSystem, 0, next_real++);
    }
  });
  std::vector<Fired> expected;
  std::size_t model_events = 0;
  while (!model.empty()) {
    ++model_events;
    model.fire_next([&](NpuId npu, std::uint64_t arg) {
      expected.push_back({model.now(), npu, arg});
      for (std::uint64_t i = 0; i < children(arg) && next_model < kLimit; ++i) {
        model.schedule(child_npu(arg, i), child_delay(arg, i), next_model++);
      }
    });
  }
  ASSERT_EQ(expected.size(), kLimit);  // the cascade really grew to the limit
  EXPECT_EQ(real_events, model_events);
  ASSERT_EQ(real.size(), expected.size());
  for (std::size_t i = 0; i < real.size(); ++i) ASSERT_EQ(real[i], expected[i]) << "entry " << i;
}

}  // namespace
}  // namespace chakrasim
