// Scheduling policies decide which waiting chunk a queue starts next (docs/astra-sim-model.md
// §1.3, §4.2). Three 1 MiB all-reduces A, B, C start at once on every NPU of a 4-NPU ring with one
// active chunk: A starts at once (nothing runs yet); B and C wait, ordered by priority. Each takes
// 79540 ns, so they end at 79540, 159080 and 238620.
//   LIFO (priorities 0, 1, 2): C before B.      FIFO (0, -1, -2): B before C.
//   EXPLICIT with comm_priority 1, 1, 5: C before B; with 5, 5, 1: B before C.
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "core/event_queue.h"
#include "core/npu_timers.h"
#include "network/network.h"
#include "support/test_support.h"
#include "system/system.h"

namespace chakrasim::system {
namespace {

struct Recorder final : CommListener {
  EventQueue* queue = nullptr;
  std::vector<std::pair<std::uint64_t, Tick>> done_on_npu0;  // (token, time)
  void on_comm_done(NpuId npu, std::uint64_t token) override {
    if (npu == 0) done_on_npu0.emplace_back(token, queue->now());
  }
};

std::vector<std::pair<std::uint64_t, Tick>> run_three(SchedulingPolicy policy, std::int32_t pa, std::int32_t pb,
                                                      std::int32_t pc) {
  const network::Topology topology(test::network_of({{network::DimensionKind::kRing, 4, 50, 500}}));
  SystemSpec spec = test::system_of("ring", 1, 1, 1);
  spec.scheduling_policy = policy;
  EventQueue queue;
  NpuTimers timers(queue, 4);
  Recorder recorder;
  recorder.queue = &queue;
  System system(spec, topology, timers, recorder);
  auto network = network::make_network("congestion-unaware", topology, queue, system);
  system.attach(*network);
  for (NpuId r = 0; r < 4; ++r) {
    std::uint64_t token = 1;
    for (std::int32_t priority : {pa, pb, pc}) {
      CollectiveRequest request;
      request.bytes = 1 << 20;
      request.priority = priority;
      system.start_collective(r, request, token++);
    }
  }
  while (!queue.empty()) {
    const Event e = queue.pop();
    if (e.target == EventTarget::kNetwork) {
      network->handle(e);
    } else {
      timers.fire(e, [&](const TimerEntry& entry) { system.handle_timer(entry); });
    }
  }
  return recorder.done_on_npu0;
}

using Order = std::vector<std::pair<std::uint64_t, Tick>>;
const Order kAcb = {{1, 79540}, {3, 159080}, {2, 238620}};
const Order kAbc = {{1, 79540}, {2, 159080}, {3, 238620}};

TEST(Scheduling, LifoRunsTheNewestWaitingFirst) { EXPECT_EQ(run_three(SchedulingPolicy::kLifo, 0, 0, 0), kAcb); }
TEST(Scheduling, FifoRunsTheOldestWaitingFirst) { EXPECT_EQ(run_three(SchedulingPolicy::kFifo, 0, 0, 0), kAbc); }
TEST(Scheduling, ExplicitFollowsCommPriority) {
  EXPECT_EQ(run_three(SchedulingPolicy::kExplicit, 1, 1, 5), kAcb);
  EXPECT_EQ(run_three(SchedulingPolicy::kExplicit, 5, 5, 1), kAbc);
}

}  // namespace
}  // namespace chakrasim::system
