// `--collectives nccl`: a run's collectives take the NCCL model's time from their last member's
// start; the rest of the run is as ever.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/trace_builder.h"
#include "config/system_config.h"
#include "report/analysis.h"
#include "report/node_log.h"
#include "sim/simulation.h"
#include "support/test_support.h"
#include "system/nccl/nccl_collectives.h"
#include "system/nccl_test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
using ::testing::HasSubstr;
namespace nccl = system::nccl;
using nccl::Enabled;

// The model's time for `bytes` of `c` on a machine of `gpus` GPUs a node and `nodes` nodes, as a
// run makes the call (in place: nccl_collectives.cc), truncated to the ns as the run's clock
// holds it.
Tick model_ns(nccl::Collective c, std::uint64_t bytes, std::uint32_t gpus, std::uint32_t nodes) {
  return static_cast<Tick>(
      nccl::AchievedModel(nccl::dgx("H100", gpus, nodes, gpus), nccl::in_place(Enabled::all())).time(c, bytes).us *
      1000);
}

sim::Inputs inputs_of(std::vector<chakra::TraceBuilder>& ranks, std::uint32_t npus) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kSwitch, 8, 400, 250}, {DimensionKind::kSwitch, npus / 8, 50, 1500}});
  in.system = system_of("ring", 2, 1, 1);
  in.system.collectives = system::CollectiveModel::kNccl;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    in.graphs.push_back(
        std::make_shared<const chakra::Graph>(chakra::Graph::build(ranks[r].trace(), "r" + std::to_string(r))));
  }
  return in;
}

// One node of 8 NPUs, each calling one collective of `type` and `bytes`, on the NCCL model with
// `spec`'s keys.
sim::Result one_node_run(chakra::CommType type, std::uint64_t bytes, const system::NcclSpec& spec) {
  std::vector<chakra::TraceBuilder> ranks(8);
  for (auto& r : ranks) r.collective("c", type, bytes);
  sim::Inputs in = inputs_of(ranks, 8);
  in.system.nccl = spec;
  return sim::simulate(in);
}

TEST(NcclCollectives, ACollectiveTakesTheModelsTimeFromItsLastMember) {
  // 16 NPUs, two nodes of 8: NPU 3 computes 7 us first; everyone then all-reduces 64 MiB. All
  // finish together, 7 us plus the model's time for 2 x 8 H100s.
  std::vector<chakra::TraceBuilder> ranks(16);
  for (std::uint32_t r = 0; r < 16; ++r) {
    if (r == 3) {
      ranks[r].comp("late", 7);
      ranks[r].collective("ar", chakra::CommType::kAllReduce, 64 << 20, {0});
    } else {
      ranks[r].collective("ar", chakra::CommType::kAllReduce, 64 << 20);
    }
  }
  sim::Inputs in = inputs_of(ranks, 16);
  const sim::Result result = sim::simulate(in);
  ASSERT_TRUE(result.all_finished());
  const Tick expected = 7000 + model_ns(nccl::Collective::kAllReduce, 64 << 20, 8, 2);
  for (const sim::NpuResult& n : result.npus) EXPECT_EQ(n.finish_ns, expected);
  // No collective bytes cross the network: the model is the cost alone.
  EXPECT_EQ(result.messages, 0u);
}

TEST(NcclCollectives, ARunsAllGatherIsInPlace) {
  // One node of 8 H100s all-gathers 128 MiB shards (a 1 GiB output) on the ring. A trace does
  // not say whether the shard sits inside the output; a run takes it that it does (FSDP2's and
  // Megatron's all-gathers), so the ring copies no shard of its own: the in-place time, 40 us
  // (128 MiB at 3350 GB/s) under nccl-tests' out-of-place column.
  std::vector<chakra::TraceBuilder> ranks(8);
  for (auto& r : ranks) r.collective("ag", chakra::CommType::kAllGather, 128 << 20);
  sim::Inputs in = inputs_of(ranks, 8);
  in.network = network_of({{DimensionKind::kSwitch, 8, 400, 250}});
  in.system = system_of("ring", 1, 1, 1);
  in.system.collectives = system::CollectiveModel::kNccl;
  const sim::Result result = sim::simulate(in);
  ASSERT_TRUE(result.all_finished());
  EXPECT_EQ(result.npus[0].finish_ns, model_ns(nccl::Collective::kAllGather, 1 << 30, 8, 1));
  const auto out_of_place_ns = static_cast<Tick>(
      nccl::AchievedModel(nccl::dgx(), Enabled::all()).time(nccl::Collective::kAllGather, 1 << 30).us * 1000);
  EXPECT_NEAR(static_cast<double>(out_of_place_ns - result.npus[0].finish_ns), (128 << 20) / 3350e3 * 1000, 1.0);
}

TEST(NcclCollectives, AGroupIsTheMachineItsMembersSpan) {
  // Group 1: NPUs 0 and 8, one in each node: NCCL tunes for 2 nodes of 1 GPU (each its own NIC).
  // An all-gather's bytes are a member's shard; NCCL's size is the output, x 2.
  std::vector<chakra::TraceBuilder> ranks(16);
  for (std::uint32_t r = 0; r < 16; ++r) {
    if (r == 0 || r == 8) {
      ranks[r].collective("ag", chakra::CommType::kAllGather, 1 << 20);
      ranks[r].at(0).attr(chakra::make_string("pg_name", "1"));
    } else {
      ranks[r].comp("idle", 1);
    }
  }
  sim::Inputs in = inputs_of(ranks, 16);
  in.groups[1] = {0, 8};
  report::NodeLog log(16);
  const sim::Result result = report::simulate_recorded(in, log);
  ASSERT_TRUE(result.all_finished());
  EXPECT_EQ(result.npus[0].finish_ns, model_ns(nccl::Collective::kAllGather, 2 << 20, 1, 2));
  EXPECT_EQ(result.npus[8].finish_ns, result.npus[0].finish_ns);
  // The report names NCCL's choice.
  const auto rows = report::collective_rows(in, log, 0);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(rows[0].algorithm, HasSubstr("NCCL "));
  EXPECT_THAT(rows[0].algorithm, HasSubstr("/"));
}

// One H100 node drawn as the network says it (a switch, 450 GB/s per GPU and direction, 250 ns
// a link), its 8 GPUs running one all-reduce of `bytes` as NCCL's traffic, NCCL_ALGO and
// NCCL_PROTO as given ("": all).
sim::Inputs one_node_all_reduce(std::uint64_t bytes, const std::string& backend, const std::string& algo,
                                const std::string& proto = "") {
  std::vector<chakra::TraceBuilder> ranks(8);
  for (auto& r : ranks) r.collective("ar", chakra::CommType::kAllReduce, bytes);
  sim::Inputs in = inputs_of(ranks, 8);
  in.network = network_of({{DimensionKind::kSwitch, 8, 450e9 / 1073741824.0, 250}});
  in.system = system_of("ring", 1, 1, 1);
  in.backend = backend;
  in.system.collectives = system::CollectiveModel::kNcclTraffic;
  in.system.nccl.algo = algo;
  in.system.nccl.proto = proto;
  return in;
}

// The model of one H100 node with NCCL_ALGO and NCCL_PROTO as given ("": all).
nccl::AchievedModel one_node_model(const std::string& algo, const std::string& proto = "") {
  Enabled enabled = Enabled::all();
  if (!algo.empty()) nccl::apply_enable_list(enabled, algo, true, "test");
  if (!proto.empty()) nccl::apply_enable_list(enabled, proto, false, "test");
  return nccl::AchievedModel(nccl::dgx(), enabled);
}

TEST(NcclCollectives, AsTrafficOnAnIdleNetworkItTakesTheModelsTime) {
  // One H100 node drawn as the network says it (a switch, 450 GB/s per GPU and direction, 250 ns
  // a link): a 256 MiB all-reduce run as NCCL's ring traffic takes the model's time plus the
  // network's latency per step (2 links of 250 ns, 14 steps), NCCL's latency holding a step's
  // own cost already; the pieces carry their bytes over NCCL's share of the links. NVLS is out:
  // traffic runs NCCL's choice among Ring and NVLS, and Ring is asked for here.
  const sim::Result result = sim::simulate(one_node_all_reduce(256 << 20, "congestion-aware", "Ring"));
  ASSERT_TRUE(result.all_finished());
  EXPECT_EQ(result.messages, 8u * 14 * 8);  // 14 ring steps, a piece to the next member, in 8 slices
  const double model_us = *one_node_model("Ring").time_us(nccl::Collective::kAllReduce, nccl::Algorithm::kRing,
                                                          nccl::Protocol::kSimple, 256 << 20);
  const double traffic_us = static_cast<double>(result.npus[0].finish_ns) / 1000;
  // The congestion-aware backend stores and forwards at the switch; with 8 slices in flight a
  // slice's second hop overlaps the next one's first, and what is left is about a slice's length
  // per ring: within 1.5% on top of the latencies.
  EXPECT_GE(traffic_us, model_us + 14 * 0.5);
  EXPECT_LE(traffic_us, (model_us + 14 * 0.5) * 1.015) << model_us;
}

TEST(NcclCollectives, AsTrafficASmallLLCallWaitsForItsFewChannels) {
  // A 32 KiB ring LL all-reduce on one H100 node runs on one channel, slower than its links
  // (call_channels.h): the members wait the difference with NCCL's latency, so on an idle
  // network the call takes the model's time plus the network's latency per step (14 steps of
  // two 250 ns links), as a large call does, within 2% (the slices' hops overlap a little);
  // without the wait it would end 4.4 us sooner.
  const sim::Result result = sim::simulate(one_node_all_reduce(32 << 10, "congestion-aware", "Ring", "LL"));
  ASSERT_TRUE(result.all_finished());
  const nccl::AchievedModel model = one_node_model("Ring", "LL");
  const double model_us =
      *model.time_us(nccl::Collective::kAllReduce, nccl::Algorithm::kRing, nccl::Protocol::kLL, 32 << 10);
  ASSERT_GT(model.ll_channels_us(nccl::Collective::kAllReduce, nccl::Algorithm::kRing, nccl::Protocol::kLL, 32 << 10),
            4.0);
  const double traffic_us = static_cast<double>(result.npus[0].finish_ns) / 1000;
  EXPECT_GE(traffic_us, (model_us + 14 * 0.5) * 0.98) << model_us;
  EXPECT_LE(traffic_us, (model_us + 14 * 0.5) * 1.02) << model_us;
}

TEST(NcclCollectives, AsTrafficNvlsInOneNodeTakesTheModelsTimeAtEverySize) {
  // One H100 node as above, NVLS all-reduces of 16 MiB (32 KiB chunks: each loop's fixed cost is a
  // quarter of its time) and 256 MiB (64 KiB): the exchange runs at the share of the links the
  // model's loops leave, after NCCL's latency and the pipeline's fill, so it takes the model's
  // time, plus a message's two 250 ns links, within 2% on flow. Congestion-aware stores each
  // exchange message whole at the switch before its second hop, one message per peer: up to 15%
  // later (as before the loops were modelled).
  for (const std::uint64_t bytes : {std::uint64_t{16} << 20, std::uint64_t{256} << 20}) {
    for (const std::string backend : {"congestion-aware", "flow"}) {
      const sim::Result result = sim::simulate(one_node_all_reduce(bytes, backend, "NVLS"));
      ASSERT_TRUE(result.all_finished());
      const double model_us = *one_node_model("NVLS").time_us(nccl::Collective::kAllReduce, nccl::Algorithm::kNvls,
                                                              nccl::Protocol::kSimple, bytes);
      Tick last = 0;
      for (const sim::NpuResult& n : result.npus) last = std::max(last, n.finish_ns);
      const double traffic_us = static_cast<double>(last) / 1000;
      EXPECT_GE(traffic_us, model_us * 0.99) << bytes << " " << backend;
      EXPECT_LE(traffic_us, (model_us + 0.5) * (backend == "flow" ? 1.02 : 1.15)) << bytes << " " << backend;
    }
  }
}

TEST(NcclCollectives, AsTrafficAcrossNodesEachNicCarriesAChannel) {
  // 2 nodes of 8 on a second switch dimension of NICs: NCCL's ring runs a channel per NIC, each
  // entering a node at another GPU, each in 8 slices: 16 members x 30 steps x 64 pieces cross
  // the network; the collective's bytes are the run's messages.
  std::vector<chakra::TraceBuilder> ranks(16);
  for (auto& r : ranks) r.collective("ar", chakra::CommType::kAllReduce, 64 << 20);
  // The presets' rates (the network's are GiB/s): NVLink 450 GB/s a GPU, a 400G NIC's 50.
  const network::TopologySpec dgx_pair = network_of(
      {{DimensionKind::kSwitch, 8, 450e9 / 1073741824.0, 250}, {DimensionKind::kSwitch, 2, 50e9 / 1073741824.0, 1500}});
  sim::Inputs in = inputs_of(ranks, 16);
  in.network = dgx_pair;
  in.backend = "congestion-aware";  // it charges each link, NICs included
  in.system.collectives = system::CollectiveModel::kNcclTraffic;
  in.system.nccl.algo = "Ring";
  const sim::Result result = sim::simulate(in);
  ASSERT_TRUE(result.all_finished());
  EXPECT_EQ(result.messages, 16u * 30 * 8 * 8);
  // Against the cost alone: the same order, the ring bound by the NICs either way.
  sim::Inputs cost = inputs_of(ranks, 16);
  cost.network = dgx_pair;
  cost.system.nccl.algo = "Ring";
  const Tick cost_ns = sim::simulate(cost).npus[0].finish_ns;
  // The NICs bound both; the traffic adds a slice's store and forward over the NVLink hop and
  // each message's latency (1.5 us a NIC link): within 10%, above.
  EXPECT_GE(result.npus[0].finish_ns, cost_ns);
  EXPECT_LE(static_cast<double>(result.npus[0].finish_ns), 1.1 * static_cast<double>(cost_ns));
  // A backend that serves every message at full rate would let the channels pass each other.
  in.backend = "congestion-unaware";
  EXPECT_THAT(error_of([&] { sim::simulate(in); }), HasSubstr("the congestion-unaware backend serves every message"));
}

TEST(NcclCollectives, AsTrafficAcrossNodesARingsLinksCarryAllButItsHopOut) {
  // 2 and 3 nodes of 8 H100s (450 GB/s of NVLink a GPU) with an XDR 800G NIC each (100 GB/s):
  // the NVLinks bind the ring. Each of the 8 channels' rings leaves a node once, by a NIC, so 7
  // of its 8 hops in a node cross NVLink: traffic and cost both run at NVLink x 8/7 (the cost as
  // achieved.cc draws it, the traffic by the links it crosses), where a ring in one node has all
  // 8 hops on NVLink.
  for (const std::uint32_t nodes : {2u, 3u}) {
    const std::uint32_t npus = 8 * nodes;
    std::vector<chakra::TraceBuilder> ranks(npus);
    for (auto& r : ranks) r.collective("ar", chakra::CommType::kAllReduce, 256 << 20);
    sim::Inputs in = inputs_of(ranks, npus);
    in.network = network_of({{DimensionKind::kSwitch, 8, 450e9 / 1073741824.0, 250},
                             {DimensionKind::kSwitch, nodes, 100e9 / 1073741824.0, 1500}});
    in.backend = "congestion-aware";
    in.system.nccl.algo = "Ring";
    in.system.nccl.nic = "xdr800";
    const Tick cost_ns = sim::simulate(in).npus[0].finish_ns;
    in.system.collectives = system::CollectiveModel::kNcclTraffic;
    const sim::Result traffic = sim::simulate(in);
    ASSERT_TRUE(traffic.all_finished());
    // The model's time grows by the bus bytes at NVLink x 0.816 x 8/7 = 419.7 GB/s: on 2 nodes,
    // from 256 to 512 MiB by 2 x 15/16 x 256 MiB / 419.7 = 1199 us.
    nccl::Machine machine = nccl::dgx("H100", 8, nodes);
    machine.nic = &nccl::nic_preset("xdr800");
    Enabled ring = Enabled::all();
    nccl::apply_enable_list(ring, "Ring", true, "test");
    const nccl::AchievedModel model(machine, ring);
    const auto ar = nccl::Collective::kAllReduce;
    const double model_us = model.time(ar, 256 << 20).us;
    const double n = npus;
    EXPECT_NEAR(model.time(ar, 512 << 20).us - model_us, 2.0 * (n - 1) / n * (256 << 20) / (1000 * 450 * 0.816 * 8 / 7),
                0.01);
    EXPECT_NEAR(static_cast<double>(cost_ns) / 1000, model_us, 0.01);
    // The traffic on the links it crosses: within 2% (a ring whose hop between nodes also crossed
    // NVLink would be 11% slower).
    EXPECT_NEAR(static_cast<double>(traffic.npus[0].finish_ns) / static_cast<double>(cost_ns), 1.0, 0.02) << nodes;
  }
}

TEST(NcclCollectives, AsTrafficItMeetsOtherTrafficOnTheLinks) {
  // An all-reduce of 64 MiB on the 2 nodes' NPUs but NPU 1, once alone and once while NPU 1
  // sends 256 MiB to NPU 2, a member, over the links of node 0 (a workload's receive runs beside
  // a collective): as traffic the ring's pieces into NPU 2 queue behind the send's and the
  // all-reduce ends later; as the cost alone it cannot see the send.
  auto all_reduce_end = [](system::CollectiveModel model, bool with_send) {
    std::vector<chakra::TraceBuilder> ranks(16);
    std::vector<NpuId> members;
    for (NpuId r = 0; r < 16; ++r) {
      if (r == 1) {
        if (with_send) ranks[r].send("bulk", 2, 7, 256 << 20);
        continue;
      }
      members.push_back(r);
      ranks[r].collective("ar", chakra::CommType::kAllReduce, 64 << 20);
      ranks[r].at(0).attr(chakra::make_string("pg_name", "1"));
      if (with_send && r == 2) ranks[r].recv("bulk", 1, 7, 256 << 20);
    }
    sim::Inputs in = inputs_of(ranks, 16);
    in.groups[1] = members;
    in.backend = "congestion-aware";
    in.system.collectives = model;
    in.system.nccl.algo = "Ring";
    const sim::Result result = sim::simulate(in);
    EXPECT_TRUE(result.all_finished());
    return result.npus[0].finish_ns;  // NPU 0 runs the all-reduce and nothing else
  };
  const Tick alone = all_reduce_end(system::CollectiveModel::kNcclTraffic, false);
  const Tick beside = all_reduce_end(system::CollectiveModel::kNcclTraffic, true);
  EXPECT_GT(beside, alone + alone / 10) << alone;
  EXPECT_EQ(all_reduce_end(system::CollectiveModel::kNccl, true),
            all_reduce_end(system::CollectiveModel::kNccl, false));
}

TEST(NcclCollectives, AsTrafficTreesCarryTheBufferUpAndDown) {
  // NCCL's trees as traffic on 2 and 4 nodes of 8 (congestion-aware): a channel per NIC, two
  // trees each (a chain through each node from its c-th member, a binary tree over the nodes),
  // half the buffer a tree in 512 KiB chunks, 4 in flight per tree and direction. Every edge of
  // every tree carries each chunk once up and once down.
  for (const std::uint32_t npus : {16u, 32u}) {
    std::vector<chakra::TraceBuilder> ranks(npus);
    for (auto& r : ranks) r.collective("ar", chakra::CommType::kAllReduce, 512 << 20);
    sim::Inputs in = inputs_of(ranks, npus);
    in.backend = "congestion-aware";
    in.system.nccl.algo = "Tree";
    const Tick cost_ns = sim::simulate(in).npus[0].finish_ns;
    in.system.collectives = system::CollectiveModel::kNcclTraffic;
    const sim::Result result = sim::simulate(in);
    ASSERT_TRUE(result.all_finished());
    // 8 channels x 2 trees x (npus - 1) edges x 2 directions x 256 MiB / 8 / 512 KiB chunks.
    EXPECT_EQ(result.messages, 8u * 2 * (npus - 1) * 2 * 64) << npus;
    // On 2 nodes the chains bound it: the model charges a chain's GPU the buffer twice each way,
    // but the chains' ends send less (a GPU is a chain's head or tail in 4 of its 16 trees): 1.75
    // where the model says 2, so the traffic ends up to an eighth sooner. On 4 nodes the NICs:
    // NCCL's trees load the busiest node's with the buffer twice, as the model has it (0 -> 2 ->
    // {1, 3} and its mirror: node 2 sends a chunk up and two down in one, up in the other), and
    // its 48 x 2 chunks a channel pay the network's latency too: up to 6% later.
    Tick last = 0;
    for (const sim::NpuResult& n : result.npus) last = std::max(last, n.finish_ns);
    const double ratio = static_cast<double>(last) / static_cast<double>(cost_ns);
    if (npus == 16) {
      EXPECT_GE(ratio, 0.85);
      EXPECT_LE(ratio, 1.0);
    } else {
      EXPECT_GE(ratio, 1.0);
      EXPECT_LE(ratio, 1.06);
    }
  }
}

TEST(NcclCollectives, AsTrafficStagedFormsAndPatTakeTheModelsTime) {
  // NVLS-tree, CollNet and NVLS across nodes (reduce-scatter in the node, the shares across,
  // all-gather in the node, a pipeline of chunks) and PAT (log2 steps, one GPU a node), on nodes
  // of 8 drawn with the presets' own rates (an H100's 450 GB/s NVLink, an NDR 400G NIC's 50
  // GB/s), on both fabric backends: on an idle network each takes the model's time, plus the
  // network's latency and the pipeline's fill, within 2%. Two exceptions, each the backend's
  // way of sharing, not the shape's:
  //  * PAT on congestion-aware: a message is stored whole at the switch before its second hop,
  //    and PAT's last step moves half the buffer, in 8 slices: up to an eighth of a step later.
  //  * NVLS-tree over 4 nodes on flow: node 2 is inner in the first tree (a chunk up, two down)
  //    and a leaf in the second, node 1 the reverse; a max-min share gives each of a NIC's flows
  //    as much, so each tree is slowed at the other's inner node, and neither NIC is kept full:
  //    up to 10% later. (Congestion-aware serves the flows first come first served: 1%.)
  struct Case {
    const char* algo;
    std::uint32_t npus;
    bool collnet;
    chakra::CommType type;
    std::uint64_t bytes;
  };
  for (const Case& c : std::vector<Case>{{"NVLSTree", 16, false, chakra::CommType::kAllReduce, 512 << 20},
                                         {"NVLSTree", 32, false, chakra::CommType::kAllReduce, 512 << 20},
                                         {"CollnetDirect", 32, true, chakra::CommType::kAllReduce, 512 << 20},
                                         {"CollnetChain", 16, true, chakra::CommType::kAllReduce, 256 << 20},
                                         {"NVLS", 32, true, chakra::CommType::kAllReduce, 512 << 20},
                                         {"PAT", 64, false, chakra::CommType::kAllGather, 16 << 20},
                                         {"PAT", 48, false, chakra::CommType::kReduceScatter, 96 << 20}}) {
    for (const std::string backend : {"congestion-aware", "flow"}) {
      const bool pat = std::string(c.algo) == "PAT";  // its communicator: one GPU of each node
      std::vector<chakra::TraceBuilder> ranks(c.npus);
      std::vector<NpuId> members;
      for (NpuId r = 0; r < c.npus; ++r) {
        if (pat && r % 8 != 0) {
          ranks[r].comp("idle", 1);
          continue;
        }
        members.push_back(r);
        ranks[r].collective("x", c.type, c.bytes);
        if (pat) ranks[r].at(0).attr(chakra::make_string("pg_name", "1"));
      }
      sim::Inputs in = inputs_of(ranks, c.npus);
      in.network = network_of({{DimensionKind::kSwitch, 8, 450e9 / 1073741824.0, 250},
                               {DimensionKind::kSwitch, c.npus / 8, 50e9 / 1073741824.0, 1500}});
      if (pat) in.groups[1] = members;
      in.backend = backend;
      in.system.nccl.algo = c.algo;
      in.system.nccl.collnet = c.collnet;
      report::NodeLog log(c.npus);
      in.system.collectives = system::CollectiveModel::kNcclTraffic;
      const sim::Result result = report::simulate_recorded(in, log);
      ASSERT_TRUE(result.all_finished());
      // The report names the algorithm run.
      EXPECT_THAT(report::collective_rows(in, log, 0).at(0).algorithm, HasSubstr(std::string("NCCL ") + c.algo + "/"));
      in.system.collectives = system::CollectiveModel::kNccl;
      const Tick cost_ns = sim::simulate(in).npus[0].finish_ns;
      Tick last = 0;
      for (const sim::NpuResult& n : result.npus) last = std::max(last, n.finish_ns);
      const double ratio = static_cast<double>(last) / static_cast<double>(cost_ns);
      double most = 1.02;
      if (pat && backend == "congestion-aware") most = 1.08;
      if (std::string(c.algo) == "NVLSTree" && c.npus == 32 && backend == "flow") most = 1.10;
      EXPECT_GE(ratio, 0.99) << c.algo << " " << c.npus << " " << backend;
      EXPECT_LE(ratio, most) << c.algo << " " << c.npus << " " << backend;
    }
  }
}

// A call's chunks are bounded, so that its messages, and the run's time, stop growing with its
// bytes: NVLS-tree of 4 and of 16 GiB on 2 nodes are cut into as many chunks (1024 a lane), and
// both still take the model's time (their fill, a few 1/1024 of a lane, is under 1%).
TEST(NcclCollectives, AsTrafficAHugeCallIsCutIntoBoundedChunks) {
  std::uint64_t messages[2] = {};
  for (const std::uint64_t gib : {4, 16}) {
    std::vector<chakra::TraceBuilder> ranks(16);
    for (auto& r : ranks) r.collective("x", chakra::CommType::kAllReduce, gib << 30);
    sim::Inputs in = inputs_of(ranks, 16);
    in.network = network_of({{DimensionKind::kSwitch, 8, 450e9 / 1073741824.0, 250},
                             {DimensionKind::kSwitch, 2, 50e9 / 1073741824.0, 1500}});
    in.backend = "congestion-aware";
    in.system.nccl.algo = "NVLSTree";
    in.system.collectives = system::CollectiveModel::kNcclTraffic;
    const sim::Result traffic = sim::simulate(in);
    ASSERT_TRUE(traffic.all_finished());
    messages[gib == 16] = traffic.messages;
    in.system.collectives = system::CollectiveModel::kNccl;
    const double ratio = static_cast<double>(traffic.npus[0].finish_ns) / sim::simulate(in).npus[0].finish_ns;
    EXPECT_GE(ratio, 0.99) << gib << " GiB";
    EXPECT_LE(ratio, 1.01) << gib << " GiB";
  }
  EXPECT_GT(messages[0], 0u);
  EXPECT_EQ(messages[0], messages[1]);
}

TEST(NcclCollectives, AsTrafficAStagedChunkGoesThroughItsStagesInOrder) {
  // A 1 MiB NVLS-tree all-reduce over 4 nodes of 8 is one chunk a lane: after the model's latency
  // (NCCL's less the tree's levels, which the traffic crosses itself) it is reduced in the node (a
  // 250 ns link each way), climbs NCCL's tree (0 -> 2 -> {1, 3}: two hops of two 1.5 us links from
  // a leaf), comes down again, and is gathered in the node: at least 2 x 0.5 + 4 x 3 us of latency
  // on top, however short its transfers.
  std::vector<chakra::TraceBuilder> ranks(32);
  for (auto& r : ranks) r.collective("ar", chakra::CommType::kAllReduce, 1 << 20);
  sim::Inputs in = inputs_of(ranks, 32);
  in.backend = "flow";
  in.system.collectives = system::CollectiveModel::kNcclTraffic;
  in.system.nccl.algo = "NVLSTree";
  const sim::Result result = sim::simulate(in);
  ASSERT_TRUE(result.all_finished());
  const double latency_us =
      nccl::AchievedModel(nccl::dgx("H100", 8, 4), Enabled::all())
          .latency_us(nccl::Collective::kAllReduce, nccl::Algorithm::kNvlsTree, nccl::Protocol::kSimple);
  Tick last = 0;
  for (const sim::NpuResult& n : result.npus) last = std::max(last, n.finish_ns);
  EXPECT_GE(static_cast<double>(last), (latency_us + 2 * 0.5 + 4 * 3) * 1000);
}

TEST(NcclCollectives, AsTrafficAllToAllAcrossNodesGoesThroughPxn) {
  // 2 nodes of 8 (the presets' rates), an all-to-all of 64 MiB a GPU: with PXN (the default) each
  // GPU sends its pieces for the other node to the GPU of their rail, which sends its node's
  // pieces for its rail peer in one message: 2 lanes of 32 chunks, each a piece to 7 node peers
  // and one to the rail peer, 16 x 64 x 8 messages. Without it, one exchange: 16 x 15.
  // With half the NICs' point-to-point share the model and the traffic take twice as long alike:
  // the traffic's NICs run at that share, not at the collectives' one.
  std::vector<chakra::TraceBuilder> ranks(16);
  for (auto& r : ranks) r.collective("a2a", chakra::CommType::kAllToAll, 64 << 20);
  Tick pxn_ns = 0;
  for (const auto& [pxn, p2p_share] : {std::pair{true, 0.0}, std::pair{true, 0.46}, std::pair{false, 0.0}}) {
    sim::Inputs in = inputs_of(ranks, 16);
    in.network = network_of({{DimensionKind::kSwitch, 8, 450e9 / 1073741824.0, 250},
                             {DimensionKind::kSwitch, 2, 50e9 / 1073741824.0, 1500}});
    in.backend = "flow";
    in.system.nccl.pxn = pxn;
    if (p2p_share > 0) in.system.nccl.nic_p2p_efficiency = p2p_share;
    const Tick cost_ns = sim::simulate(in).npus[0].finish_ns;
    in.system.collectives = system::CollectiveModel::kNcclTraffic;
    const sim::Result result = sim::simulate(in);
    ASSERT_TRUE(result.all_finished());
    EXPECT_EQ(result.messages, pxn ? 16u * 64 * 8 : 16u * 15);
    Tick last = 0;
    for (const sim::NpuResult& n : result.npus) last = std::max(last, n.finish_ns);
    if (pxn) {
      // The NICs bind, as in the model; a NIC's 8 messages in flight (2 lanes of 4) end together
      // under the max-min share and the next wait for the network's latency: 3 us in about 47.
      const double ratio = static_cast<double>(last) / static_cast<double>(cost_ns);
      EXPECT_GE(ratio, 0.99) << p2p_share;
      EXPECT_LE(ratio, 1.08) << p2p_share;
      if (p2p_share == 0) pxn_ns = last;
    } else {
      // Straight to a peer on another rail, a message is routed through one of the two GPUs
      // between (this network's only way across rails), by a hash per message: some NICs get
      // more than their share, and the all-to-all ends a third later.
      EXPECT_GE(static_cast<double>(last), 1.2 * static_cast<double>(pxn_ns));
    }
  }
}

TEST(NcclCollectives, APlatformLatencyDelaysEveryCallByItself) {
  // nccl-platform-latency-us adds to every call's time, cost or traffic, and changes nothing
  // else: two all-reduces in a row on 2 nodes of 8 end 2 x 25 us later, exactly (the traffic's
  // messages are the same; each member waits the longer latency before sending).
  std::vector<chakra::TraceBuilder> ranks(16);
  for (auto& r : ranks) {
    r.collective("ar1", chakra::CommType::kAllReduce, 1 << 20);
    r.collective("ar2", chakra::CommType::kAllReduce, 1 << 20, {0});
  }
  for (const auto model : {system::CollectiveModel::kNccl, system::CollectiveModel::kNcclTraffic}) {
    sim::Inputs in = inputs_of(ranks, 16);
    in.backend = "congestion-aware";
    in.system.collectives = model;
    const sim::Result plain = sim::simulate(in);
    in.system.nccl.platform_latency_us = 25;
    const sim::Result slower = sim::simulate(in);
    EXPECT_EQ(slower.messages, plain.messages);
    for (std::size_t r = 0; r < 16; ++r) EXPECT_EQ(slower.npus[r].finish_ns, plain.npus[r].finish_ns + 50000);
  }
}

// Eight B200s of a node (900 GB/s each way, 250 ns a link, congestion-aware) run `ranks` as NCCL's
// cost and as its traffic, NCCL_ALGO and NCCL_PROTO as given: NPU 0's two end times, us.
std::pair<double, double> b200_cost_and_traffic_us(std::vector<chakra::TraceBuilder>& ranks, const std::string& algo,
                                                   const std::string& proto) {
  sim::Inputs in = inputs_of(ranks, 8);
  in.network = network_of({{DimensionKind::kSwitch, 8, 900e9 / 1073741824.0, 250}});
  in.system = system_of("ring", 1, 1, 1);
  in.backend = "congestion-aware";
  in.system.nccl.gpu = "B200";
  in.system.nccl.algo = algo;
  in.system.nccl.proto = proto;
  in.system.collectives = system::CollectiveModel::kNccl;
  const sim::Result cost = sim::simulate(in);
  in.system.collectives = system::CollectiveModel::kNcclTraffic;
  const sim::Result traffic = sim::simulate(in);
  EXPECT_TRUE(cost.all_finished() && traffic.all_finished());
  return {static_cast<double>(cost.npus[0].finish_ns) / 1000, static_cast<double>(traffic.npus[0].finish_ns) / 1000};
}

TEST(NcclCollectives, ABlackwellCallWaitsItsGenerationsLatencyAsCostAndAsTraffic) {
  // A B200 call takes 1.0 us more than NCCL's constants say, and each LL step in a node 0.617
  // more (hardware.cc): 9.64 us for a ring LL all-reduce's 14. As traffic on an idle node, an
  // 8-byte one's members wait that with NCCL's latency, then send 14 steps of a few bytes, each
  // over two links of 250 ns: the cost's time and 7 us.
  std::vector<chakra::TraceBuilder> ranks(8);
  for (auto& r : ranks) r.collective("ar", chakra::CommType::kAllReduce, 8);
  const auto [cost_us, traffic_us] = b200_cost_and_traffic_us(ranks, "Ring", "LL");
  EXPECT_NEAR(cost_us, 15.0 + 1.0 + 14 * 0.617, 0.05);  // NCCL's 6.6 + 14 x 0.6 for ring LL, and Blackwell's
  EXPECT_NEAR(traffic_us, cost_us + 14 * 0.5, 0.1);
}

// Eight MI300Xs run an all-reduce of `bytes` as NCCL's cost and as its traffic: both against the
// model (the test below).
void all_pairs_cost_and_traffic(std::uint64_t bytes) {
  std::vector<chakra::TraceBuilder> ranks(8);
  for (auto& r : ranks) r.collective("ar", chakra::CommType::kAllReduce, bytes);
  sim::Inputs in = inputs_of(ranks, 8);
  in.network = network_of({{DimensionKind::kSwitch, 8, 448e9 / 1073741824.0, 250}});
  in.system = system_of("ring", 1, 1, 1);
  in.backend = "flow";
  in.system.nccl.gpu = "MI300X";
  in.system.collectives = system::CollectiveModel::kNccl;
  const sim::Result cost = sim::simulate(in);
  in.system.collectives = system::CollectiveModel::kNcclTraffic;
  const sim::Result traffic = sim::simulate(in);
  ASSERT_TRUE(cost.all_finished() && traffic.all_finished()) << bytes;
  const nccl::Timing model =
      nccl::AchievedModel(nccl::dgx("MI300X"), Enabled::all()).time(nccl::Collective::kAllReduce, bytes);
  ASSERT_EQ(model.choice.algorithm, nccl::Algorithm::kMsccl);
  EXPECT_NEAR(static_cast<double>(cost.npus[0].finish_ns) / 1000, model.us, 0.002);
  Tick last = 0;
  for (const sim::NpuResult& n : traffic.npus) last = std::max(last, n.finish_ns);
  const double traffic_us = static_cast<double>(last) / 1000;
  EXPECT_GE(traffic_us, model.us);
  EXPECT_LE(traffic_us, (model.us + 0.5) * 1.02) << model.us;
  EXPECT_EQ(traffic.messages, 8u * 7);  // one message to each other member
}

TEST(NcclCollectives, OnMi300xsRcclsAllPairsScheduleRunsAsAnExchange) {
  // 4 MiB (Simple) and 256 KiB (LL: half the share) all-reduces of 8 MI300Xs run RCCL's MSCCL
  // all-pairs (msccl.h). As cost, the model's time. As traffic on an idle node (flow, 448 GB/s a
  // GPU each way, 250 ns a link), each member waits the schedule's latency and sends each other
  // 2 x bytes / 8 at its share of the links: the model's time and a message's two links, within 2%.
  for (const std::uint64_t bytes : {std::uint64_t{4} << 20, std::uint64_t{256} << 10}) {
    all_pairs_cost_and_traffic(bytes);
  }
}

TEST(NcclCollectives, ARunsAllReduceIsInPlaceAndTakesRcclsInPlaceSchedules) {
  // A trace's all-reduce is PyTorch's, in place: of 12 MiB on 8 MI300Xs RCCL runs its ring there
  // (its in-place schedules skip 11-14 MiB, msccl.h), where an out-of-place call would take the
  // all-pairs schedule.
  constexpr std::uint64_t bytes = std::uint64_t{12} << 20;
  std::vector<chakra::TraceBuilder> ranks(8);
  for (auto& r : ranks) r.collective("ar", chakra::CommType::kAllReduce, bytes);
  sim::Inputs in = inputs_of(ranks, 8);
  in.network = network_of({{DimensionKind::kSwitch, 8, 448e9 / 1073741824.0, 250}});
  in.system = system_of("ring", 1, 1, 1);
  in.system.nccl.gpu = "MI300X";
  in.system.collectives = system::CollectiveModel::kNccl;
  const sim::Result cost = sim::simulate(in);
  ASSERT_TRUE(cost.all_finished());
  const nccl::Timing ring = nccl::AchievedModel(nccl::dgx("MI300X"), nccl::in_place(Enabled::all()))
                                .time(nccl::Collective::kAllReduce, bytes);
  ASSERT_EQ(ring.choice.algorithm, nccl::Algorithm::kRing);
  EXPECT_NEAR(static_cast<double>(cost.npus[0].finish_ns) / 1000, ring.us, 0.002);
  EXPECT_GT(ring.us,
            nccl::AchievedModel(nccl::dgx("MI300X"), Enabled::all()).time(nccl::Collective::kAllReduce, bytes).us);
}

TEST(NcclCollectives, ABlackwellAllToAllWaitsForEachSendAndReceiveItEnqueues) {
  // An all-to-all of 8 B200s enqueues 16 sends and receives: 1.86 us + 16 x 0.129 beyond NCCL's
  // LL p2p latency (7.2 us), as cost and as traffic, whose 8-byte pieces then take a link's 250
  // ns twice (and their few bytes at LL's half rate: under 0.02 us).
  std::vector<chakra::TraceBuilder> ranks(8);
  for (auto& r : ranks) r.collective("a2a", chakra::CommType::kAllToAll, 64);
  const auto [cost_us, traffic_us] = b200_cost_and_traffic_us(ranks, "", "");
  EXPECT_NEAR(cost_us, 7.2 + 1.86 + 16 * 0.129, 0.02);
  EXPECT_NEAR(traffic_us, cost_us + 0.5, 0.05);
}

TEST(NcclCollectives, EightBitFloatsRankTheRingLastByTheCommunicatorsRanks) {
  // Rings and trees only, 8-bit floats. Group 1 holds 5 NPUs of node 0 and 3 of node 1: NCCL
  // tunes for 2 nodes of 5, but the call has 8 ranks, so its ring is not ranked last.
  std::vector<chakra::TraceBuilder> ranks(16);
  const std::vector<NpuId> group = {0, 1, 2, 3, 4, 8, 9, 10};
  for (std::uint32_t r = 0; r < 16; ++r) {
    if (std::find(group.begin(), group.end(), r) != group.end()) {
      ranks[r].collective("ar8", chakra::CommType::kAllReduce, 256 << 20);
      ranks[r].at(0).attr(chakra::make_string("pg_name", "1"));
    } else {
      ranks[r].comp("idle", 1);
    }
  }
  sim::Inputs in = inputs_of(ranks, 16);
  in.groups[1] = group;
  in.system.nccl.algo = "Ring,Tree";
  in.system.nccl.datatype = "f8e4m3";
  const sim::Result result = sim::simulate(in);
  ASSERT_TRUE(result.all_finished());
  const nccl::Machine m = nccl::dgx("H100", 5, 2, 5);
  Enabled rings_and_trees = Enabled::all();
  nccl::apply_enable_list(rings_and_trees, "Ring,Tree", true, "test");
  const nccl::Timing ring = nccl::AchievedModel(m, rings_and_trees).time(nccl::Collective::kAllReduce, 256 << 20);
  Enabled last = rings_and_trees;
  last.ring_last = true;
  const nccl::Timing tree = nccl::AchievedModel(m, last).time(nccl::Collective::kAllReduce, 256 << 20);
  ASSERT_EQ(ring.choice.algorithm, nccl::Algorithm::kRing);  // the two differ here
  ASSERT_EQ(tree.choice.algorithm, nccl::Algorithm::kTree);
  EXPECT_EQ(result.npus[0].finish_ns, static_cast<Tick>(ring.us * 1000));
}

TEST(NcclCollectives, TheSystemFileDescribesTheMachine) {
  const auto parse = [](const std::string& keys) {
    return config::parse_system("{\"preferred-dataset-splits\": 1, " + keys + "}", "sys.json", {});
  };
  const config::SystemConfig c = parse("\"collectives\": \"nccl\", \"nccl-gpu\": \"B200\", \"nccl-gpus-per-node\": 4, "
                                       "\"nccl-nic\": \"xdr800\", "
                                       "\"nccl-algo\": \"^NVLS\", \"nccl-proto\": \"Simple\", \"nccl-nvls\": 0, "
                                       "\"nccl-collnet\": 1, \"nccl-pxn\": 0");
  EXPECT_EQ(c.system.collectives, system::CollectiveModel::kNccl);
  EXPECT_EQ(c.system.nccl.gpu, "B200");
  EXPECT_EQ(c.system.nccl.gpus_per_node, 4u);
  EXPECT_EQ(c.system.nccl.nic, "xdr800");
  EXPECT_FALSE(c.system.nccl.nvls);
  EXPECT_TRUE(c.system.nccl.collnet);
  EXPECT_FALSE(c.system.nccl.pxn);
  EXPECT_DOUBLE_EQ(parse("\"nccl-platform-latency-us\": 31.5").system.nccl.platform_latency_us, 31.5);
  EXPECT_THAT(error_of([&] { parse("\"nccl-platform-latency-us\": -1"); }), HasSubstr("key "
                                                                                      "\"nccl-platform-latency-us\""));
  EXPECT_TRUE(parse("\"collectives\": \"nccl\"").system.nccl.pxn);
  // A machine's own calibration of the timing model; unset, the model's constants.
  const system::NcclSpec calibrated = parse("\"nccl-ring-efficiency\": 0.8, \"nccl-nvls-efficiency\": 0.7, "
                                            "\"nccl-nvls-tree-efficiency\": 0.85, \"nccl-nvls-chunk-us\": 0.5, "
                                            "\"nccl-tree-message-us\": 0, "
                                            "\"nccl-ll-channel-efficiency\": 0.25, \"nccl-ll-proxy-scan-ns\": 0.5, "
                                            "\"nccl-nic-efficiency\": 0.9, \"nccl-nic-p2p-efficiency\": 0.85, "
                                            "\"nccl-p2p-channel-gb-per-s\": 30, "
                                            "\"nccl-all-to-all-efficiency\": 0.75")
                                          .system.nccl;
  const nccl::Efficiencies e = nccl::efficiencies_of(calibrated);
  EXPECT_EQ(e.ring, 0.8);
  EXPECT_EQ(e.nvls, 0.7);
  EXPECT_EQ(e.nvls_tree, 0.85);
  EXPECT_EQ(e.nvls_chunk_us, 0.5);
  EXPECT_EQ(e.tree_message_us, 0.0);
  EXPECT_EQ(e.ll_channel, 0.25);
  EXPECT_EQ(e.ll_proxy_scan_ns, 0.5);
  EXPECT_EQ(e.nic, 0.9);
  EXPECT_EQ(e.nic_p2p, 0.85);
  EXPECT_EQ(e.p2p_channel_gb_per_s, 30.0);
  EXPECT_EQ(e.all_to_all, 0.75);
  EXPECT_FALSE(nccl::efficiencies_of(system::NcclSpec{}).all_to_all);
  EXPECT_EQ(nccl::efficiencies_of(system::NcclSpec{}).p2p_channel_gb_per_s, 21.0);
  EXPECT_THAT(error_of([&] { parse("\"nccl-p2p-channel-gb-per-s\": 0"); }), HasSubstr("key "
                                                                                      "\"nccl-p2p-channel-gb-per-s\": "
                                                                                      "value 0 is invalid; expected a "
                                                                                      "rate in GB/s, above 0"));
  EXPECT_FALSE(nccl::efficiencies_of(system::NcclSpec{}).nic);
  EXPECT_EQ(nccl::efficiencies_of(system::NcclSpec{}).ring, nccl::Efficiencies{}.ring);
  EXPECT_EQ(nccl::run_machine(calibrated, 8, 8).efficiencies.nvls, 0.7);
  for (const char* bad : {"\"nccl-ring-efficiency\": 1.5", "\"nccl-nvls-efficiency\": 0",
                          "\"nccl-all-to-all-efficiency\": 1.01", "\"nccl-nic-p2p-efficiency\": 0"}) {
    EXPECT_THAT(error_of([&] { parse(bad); }), HasSubstr("expected a share of the link's rate, above 0 and at most 1"))
        << bad;
  }
  EXPECT_THAT(error_of([&] { parse("\"nccl-ll-channel-efficiency\": 1.5"); }), HasSubstr("expected a share of NCCL's "
                                                                                         "per-channel LL128 ceiling, "
                                                                                         "above 0 and at most 1"));
  EXPECT_THAT(error_of([&] { parse("\"nccl-nvls-tree-efficiency\": 0"); }), HasSubstr("key "
                                                                                      "\"nccl-nvls-tree-efficiency\": "
                                                                                      "value 0 is invalid; expected a "
                                                                                      "share of NVLS's NVLink rate"));
  EXPECT_THAT(error_of([&] { parse("\"nccl-ll-proxy-scan-ns\": -1"); }), HasSubstr("key \"nccl-ll-proxy-scan-ns\""));
  EXPECT_THAT(error_of([&] { parse("\"nccl-tree-message-us\": -0.1"); }), HasSubstr("key \"nccl-tree-message-us\""));
  EXPECT_THAT(error_of([&] { parse("\"collectives\": \"mpi\""); }), HasSubstr("sys.json: key \"collectives\": value "
                                                                              "\"mpi\" is invalid; expected "
                                                                              "\"astra-sim\", \"nccl\" or "
                                                                              "\"nccl-traffic\""));
  EXPECT_EQ(parse("\"collectives\": \"nccl-traffic\"").system.collectives, system::CollectiveModel::kNcclTraffic);
  EXPECT_THAT(error_of([&] { parse("\"nccl-gpu\": \"V100\""); }), HasSubstr("sys.json: key \"nccl-gpu\": unknown GPU "
                                                                            "\"V100\""));
  EXPECT_THAT(error_of([&] { parse("\"nccl-algo\": \"Spiral\""); }), HasSubstr("sys.json: key \"nccl-algo\": "
                                                                               "NCCL_ALGO: unknown algorithm "
                                                                               "\"Spiral\""));
  // The machine must fit the run: nodes of 8 do not divide 12 NPUs; 16 GPUs are no H100 node.
  system::NcclSpec spec;
  spec.gpus_per_node = 8;
  EXPECT_THAT(error_of([&] { nccl::run_machine(spec, 12, 12); }), HasSubstr("12 NPUs do not fill nodes of 8 GPUs"));
  spec.gpus_per_node = 16;
  EXPECT_THAT(error_of([&] { nccl::run_machine(spec, 32, 16); }), HasSubstr("a H100 scale-up domain holds 8"));
  // Nor may a node span more than the network's first dimension joins.
  spec.gpus_per_node = 8;
  EXPECT_THAT(error_of([&] { nccl::run_machine(spec, 32, 4); }), HasSubstr("nodes of 8 GPUs, but the network's first "
                                                                           "dimension joins 4; expected at most 4"));
  // Nor fewer than it joins, where one domain could hold them all (past the domain, the clamp's).
  spec.gpus_per_node = 4;
  EXPECT_THAT(error_of([&] { nccl::run_machine(spec, 32, 8); }), HasSubstr("nodes of 4 GPUs, but the network's first "
                                                                           "dimension joins 8 (a H100 domain holds up "
                                                                           "to 8)"));
  spec.gpus_per_node = 8;
  EXPECT_EQ(nccl::run_machine(spec, 64, 64).machine.gpus_per_node, 8u);
  // By default a node is the network's first dimension, up to the GPU's domain.
  spec.gpus_per_node = 0;
  EXPECT_EQ(nccl::run_machine(spec, 64, 4).machine.gpus_per_node, 4u);
  EXPECT_EQ(nccl::run_machine(spec, 64, 64).machine.gpus_per_node, 8u);
}

TEST(NcclCollectives, TheRunsTypeAndReductionLeaveNcclItsAlgorithms) {
  const auto parse = [](const std::string& keys) {
    return config::parse_system("{\"preferred-dataset-splits\": 1, " + keys + "}", "sys.json", {}).system.nccl;
  };
  const system::NcclSpec avg = parse("\"nccl-datatype\": \"bfloat16\", \"nccl-reduce-op\": \"avg\"");
  EXPECT_EQ(avg.datatype, "bfloat16");
  EXPECT_EQ(avg.reduce_op, "avg");
  const nccl::RunMachine m = nccl::run_machine(avg, 8, 8);
  EXPECT_EQ(m.type, nccl::DataType::kBfloat16);
  EXPECT_EQ(m.op, nccl::ReduceOp::kAvg);
  EXPECT_EQ(nccl::run_machine(parse("\"nccl-gpu\": \"H100\""), 8, 8).op, nccl::ReduceOp::kSum);
  // Each communicator's algorithms follow them (call_types.h): an averaging 64 MiB all-reduce on
  // 8 H100s runs no NVLS, so it takes the ring's time.
  const auto finish = [](const char* op) {
    system::NcclSpec spec;
    spec.reduce_op = op;
    const sim::Result result = one_node_run(chakra::CommType::kAllReduce, 64 << 20, spec);
    EXPECT_TRUE(result.all_finished());
    return result.npus[0].finish_ns;
  };
  const nccl::AchievedModel rings = one_node_model("^NVLS,NVLSTree");
  EXPECT_EQ(finish("avg"), static_cast<Tick>(rings.time(nccl::Collective::kAllReduce, 64 << 20).us * 1000));
  EXPECT_EQ(finish("sum"), model_ns(nccl::Collective::kAllReduce, 64 << 20, 8, 1));
  EXPECT_GT(finish("avg"), finish("sum"));
  // Names as nccl-tests spells them; what NCCL refuses, refused.
  EXPECT_THAT(error_of([&] { parse("\"nccl-datatype\": \"fp16\""); }), HasSubstr("sys.json: key \"nccl-datatype\": "
                                                                                 "expected one of int8, uint8"));
  EXPECT_THAT(error_of([&] { parse("\"nccl-reduce-op\": \"xor\""); }), HasSubstr("sys.json: key \"nccl-reduce-op\": "
                                                                                 "expected one of sum, prod"));
  // NCCL refuses an 8-bit float reduction before Hopper, when the run reaches one; it gathers them.
  const auto run_a100 = [](chakra::CommType type) {
    system::NcclSpec spec;
    spec.gpu = "A100";
    spec.datatype = "f8e4m3";
    return one_node_run(type, 1 << 20, spec);
  };
  EXPECT_THAT(error_of([&] { run_a100(chakra::CommType::kAllReduce); }), HasSubstr("system key \"nccl-datatype\": "
                                                                                   "all_reduce of f8e4m3 on A100: NCCL "
                                                                                   "reduces 8-bit floats"));
  EXPECT_TRUE(run_a100(chakra::CommType::kAllGather).all_finished());
}

}  // namespace
}  // namespace chakrasim::test
