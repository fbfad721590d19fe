// ASTRA-sim compatibility with the congestion-aware backend: the ring figures of
// docs/astra-sim-model.md §9 (CA column); EXPECTED.md is checked in reference_microbenchmarks_test.cc.
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
sim::Result run_ca(network::TopologySpec net, system::SystemSpec sys, chakra::CommType type, std::uint64_t bytes) {
  return run(one_collective(std::move(net), std::move(sys), type, bytes, "congestion-aware"));
}

struct MatrixCase {
  const char* name;
  DimensionKind topology;
  std::uint64_t splits;
  std::uint32_t active;
  Tick expected;
};
void PrintTo(const MatrixCase& c, std::ostream* os) { *os << c.name; }

class Ar8MatrixCa : public ::testing::TestWithParam<MatrixCase> {};

// Ring rows of the AR8 matrix, CA column. On a switch every step pays serialisation twice
// (up and down): 1 MiB splits 1 has steps of 131072 B, 2 x floor(500 + 2441.4) = 5882 ns, so
// 14(10 + 5882) + 7*7863 + 10 = 137539. With 4 active chunks the chunks queue on the links.
TEST_P(Ar8MatrixCa, RingRows) {
  const MatrixCase& c = GetParam();
  expect_all_finish(run_ca(network_of({{c.topology, 8, 50, 500}}), system_of("ring", 1, c.splits, c.active),
                           chakra::CommType::kAllReduce, kMiB),
                    c.expected);
}

INSTANTIATE_TEST_SUITE_P(Compat, Ar8MatrixCa,
                         ::testing::Values(MatrixCase{"Ring8_s1a1", DimensionKind::kRing, 1, 1, 96365},
                                           MatrixCase{"Switch8_s1a1", DimensionKind::kSwitch, 1, 1, 137539},
                                           MatrixCase{"FC8_s1a1", DimensionKind::kFullyConnected, 1, 1, 96365},
                                           MatrixCase{"Ring8_s4a1", DimensionKind::kRing, 4, 1, 117780},
                                           MatrixCase{"Switch8_s4a1", DimensionKind::kSwitch, 4, 1, 179940},
                                           MatrixCase{"FC8_s4a1", DimensionKind::kFullyConnected, 4, 1, 117780},
                                           MatrixCase{"Ring8_s4a4", DimensionKind::kRing, 4, 4, 39195},
                                           MatrixCase{"Switch8_s4a4", DimensionKind::kSwitch, 4, 4, 48075},
                                           MatrixCase{"FC8_s4a4", DimensionKind::kFullyConnected, 4, 4, 39195}),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(CompatCa, OtherCollectivesRing8) {
  const auto net = network_of({{DimensionKind::kRing, 8, 50, 500}});
  expect_all_finish(run_ca(net, system_of("ring", 1, 1, 1), chakra::CommType::kAllGather, kMiB), 140297);
  expect_all_finish(run_ca(net, system_of("ring", 1, 1, 1), chakra::CommType::kReduceScatter, kMiB), 75708);
  expect_all_finish(run_ca(net, system_of("ring", 1, 1, 1), chakra::CommType::kAllToAll, kMiB), 82638);
}

// HGX-H100-validated: Switch8 400 GB/s 936.25 ns, all-reduce 1 MiB, splits 4, active 2,
// local-mem-bw 3350: 57426 (CA).
TEST(CompatCa, HgxH100Validated) {
  auto sys = system_of("ring", 1, 4, 2);
  sys.local_mem_bw_gb_per_s = 3350;
  expect_all_finish(run_ca(network_of({{DimensionKind::kSwitch, 8, 400, 936.25}}), sys, chakra::CommType::kAllReduce,
                           kMiB),
                    57426);
}

// Ring_allgather_16npus: Ring16, all-gather 1 MiB, Ring_4chunks.json (splits 4, active 1,
// local-mem-bw 1600): 323560 (CA).
TEST(CompatCa, RingAllGather16) {
  auto sys = system_of("ring", 1, 4, 1);
  sys.local_mem_bw_gb_per_s = 1600;
  expect_all_finish(run_ca(network_of({{DimensionKind::kRing, 16, 50, 500}}), sys, chakra::CommType::kAllGather, kMiB),
                    323560);
}

// Our multi-dimensional extension, derived by hand. Network: dimension 0 a Ring of 4 at 50 GB/s
// and 500 ns, dimension 1 a Switch of 2 at 100 GB/s and 1000 ns; NPU = c0 + 4 c1.
// NPU 1 (1,0) sends 1 MiB to NPU 6 (2,1); NPU 2 (2,0) sends 2 MiB to NPU 6 at the same time.
//  - NPU 2's message: up-link 2 busy 0-19531 (2097152 / 107.374 B/ns), at the switch at
//    floor(1000 + 19531.25) = 20531; down-link 6 busy 20531-40062, at NPU 6 at 41062.
//  - NPU 1's message goes along dimension 0 first: ring link 1->2, at NPU 2 at
//    floor(500 + 19531.25) = 20031; up-link 2 is free again: at the switch at
//    20031 + floor(1000 + 9765.6) = 30796; down-link 6 is busy until 40062, so it waits and
//    arrives at 40062 + 10765 = 50827.
// Sends complete at arrival: NPU 1 at 50827, NPU 2 at 41062; NPU 6 receives both by 50827.
TEST(CongestionAwareMultiDim, RoutesDimensionByDimensionAndQueues) {
  auto p2p = [](std::vector<std::tuple<bool, int, std::uint64_t, int>> ops) {
    chakra::TraceBuilder b;
    for (auto [send, peer, bytes, tag] : ops) {
      chakra::Node& n = b.add(send ? chakra::NodeType::kCommSend : chakra::NodeType::kCommRecv, send ? "send" : "recv");
      *n.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", peer);
      *n.add_attr() = chakra::make_int64("comm_size", static_cast<std::int64_t>(bytes));
      *n.add_attr() = chakra::make_int32("comm_tag", tag);
    }
    if (ops.empty()) b.comp("idle", 1);
    return std::make_shared<const chakra::Graph>(chakra::Graph::build(b.trace(), "p2p"));
  };
  sim::Inputs in;
  in.backend = "congestion-aware";
  in.network = network_of({{DimensionKind::kRing, 4, 50, 500}, {DimensionKind::kSwitch, 2, 100, 1000}});
  in.system = system_of("ring", 2, 1, 1);
  auto idle = p2p({});
  in.graphs = {idle,
               p2p({{true, 6, kMiB, 1}}),
               p2p({{true, 6, 2 * kMiB, 2}}),
               idle,
               idle,
               idle,
               p2p({{false, 1, kMiB, 1}, {false, 2, 2 * kMiB, 2}}),
               idle};
  const sim::Result r = run(in);
  ASSERT_TRUE(r.all_finished());
  EXPECT_EQ(r.npus[1].finish_ns, 50827u);
  EXPECT_EQ(r.npus[2].finish_ns, 41062u);
  EXPECT_EQ(r.npus[6].finish_ns, 50827u);
  EXPECT_EQ(r.npus[0].finish_ns, 1000u);
}

}  // namespace
}  // namespace chakrasim::test

namespace chakrasim::test {
namespace {

// The queue quirk of §4.2: with --num-queues-per-dim=2 a localBWAware all-reduce on one
// dimension draws only from the first half of the queues, so 4 active chunks become 2 per
// queue on queue 0 alone: AR8 1 MiB, splits 4, CA, 39195 -> 60790.
TEST(CompatCa, TwoQueuesPerDimensionHalveConcurrency) {
  auto sys = system_of("ring", 1, 4, 4);
  EXPECT_EQ(run_ca(network_of({{network::DimensionKind::kRing, 8, 50, 500}}), sys, chakra::CommType::kAllReduce,
                   1 << 20)
                .npus[0]
                .finish_ns,
            39195u);
  sys.num_queues_per_dim = 2;
  const sim::Result r =
      run_ca(network_of({{network::DimensionKind::kRing, 8, 50, 500}}), sys, chakra::CommType::kAllReduce, 1 << 20);
  for (const auto& n : r.npus) EXPECT_EQ(n.finish_ns, 60790u);
}

}  // namespace
}  // namespace chakrasim::test
