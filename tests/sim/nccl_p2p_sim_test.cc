// NCCL's point-to-point path in a run: a trace's sends to another node go through PXN's relay,
// and an all-to-all drawn as traffic waits for the few channels NCCL gives each peer.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chakra/trace_builder.h"
#include "sim/simulation.h"
#include "support/test_support.h"
#include "system/nccl/achieved.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
namespace nccl = system::nccl;

constexpr double kGiBPerGB = 1e9 / 1073741824.0;

sim::Inputs inputs_of(std::vector<chakra::TraceBuilder>& ranks, network::TopologySpec network) {
  sim::Inputs in;
  in.network = std::move(network);
  in.system = system_of("ring", 1, 1, 1);
  in.system.collectives = system::CollectiveModel::kNccl;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    in.graphs.push_back(
        std::make_shared<const chakra::Graph>(chakra::Graph::build(ranks[r].trace(), "r" + std::to_string(r))));
  }
  return in;
}

// Two nodes of 8 (450 GB/s a GPU inside, a 50 GB/s NIC each across) on the flow backend, NPU
// `from` sending 64 MiB to NPU `to`.
sim::Result one_send(NpuId from, NpuId to, bool pxn, bool rendezvous = false) {
  std::vector<chakra::TraceBuilder> ranks(16);
  ranks[from].send("s", static_cast<std::int32_t>(to), 5, 64 << 20);
  ranks[to].recv("r", static_cast<std::int32_t>(from), 5, 64 << 20);
  sim::Inputs in = inputs_of(ranks, network_of({{DimensionKind::kSwitch, 8, 450 * kGiBPerGB, 250},
                                                {DimensionKind::kSwitch, 2, 50 * kGiBPerGB, 1500}}));
  in.system = system_of("ring", 2, 1, 1);
  in.system.collectives = system::CollectiveModel::kNccl;
  in.system.nccl.pxn = pxn;
  in.system.rendezvous = rendezvous;
  in.backend = "flow";
  return sim::simulate(in);
}

TEST(NcclP2pRun, ASendToAnotherNodesRailGoesThroughTheGpuOnThatRail) {
  // NPU 0 to NPU 9 (node 1's second GPU): with PXN over NVLink to NPU 1, whose NIC is on NPU 9's
  // rail, then across, in 64 chunks of 1 MiB (64 MiB / 64, above 512 KiB), each chunk's second
  // leg leaving as its first arrives: 128 messages, received as NPU 0's one send.
  const sim::Result relayed = one_send(0, 9, true);
  ASSERT_TRUE(relayed.all_finished());
  EXPECT_EQ(relayed.messages, 128u);
  const sim::Result straight = one_send(0, 9, false);
  ASSERT_TRUE(straight.all_finished());
  EXPECT_EQ(straight.messages, 1u);
  // Both run at the NIC's 50 GB/s (1342 us); the relay adds its first chunk's NVLink leg (2.3
  // us), its second leg's latencies and the chunks' own.
  const auto relayed_us = static_cast<double>(relayed.npus[9].finish_ns) / 1000;
  const auto straight_us = static_cast<double>(straight.npus[9].finish_ns) / 1000;
  EXPECT_GT(relayed_us, straight_us + 2.3);
  EXPECT_LT(relayed_us, straight_us * 1.01) << straight_us;
  // The sender hears of it when its last chunk has arrived, as of a plain send.
  EXPECT_EQ(relayed.npus[0].finish_ns, relayed.npus[9].finish_ns);
  // A send on its own rail (NPU 0 to NPU 8) or inside the node goes straight.
  EXPECT_EQ(one_send(0, 8, true).messages, 1u);
  EXPECT_EQ(one_send(0, 3, true).messages, 1u);
  // With the rendezvous protocol the go-ahead comes first, then the same chunks.
  const sim::Result handshake = one_send(0, 9, true, true);
  ASSERT_TRUE(handshake.all_finished());
  EXPECT_EQ(handshake.messages, 129u);
}

// An all-to-all run as NCCL's cost takes `model_us`; as traffic, on idle links, that and at most 1% more.
void expect_cost_then_traffic_take(sim::Inputs in, double model_us) {
  const sim::Result cost = sim::simulate(in);
  ASSERT_TRUE(cost.all_finished());
  EXPECT_NEAR(static_cast<double>(cost.npus[0].finish_ns) / 1000, model_us, 0.01);
  in.system.collectives = system::CollectiveModel::kNcclTraffic;
  const sim::Result traffic = sim::simulate(in);
  ASSERT_TRUE(traffic.all_finished());
  const double traffic_us = static_cast<double>(traffic.npus[0].finish_ns) / 1000;
  EXPECT_GE(traffic_us, model_us);
  EXPECT_LE(traffic_us, model_us * 1.01);
}

TEST(NcclP2pRun, AsTrafficAnAllToAllWaitsForItsFewChannels) {
  // Two H100s of a node (450 GB/s each way, 250 ns a link) exchange halves of 256 MiB. NCCL runs
  // the one peer on 16 channels of 21 GB/s: 336 GB/s, below what the links carry of it (367),
  // so the model's time is 8.2 us of latency + the first step (a 512 KiB chunk at 21 GB/s) + 128
  // MiB / 336 GB/s = 432.6 us; as traffic the members wait out the difference and the first step
  // with the latency and end with it, the links' latency more.
  std::vector<chakra::TraceBuilder> ranks(2);
  for (auto& r : ranks) r.collective("a2a", chakra::CommType::kAllToAll, 256 << 20);
  sim::Inputs in = inputs_of(ranks, network_of({{DimensionKind::kSwitch, 2, 450 * kGiBPerGB, 250}}));
  in.backend = "flow";
  const double model_us = 8.2 + 512.0 * 1024 / (1000 * 21.0) + 128.0 * (1 << 20) / (1000 * 16 * 21.0);
  expect_cost_then_traffic_take(in, model_us);
}

TEST(NcclP2pRun, AsTrafficAnAllToAllOfEightRunsAtAnAllToAllsShareOfTheLinks) {
  // Eight H100s of a node exchange 512 MiB: 4 channels a peer (588 GB/s) outrun the links, which
  // carry an all-to-all's 450 x 0.776 x (1 - 0.311 / 4) = 322 GB/s: the model's time is 8.2 us +
  // the first step (a 512 KiB chunk at 21 GB/s) + 7/8 of 512 MiB at 322 GB/s = 1483 us, and the
  // traffic's pieces run at that share of the links, so it ends with it (and the links' latency).
  std::vector<chakra::TraceBuilder> ranks(8);
  for (auto& r : ranks) r.collective("a2a", chakra::CommType::kAllToAll, 512 << 20);
  sim::Inputs in = inputs_of(ranks, network_of({{DimensionKind::kSwitch, 8, 450 * kGiBPerGB, 250}}));
  in.backend = "flow";
  const double model_us =
      8.2 + 512.0 * 1024 / (1000 * 21.0) + 512.0 * (1 << 20) * 7 / 8 / (1000 * 450 * 0.776 * (1 - 0.311 / 4));
  expect_cost_then_traffic_take(in, model_us);
}

}  // namespace
}  // namespace chakrasim::test
