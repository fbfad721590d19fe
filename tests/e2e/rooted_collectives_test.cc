// Broadcast, reduce, gather, scatter, barrier and reduce-scatter (block) on the system layer
// (docs/astra-sim-model.md §3.5): each runs as the native collective that moves the same bytes
// over every member's links as NCCL's ring form, so each must take exactly the time of that
// native collective; a barrier must hold every NPU until the last arrives; and BROADCAST keeps
// the reference's replay by duration unless the system says otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/trace_builder.h"
#include "report/analysis.h"
#include "report/node_log.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using chakra::CommType;
using network::DimensionKind;

sim::Inputs ring_of_8(CommType type, std::uint64_t bytes, const std::string& backend = "congestion-aware") {
  system::SystemSpec sys = system_of("ring", 1, 4, 1);
  sys.broadcast_by_duration = false;
  return one_collective(network_of({{DimensionKind::kRing, 8, 50, 500}}), sys, type, bytes, backend);
}

Tick finish_of(const sim::Inputs& in) {
  const sim::Result r = run(in);
  EXPECT_TRUE(r.all_finished());
  return r.max_finish_ns();
}

// A broadcast of S from one NPU, in NCCL's ring form, sends S over every link of the chain: the
// all-gather of S/(n-1) per NPU does the same in n-1 steps. 7 MiB on 8 NPUs: 1 MiB shards.
TEST(RootedCollectives, BroadcastRunsAsTheAllGatherOfItsShare) {
  for (const char* backend : {"congestion-unaware", "congestion-aware"}) {
    EXPECT_EQ(finish_of(ring_of_8(CommType::kBroadcast, 7 * kMiB, backend)),
              finish_of(ring_of_8(CommType::kAllGather, kMiB, backend)))
        << backend;
    // Not a multiple of n-1: the share rounds up, 1 MiB + 1 B for 7 MiB + 1 B.
    EXPECT_EQ(finish_of(ring_of_8(CommType::kBroadcast, 7 * kMiB + 1, backend)),
              finish_of(ring_of_8(CommType::kAllGather, kMiB + 1, backend)))
        << backend;
  }
  // It cannot beat the link: S / (50 GiB/s) = 7 MiB / 53.687 B/ns = 136,719 ns; seven steps of
  // 500 ns latency each come on top of that at most a few times over.
  const Tick t = finish_of(ring_of_8(CommType::kBroadcast, 7 * kMiB));
  EXPECT_GE(t, 136719u);
  EXPECT_LE(t, 136719u + 4 * 7 * 500u + 7 * 4 * 20);
}

// A reduce of S to one NPU sends S over every link too: the reduce-scatter of S x n/(n-1).
TEST(RootedCollectives, ReduceRunsAsTheReduceScatterThatMovesTheSameBytes) {
  EXPECT_EQ(finish_of(ring_of_8(CommType::kReduce, 7 * kMiB)),
            finish_of(ring_of_8(CommType::kReduceScatter, 8 * kMiB)));
}

// Gather and scatter of x per member: the root's link carries the other n-1 pieces, as in the
// all-gather of x; reduce-scatter (block) is a reduce-scatter.
TEST(RootedCollectives, GatherScatterAndBlockReduceScatter) {
  const Tick all_gather = finish_of(ring_of_8(CommType::kAllGather, kMiB));
  EXPECT_EQ(finish_of(ring_of_8(CommType::kGather, kMiB)), all_gather);
  EXPECT_EQ(finish_of(ring_of_8(CommType::kScatter, kMiB)), all_gather);
  EXPECT_EQ(finish_of(ring_of_8(CommType::kReduceScatterBlock, kMiB)),
            finish_of(ring_of_8(CommType::kReduceScatter, kMiB)));
}

// A barrier is a zero-byte all-reduce: it takes the latency-bound all-reduce's time, and no NPU
// leaves it before the last one has entered. NPU 3 computes 10 us first; every NPU's barrier
// ends after that.
TEST(RootedCollectives, BarrierHoldsEveryNpuUntilTheLastArrives) {
  EXPECT_EQ(finish_of(ring_of_8(CommType::kBarrier, 0)), finish_of(ring_of_8(CommType::kAllReduce, 0)));
  EXPECT_GT(finish_of(ring_of_8(CommType::kBarrier, 0)), 0u);
  sim::Inputs in = ring_of_8(CommType::kBarrier, 0);
  chakra::TraceBuilder late;
  late.comp("late", 10);
  late.collective("barrier", CommType::kBarrier, 0, {0});
  auto graphs = in.graphs;
  graphs[3] = std::make_shared<const chakra::Graph>(chakra::Graph::build(late.trace(), "late"));
  in.graphs = graphs;
  const sim::Result r = run(in);
  ASSERT_TRUE(r.all_finished());
  for (const sim::NpuResult& n : r.npus) EXPECT_GT(n.finish_ns, 10000u);
}

// The reference replays a broadcast for its recorded duration; that stays the default.
TEST(RootedCollectives, BroadcastByDurationIsTheDefault) {
  sim::Inputs in = ring_of_8(CommType::kBroadcast, 7 * kMiB);
  in.system.broadcast_by_duration = true;
  EXPECT_EQ(finish_of(in), 1u);  // no recorded duration: the replay's minimum of 1 ns
}

// On a communicator group of 4, n is the group's size: the broadcast of 3 MiB runs as the
// all-gather of 1 MiB on the group.
TEST(RootedCollectives, GroupSizeSetsTheShare) {
  auto on_group = [](CommType type, std::uint64_t bytes) {
    sim::Inputs in = ring_of_8(type, bytes);
    for (NpuId n = 0; n < 8; ++n) {
      chakra::TraceBuilder b;
      b.collective("c", type, bytes);
      b.at(0).attr(chakra::make_string("pg_name", n % 2 == 0 ? "1" : "2"));
      in.graphs[n] = std::make_shared<const chakra::Graph>(chakra::Graph::build(b.trace(), "group"));
    }
    in.groups = {{1, {0, 2, 4, 6}}, {2, {1, 3, 5, 7}}};
    return finish_of(in);
  };
  EXPECT_EQ(on_group(CommType::kBroadcast, 3 * kMiB), on_group(CommType::kAllGather, kMiB));
}

// The report names them and gives nccl-tests' figures: a broadcast's size is its buffer and its
// busbw its algbw; a barrier has none.
TEST(RootedCollectives, ReportRowsFollowNcclTests) {
  const sim::Inputs in = ring_of_8(CommType::kBroadcast, 7 * kMiB);
  report::NodeLog log(8);
  report::simulate_recorded(in, log);
  const auto rows = report::collective_rows(in, log, 0);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kind, "broadcast");
  EXPECT_EQ(rows[0].bytes, 7 * kMiB);
  EXPECT_DOUBLE_EQ(rows[0].busbw_gb_per_s, rows[0].algbw_gb_per_s);
  const auto barrier = report::nccl_tests_size(CommType::kBarrier, 0, 8);
  EXPECT_EQ(barrier.bytes, 0u);
  EXPECT_DOUBLE_EQ(barrier.bus_factor, 0);
}

}  // namespace
}  // namespace chakrasim::test
