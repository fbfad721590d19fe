// The event core alone: schedule/pop throughput with many events pending. The steady state
// pops one event and schedules one at a random future time, as a simulation does.
#include <benchmark/benchmark.h>

#include <random>

#include "core/event_queue.h"

namespace {

using chakrasim::EventQueue;
using chakrasim::EventTarget;

void BM_HoldModel(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  EventQueue q;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::uint64_t> delay(1, 100000);
  for (std::size_t i = 0; i < pending; ++i) q.schedule(delay(rng), EventTarget::kTimers, 0, 0, i);
  for (auto _ : state) {
    const auto e = q.pop();
    q.schedule(e.time + delay(rng), EventTarget::kTimers, 0, e.npu, e.arg);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HoldModel)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

// Zero-delay chains: everything goes through the current-time fast lane.
void BM_SameTimeLane(benchmark::State& state) {
  EventQueue q;
  q.schedule(1, EventTarget::kTimers, 0, 0, 0);
  for (auto _ : state) {
    const auto e = q.pop();
    q.schedule(e.time, EventTarget::kTimers, 0, e.npu, e.arg);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SameTimeLane);

}  // namespace
