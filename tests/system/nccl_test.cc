// chakrasim's NCCL mode: the tuning model NCCL 2.30 chooses by, the model of what NCCL achieves,
// and nccl-tests' table. The anchors are public figures from NCCL's and nccl-tests' maintainers
// (docs/nccl.md); tolerances are said at each.
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "system/nccl/nccl_collectives.h"
#include "system/nccl/sparse_ring.h"
#include "system/nccl/sweep.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

using ::chakrasim::test::error_of;
using ::testing::HasSubstr;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kKiB = std::uint64_t{1} << 10;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

Enabled only(const char* algorithms) {
  Enabled e = Enabled::all();
  apply_enable_list(e, algorithms, true, "test");
  return e;
}

double busbw(const AchievedModel& model, Collective c, std::uint64_t bytes) {
  const Timing t = model.time(c, bytes);
  return static_cast<double>(bytes) / 1e3 / t.us * bus_factor(c, model.tuning().machine().ranks());
}

// ---- NCCL's tuning model, against the closed forms of its formulas --------------------------

TEST(NcclTuning, GraphsAsNcclsSearchFindsThem) {
  // H100: NCCL counts 18 links x 20.6 = 370.8 GB/s. The fastest ring speed that fits, 60 GB/s,
  // packs 6 channels (360); 50 packs 7 (350), 40 9 (360), 30 12 (360): none beats 6 x 60, and 24
  // is under half of 60. Six fast channels are doubled at half speed: 12 x 30.
  const TuningModel h100(dgx(), Enabled::all());
  EXPECT_EQ(h100.graph(Algorithm::kRing).channels, 12u);
  EXPECT_EQ(h100.graph(Algorithm::kRing).bw_intra, 30.0);
  // NVLS: a head per GPU. The search starts at the fastest speed 8 of which fit in 370.8 x 8/7 =
  // 423.8, 50, but every GPU pulls each head's share and a head twice its own: 9 x 50 = 450 does
  // not fit the links, 9 x 40 = 360 does. Pass 2 then raises the inter speed, which nothing in a
  // node carries, to the ladder's top, 60: NCCL's log of the graph says "bw 40/60".
  EXPECT_EQ(h100.graph(Algorithm::kNvls).channels, 8u);
  EXPECT_EQ(h100.graph(Algorithm::kNvls).bw_intra, 40.0);
  EXPECT_EQ(h100.graph(Algorithm::kNvls).bw_inter, 60.0);
  // B200 (18 x 40.1 = 721.8): 9 x 90 does not fit, 9 x 80 = 720 does; the inter speed rises to the
  // top, 90. NVL72 (32 heads, NCCL's most): 32 x 24 = 768 is over 721.8 x 72/71, 33 x 20 = 660
  // fits; the inter speed rises to twice that, 40.
  const TuningModel b200(dgx("B200"), Enabled::all());
  EXPECT_EQ(b200.graph(Algorithm::kNvls).bw_intra, 80.0);
  EXPECT_EQ(b200.graph(Algorithm::kNvls).bw_inter, 90.0);
  const TuningModel nvl72(dgx("GB200", 72), Enabled::all());
  EXPECT_EQ(nvl72.graph(Algorithm::kNvls).channels, 32u);
  EXPECT_EQ(nvl72.graph(Algorithm::kNvls).bw_intra, 20.0);
  EXPECT_EQ(nvl72.graph(Algorithm::kNvls).bw_inter, 40.0);
  // So NCCL rates NVLS on an NVL72 at 32 x min(20 x 0.74 x 31/32 x 2, 40) GB/s of bus bandwidth,
  // over the ring's 16 x 45 = 720, and runs it for a large all-reduce (CoreWeave's 72-GPU run,
  // busbw 835-839 at 4-8 GiB, is NVLS's).
  EXPECT_DOUBLE_EQ(nvl72.bandwidth(Collective::kAllReduce, Algorithm::kNvls, Protocol::kSimple),
                   32 * (20 * 0.74 * 31 / 32 * 2) * 72 / 142);
  EXPECT_EQ(nvl72.choose(Collective::kAllReduce, std::uint64_t{4} << 30).algorithm, Algorithm::kNvls);
  // A100 (no NVLS): 12 x 20 = 240: 6 x 40 fills its 240 at once, doubled at 20; 30 fits 8 < 12.
  const TuningModel a100(dgx("A100"), Enabled::all());
  EXPECT_EQ(a100.graph(Algorithm::kRing).channels, 12u);
  EXPECT_EQ(a100.graph(Algorithm::kRing).bw_intra, 20.0);
  EXPECT_EQ(a100.graph(Algorithm::kNvls).channels, 0u);
  // Two nodes of 400G NICs: one 48 GB/s channel per NIC (two would not fit one NIC's 50).
  const TuningModel two(dgx("H100", 8, 2), Enabled::all());
  EXPECT_EQ(two.graph(Algorithm::kRing).channels, 8u);
  EXPECT_EQ(two.graph(Algorithm::kRing).bw_inter, 45.0);  // 8 x 48 = 384 > the NVLinks' 370.8: 45
  // NVLS across nodes searches the inter ladder from the NIC's rate: H100's 48, 45 and 42 do not
  // fit 9 times in 370.8, 40 does; pass 2 raises the inter speed to 48, a 400G NIC's most.
  EXPECT_EQ(two.graph(Algorithm::kNvls).bw_intra, 40.0);
  EXPECT_EQ(two.graph(Algorithm::kNvls).bw_inter, 48.0);
  // B200: 9 x 48 fits its links, and the next inter speed, 80, is over the NIC: 48 / 48, so NCCL
  // rates NVLS-tree on two nodes at 48 x 0.74 x 7/8 x 2 a channel, not at the NICs' 2 x 48.
  const TuningModel b200_two(dgx("B200", 8, 2), Enabled::all());
  EXPECT_EQ(b200_two.graph(Algorithm::kNvlsTree).bw_intra, 48.0);
  EXPECT_EQ(b200_two.graph(Algorithm::kNvlsTree).bw_inter, 48.0);
  EXPECT_DOUBLE_EQ(b200_two.bandwidth(Collective::kAllReduce, Algorithm::kNvlsTree, Protocol::kSimple),
                   8 * (48 * 0.74 * 7 / 8 * 2) * 16 / 30);
  // Four GPUs a node: 5 x 48 fits, and nothing above 48 on Hopper's inter ladder; Blackwell's 80
  // is over the NIC.
  for (const char* gpu : {"H100", "B200"}) {
    const TuningModel four(dgx(gpu, 4, 2, 4), Enabled::all());
    EXPECT_EQ(four.graph(Algorithm::kNvlsTree).channels, 4u) << gpu;
    EXPECT_EQ(four.graph(Algorithm::kNvlsTree).bw_intra, 48.0) << gpu;
    EXPECT_EQ(four.graph(Algorithm::kNvlsTree).bw_inter, 48.0) << gpu;
  }
  // Across nodes a head is a NIC with a GPU of its own: four NICs for eight H100s make four heads,
  // which fit at 48 (5 x 48 = 240), not eight at 40; CollNet direct takes as many.
  const TuningModel four_nics(dgx("H100", 8, 2, 4), Enabled::all());
  EXPECT_EQ(four_nics.graph(Algorithm::kNvlsTree).channels, 4u);
  EXPECT_EQ(four_nics.graph(Algorithm::kNvlsTree).bw_intra, 48.0);
  EXPECT_EQ(four_nics.graph(Algorithm::kCollNetDirect).channels, 4u);
  EXPECT_EQ(two.graph(Algorithm::kCollNetDirect).channels, 8u);
  // Where no speed of the ladder fits the heads, NVLS has no graph, as in NCCL.
  GpuPreset narrow = gpu_preset("H100");
  narrow.nccl_link_gb_per_s = 0.1;
  Machine narrow_node = dgx();
  narrow_node.gpu = &narrow;
  EXPECT_EQ(TuningModel(narrow_node, Enabled::all()).graph(Algorithm::kNvls).channels, 0u);
}

TEST(NcclTuning, LatenciesAndBandwidthsFollowNcclsFormulas) {
  const TuningModel m(dgx(), Enabled::all());
  const Collective ar = Collective::kAllReduce;
  // Ring, 8 GPUs, one node: 14 steps. Simple: base 8.4 + 14 x 3.4 us; bus 12 x 30 = 360 GB/s,
  // algorithm bandwidth x 8/14. LL: base 6.6 + 14 x 0.6; bus min(141, 360 / 2).
  EXPECT_DOUBLE_EQ(m.latency_us(ar, Algorithm::kRing, Protocol::kSimple), 8.4 + 14 * 3.4);
  EXPECT_DOUBLE_EQ(m.bandwidth(ar, Algorithm::kRing, Protocol::kSimple), 360.0 * 8 / 14);
  EXPECT_DOUBLE_EQ(m.latency_us(ar, Algorithm::kRing, Protocol::kLL), 6.6 + 14 * 0.6);
  EXPECT_DOUBLE_EQ(m.bandwidth(ar, Algorithm::kRing, Protocol::kLL), 141.0 * 8 / 14);
  // LL128: min(360 x 0.92, 12 x 36.7).
  EXPECT_DOUBLE_EQ(m.bandwidth(ar, Algorithm::kRing, Protocol::kLL128), 360 * 0.92 * 8 / 14);
  // NVLS: latency its NVLink step, 25 us; per channel min(40 x 0.85 x 7/8 x 2, 60) = 59.5.
  EXPECT_DOUBLE_EQ(m.latency_us(ar, Algorithm::kNvls, Protocol::kSimple), 25.0);
  EXPECT_DOUBLE_EQ(m.bandwidth(ar, Algorithm::kNvls, Protocol::kSimple), 8 * (40 * 0.85 * 7 / 8 * 2) * 8 / 14);
  // Only Simple for NVLS; NVLS-tree needs two nodes; CollNet needs --collnet.
  EXPECT_EQ(m.bandwidth(ar, Algorithm::kNvls, Protocol::kLL), 0.0);
  EXPECT_EQ(m.bandwidth(ar, Algorithm::kNvlsTree, Protocol::kSimple), 0.0);
  EXPECT_EQ(m.bandwidth(ar, Algorithm::kCollNetDirect, Protocol::kSimple), 0.0);
  // Tree all-reduce: min(360 x 0.92, 12 x 38.7) x 0.5; at 64 KiB (2^10 x 64 B) NCCL scales it
  // by its middle-size correction for Simple, 0.6.
  const double tree = std::min(360 * 0.92, 12 * 38.7) * 0.5;
  EXPECT_DOUBLE_EQ(m.bandwidth(ar, Algorithm::kTree, Protocol::kSimple), tree);
  const double latency = m.latency_us(ar, Algorithm::kTree, Protocol::kSimple);
  EXPECT_DOUBLE_EQ(*m.predicted_us(ar, Algorithm::kTree, Protocol::kSimple, 65536),
                   latency + 65536 / (1000 * tree * 0.6));
}

TEST(NcclTuning, NcclsSmallerRulesHoldOnThePresets) {
  // Broadcast and reduce: one node on NVSwitches keeps NCCL's first graph, every channel the same
  // ring, so a chunk pipelines down it behind the last: one step's latency (base + hop). Across
  // nodes the channels differ (each its NIC) and every step pays a chunk's (Simple: the tree's
  // per-step latency, as NCCL says), as on a mesh.
  const Collective bc = Collective::kBroadcast;
  const TuningModel one(dgx(), Enabled::all());
  EXPECT_DOUBLE_EQ(one.latency_us(bc, Algorithm::kRing, Protocol::kLL), 6.6 + 0.6);
  EXPECT_DOUBLE_EQ(one.latency_us(bc, Algorithm::kRing, Protocol::kLL128), 14.0 + 1.9);
  EXPECT_DOUBLE_EQ(one.latency_us(bc, Algorithm::kRing, Protocol::kSimple), 8.4 + 3.4);
  EXPECT_TRUE(one.graph(Algorithm::kRing).same_channels);
  EXPECT_FALSE(TuningModel(dgx("MI300X"), Enabled::all()).graph(Algorithm::kRing).same_channels);
  const TuningModel two(dgx("H100", 8, 2), Enabled::all());
  EXPECT_FALSE(two.graph(Algorithm::kRing).same_channels);
  EXPECT_DOUBLE_EQ(two.latency_us(bc, Algorithm::kRing, Protocol::kSimple), 8.4 + 16 * 14.0);
  // NVLS other than an all-reduce runs up to 32 GPUs a node: a GB200 NVL72 domain of 72 gathers
  // without it, and all-reduces with it.
  const TuningModel nvl72(dgx("GB200", 72), Enabled::all());
  EXPECT_EQ(nvl72.bandwidth(Collective::kAllGather, Algorithm::kNvls, Protocol::kSimple), 0.0);
  EXPECT_GT(nvl72.bandwidth(Collective::kAllReduce, Algorithm::kNvls, Protocol::kSimple), 0.0);
  EXPECT_GT(TuningModel(dgx("GB200", 32), Enabled::all())
                .bandwidth(Collective::kAllGather, Algorithm::kNvls, Protocol::kSimple),
            0.0);
  // CollNet up to 8 GPUs a node.
  Machine wide = dgx("GB200", 16, 2, 16);
  wide.collnet = true;
  EXPECT_EQ(TuningModel(wide, Enabled::all())
                .bandwidth(Collective::kAllReduce, Algorithm::kCollNetChain, Protocol::kSimple),
            0.0);
  Machine eight = dgx("B200", 8, 2);
  eight.collnet = true;
  EXPECT_GT(TuningModel(eight, Enabled::all())
                .bandwidth(Collective::kAllReduce, Algorithm::kCollNetChain, Protocol::kSimple),
            0.0);
  // Blackwell's NVLS-tree gets the tree's middle-size correction on x86 hosts, not on Grace:
  // at 64 KiB (index 10) Simple's factor is 0.6.
  const Collective ar = Collective::kAllReduce;
  const TuningModel b200(dgx("B200", 8, 2), Enabled::all()), gb200(dgx("GB200", 8, 2), Enabled::all());
  const auto nvls_tree_us = [&](const TuningModel& m) {
    return *m.predicted_us(ar, Algorithm::kNvlsTree, Protocol::kSimple, 65536) -
           m.latency_us(ar, Algorithm::kNvlsTree, Protocol::kSimple);
  };
  EXPECT_NEAR(nvls_tree_us(b200) * 0.6, nvls_tree_us(gb200), 1e-9);
  // The rings' plateau across nodes counts the communicator's channels (the graph's 8, doubled):
  // 2 x 8 H100s, 16 channels x 16 ranks x 64 B = 16 KiB is where NCCL multiplies the latency by 1.4.
  const double lat = two.latency_us(ar, Algorithm::kRing, Protocol::kSimple);
  const double bw = two.bandwidth(ar, Algorithm::kRing, Protocol::kSimple);
  EXPECT_DOUBLE_EQ(*two.predicted_us(ar, Algorithm::kRing, Protocol::kSimple, 16383), lat + 16383 / (1000 * bw));
  EXPECT_DOUBLE_EQ(*two.predicted_us(ar, Algorithm::kRing, Protocol::kSimple, 16384), 1.4 * lat + 16384 / (1000 * bw));
  // One GPU a node: NCCL's plain tree pattern, rated x 0.85.
  const TuningModel single(dgx("H100", 1, 16, 1), Enabled::all());
  const Graph& g = single.graph(Algorithm::kTree);
  EXPECT_DOUBLE_EQ(single.bandwidth(ar, Algorithm::kTree, Protocol::kSimple),
                   std::min(g.channels * g.bw_inter * 0.92, g.channels * 36.0) * 0.85 * 0.5);
}

TEST(NcclTuning, ChoosesAsNcclDoes) {
  const TuningModel m(dgx(), Enabled::all());
  // Small: the lowest latency, ring LL; large: NVLS, whose bandwidth NCCL puts above the ring's.
  EXPECT_EQ(m.choose(Collective::kAllReduce, 8).algorithm, Algorithm::kRing);
  EXPECT_EQ(m.choose(Collective::kAllReduce, 8).protocol, Protocol::kLL);
  EXPECT_EQ(m.choose(Collective::kAllReduce, kGiB).algorithm, Algorithm::kNvls);
  // The choice is the least predicted time among the pairs available.
  for (std::uint64_t bytes = 8; bytes <= 16 * kGiB; bytes *= 4) {
    const TuningModel::Choice c = m.choose(Collective::kAllReduce, bytes);
    const double chosen = *m.predicted_us(Collective::kAllReduce, c.algorithm, c.protocol, bytes);
    for (std::size_t a = 0; a < kAlgorithms; ++a) {
      for (std::size_t p = 0; p < kProtocols; ++p) {
        const auto t = m.predicted_us(Collective::kAllReduce, Algorithm(a), Protocol(p), bytes);
        if (t) {
          EXPECT_LE(chosen, *t) << bytes;
        }
      }
    }
  }
  // NCCL_ALGO=Ring and NCCL_PROTO=Simple leave that pair; an empty choice is an error.
  Enabled ring_simple = only("Ring");
  apply_enable_list(ring_simple, "Simple", false, "test");
  const TuningModel forced(dgx(), ring_simple);
  EXPECT_EQ(forced.choose(Collective::kAllReduce, 8).protocol, Protocol::kSimple);
  EXPECT_THAT(error_of([] { TuningModel(dgx(), only("PAT")).choose(Collective::kAllReduce, 8); }),
              HasSubstr("no algorithm and protocol left for all_reduce"));
  // All-to-all and send/receive take NCCL's p2p path: LL up to 16 KiB a peer.
  EXPECT_TRUE(m.choose(Collective::kAllToAll, 8 * 16384).point_to_point);
  EXPECT_EQ(m.choose(Collective::kAllToAll, 8 * 16384).protocol, Protocol::kLL);
  EXPECT_EQ(m.choose(Collective::kAllToAll, 8 * 16385).protocol, Protocol::kSimple);
}

TEST(NcclTuning, LL128OnlyFromAmpereOn) {
  // NCCL enables LL128 by default on Ampere and later over NVLink; a Volta-class GPU (compute
  // capability 70) runs LL and Simple only.
  GpuPreset volta = gpu_preset("A100");
  volta.compute_capability = 70;
  Machine m = dgx("A100");
  m.gpu = &volta;
  const TuningModel old(m, Enabled::all());
  EXPECT_EQ(old.bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128), 0.0);
  EXPECT_GT(old.bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL), 0.0);
  EXPECT_GT(TuningModel(dgx("A100"), Enabled::all())
                .bandwidth(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128),
            0.0);
}

TEST(NcclTuning, EnableListsReadAsNcclReadsThem) {
  const auto nvls = static_cast<std::size_t>(Algorithm::kNvls);
  const auto ar = static_cast<std::size_t>(Collective::kAllReduce);
  const auto bcast = static_cast<std::size_t>(Collective::kBroadcast);
  Enabled e = Enabled::all();
  apply_enable_list(e, "^nvls", true, "NCCL_ALGO");
  EXPECT_FALSE(e.algorithms[ar][nvls]);
  EXPECT_TRUE(e.algorithms[ar][static_cast<std::size_t>(Algorithm::kRing)]);
  e = Enabled::all();
  apply_enable_list(e, "Ring;allreduce:Tree,NVLS", true, "NCCL_ALGO");
  EXPECT_TRUE(e.algorithms[ar][nvls]);
  EXPECT_FALSE(e.algorithms[ar][static_cast<std::size_t>(Algorithm::kRing)]);
  EXPECT_TRUE(e.algorithms[bcast][static_cast<std::size_t>(Algorithm::kRing)]);
  EXPECT_FALSE(e.algorithms[bcast][nvls]);
  EXPECT_THAT(error_of([&] { apply_enable_list(e, "Ring,Spiral", true, "--algo"); }), HasSubstr("--algo: unknown "
                                                                                                "algorithm "
                                                                                                "\"Spiral\""));
  EXPECT_THAT(error_of([&] { apply_enable_list(e, "LL;Simple", false, "--proto"); }), HasSubstr("every entry after the "
                                                                                                "first needs a "
                                                                                                "collective prefix"));
  EXPECT_THAT(error_of([&] { apply_enable_list(e, "gather:LL", false, "--proto"); }), HasSubstr("unknown collective "
                                                                                                "\"gather\""));
}

// ---- What NCCL achieves: the public anchors ------------------------------------------------

TEST(NcclAchieved, RingsOnEightH100ReachAbout367GBs) {
  // 8x H100 SXM ring all-reduce, all-gather and reduce-scatter: busbw ~365-370 GB/s at large
  // sizes. The model: 450 GB/s NVLink x 0.816 = 367.2 less the latency at 8 GiB (under 0.2%).
  const AchievedModel ring(dgx(), only("Ring")), ring_in_place(dgx(), in_place(only("Ring")));
  for (const Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter}) {
    const double bw = busbw(ring_in_place, c, 8 * kGiB);
    EXPECT_GE(bw, 365.0) << collective_name(c);
    EXPECT_LE(bw, 370.0) << collective_name(c);
  }
  // Out of place, an all-gather also copies the GPU's own shard from its input to its output:
  // 1 GiB at the H100's 3350 GB/s, 320.5 us more, busbw 361.0 (two clusters measured 358 at
  // 8 GiB out of place, 363-364 in place, under the anchor's 365 by the rings' slow rise to
  // their peak: docs/nccl.md). The other two write no shard of their own.
  const auto us = [](const AchievedModel& m, Collective c) { return m.time(c, 8 * kGiB).us; };
  EXPECT_NEAR(us(ring, Collective::kAllGather) - us(ring_in_place, Collective::kAllGather), kGiB / 3350e3, 1e-6);
  EXPECT_NEAR(busbw(ring, Collective::kAllGather, 8 * kGiB), 361.0, 0.1);
  EXPECT_EQ(us(ring, Collective::kAllReduce), us(ring_in_place, Collective::kAllReduce));
  EXPECT_EQ(us(ring, Collective::kReduceScatter), us(ring_in_place, Collective::kReduceScatter));
}

TEST(NcclAchieved, TheShardsCopyGrowsWithTheShardAndFallsWithTheMemorysRate) {
  // The copy is a GPU's shard at its memory bandwidth: on 4 of a node's H100s an 8 GiB
  // all-gather's shard is 2 GiB (641 us; measured out of place less in place: 507 and 649 on
  // two nodes); 8 GiB over 8 GPUs is 1 GiB at each preset's rate (the vendors': B200's 8000 GB/s
  // copies it in 134.2 us); with any protocol the ring runs. NVLS, PAT and CollNet write no shard
  // this way.
  const auto copy_us = [](const Machine& m, Algorithm a, Protocol p = Protocol::kSimple) {
    return *AchievedModel(m, Enabled::all()).time_us(Collective::kAllGather, a, p, 8 * kGiB) -
           *AchievedModel(m, in_place(Enabled::all())).time_us(Collective::kAllGather, a, p, 8 * kGiB);
  };
  EXPECT_NEAR(copy_us(dgx("H100", 4), Algorithm::kRing), 2 * kGiB / 3350e3, 1e-6);
  const std::pair<const char*, double> rates[] = {{"H100", 3350}, {"H200", 4800},  {"A100", 2039},
                                                  {"B200", 8000}, {"GB200", 8000}, {"MI300X", 5300}};
  for (const auto& [gpu, gb_per_s] : rates) {
    EXPECT_NEAR(copy_us(dgx(gpu), Algorithm::kRing), kGiB / (gb_per_s * 1e3), 1e-6) << gpu;
  }
  EXPECT_NEAR(copy_us(dgx(), Algorithm::kRing, Protocol::kLL), kGiB / 3350e3, 1e-6);
  EXPECT_NEAR(copy_us(dgx("H100", 8, 2), Algorithm::kRing), kGiB / 2 / 3350e3, 1e-6);
  EXPECT_EQ(copy_us(dgx(), Algorithm::kNvls), 0.0);
  EXPECT_EQ(copy_us(dgx("H100", 1, 8, 1), Algorithm::kPat), 0.0);
  Machine collnet = dgx("H100", 8, 2);
  collnet.collnet = true;
  EXPECT_EQ(copy_us(collnet, Algorithm::kCollNetDirect), 0.0);
}

TEST(NcclAchieved, NvlsAllReduceOnEightH100) {
  // ~475-480 GB/s busbw at 1-8 GB and more; 256 MB does not reach it. NCCL's loops of 16 channels
  // x 8 heads x 128 KiB (16 MiB, 56.4 us at 297.6 GB/s, + 4.8 us each): at 8 GiB, 512 loops and a
  // loop's fill and 25 us of latency, 478.6; at 1 GiB, 64 loops, 469.6. Below 1 GiB the chunk is
  // 64 KiB, a loop 8 MiB, 28.2 + 4.8 us: no more than 8 MiB / 33 us x 14 / 8 = 445 GB/s.
  const AchievedModel model(dgx(), Enabled::all());
  for (const std::uint64_t bytes : {kGiB, 8 * kGiB}) {
    EXPECT_EQ(model.time(Collective::kAllReduce, bytes).choice.algorithm, Algorithm::kNvls);
  }
  EXPECT_GE(busbw(model, Collective::kAllReduce, 8 * kGiB), 475.0);
  EXPECT_LE(busbw(model, Collective::kAllReduce, 8 * kGiB), 481.0);
  EXPECT_NEAR(busbw(model, Collective::kAllReduce, kGiB), 469.6, 0.1);
  EXPECT_LT(busbw(model, Collective::kAllReduce, 512 * kMiB), 445.0);
  EXPECT_LT(busbw(model, Collective::kAllReduce, 256 * kMiB), 430.0);
  // Against GPUs 4 to 8: ~370, 420, 440, 460, 480 GB/s. An NVLS all-reduce sends the buffer and
  // receives a GPU's share, then the reverse: busbw = B x 2 (G-1) / (G+1), which meets the
  // figures (given to 10 GB/s) within 2.5%: 370, 411, 441, 463, 480.
  const double anchors[] = {370, 420, 440, 460, 480};
  for (std::uint32_t gpus = 4; gpus <= 8; ++gpus) {
    const AchievedModel nvls(dgx("H100", gpus), only("NVLS"));
    EXPECT_NEAR(busbw(nvls, Collective::kAllReduce, 8 * kGiB), anchors[gpus - 4], anchors[gpus - 4] * 0.025) << gpus;
  }
  // Rings stay at ~365-370 whatever the count.
  for (std::uint32_t gpus = 4; gpus <= 8; ++gpus) {
    EXPECT_NEAR(busbw(AchievedModel(dgx("H100", gpus), only("Ring")), Collective::kAllReduce, 8 * kGiB), 367.5, 2.5);
  }
}

TEST(NcclAchieved, NvlsTreeCrossesEachTreeLevelAsLoopsNotAFixedLatency) {
  // 2 nodes of 8 H100s, a 64 MiB all-reduce: four loops of 16 channels x 8 heads x 128 KiB, each
  // at NVLS-tree's NVLink side (450 x 0.744 x 0.91 x 8/9 GB/s) + 8 x 0.6 us (the NICs, 8 x 50 x
  // 0.94, are faster), through a pipeline 4 loops deep (reduced in the node, up the tree's one
  // level, down, gathered): 7 loop times after NCCL's latency in the node, 25 us. NCCL's 2 x
  // 20.9 us for the level across is what the loops up and down take instead.
  const AchievedModel two(dgx("H100", 8, 2), Enabled::all());
  const auto ar = Collective::kAllReduce;
  const double loop_bytes = 16.0 * 8 * 128 * 1024;
  const double loop_us = loop_bytes / (1000 * 450 * 0.744 * 0.91 * 8 / 9) + 8 * 0.6;
  EXPECT_NEAR(*two.time_us(ar, Algorithm::kNvlsTree, Protocol::kSimple, 64 << 20), 25 + 7 * loop_us, 1e-6);
  EXPECT_DOUBLE_EQ(two.latency_us(ar, Algorithm::kNvlsTree, Protocol::kSimple), 25.0);
  EXPECT_DOUBLE_EQ(two.tuning().latency_us(ar, Algorithm::kNvlsTree, Protocol::kSimple), 25 + 2 * 20.9);
  // Other pairs keep NCCL's latency whole.
  EXPECT_EQ(two.latency_us(ar, Algorithm::kTree, Protocol::kLL),
            two.tuning().latency_us(ar, Algorithm::kTree, Protocol::kLL));
}

TEST(NcclAchieved, OnEightB200sRingsAndNvlsReachWhatAB200NodeMeasured) {
  // An 8x B200 node's sweeps (docs/nccl.md) at 8 GiB: ring all-gather busbw 664 GB/s, 0.738 of
  // NVLink5's 900 (the preset's ring share); NVLS all-reduce 839. NVLS has Hopper's share, 0.744,
  // and its loops pay 1.217 us a chunk (Hopper's 0.6 times Blackwell's slower step, 1.217 / 0.6):
  // a 16 MiB loop at 900 x 0.744 x 8 / 9 = 595.2 GB/s is 28.2 us + 8 x 1.217: 843 busbw.
  // The share was set on the all-gather's out-of-place 664 before the GPU's own shard's copy was
  // drawn; the node measured 677 in place. The copy (1 GiB at 8000 GB/s, 134 us; measured 221)
  // now takes 1.2% off the out-of-place column: 654.6. The share is kept: a larger one fits the
  // node's whole all-gather and reduce-scatter sweeps worse (docs/nccl.md).
  const Enabled ring_in_place = in_place(only("Ring"));
  for (const char* gpu : {"B200", "GB200"}) {
    EXPECT_NEAR(busbw(AchievedModel(dgx(gpu), ring_in_place), Collective::kAllGather, 8 * kGiB), 664.0, 664.0 * 0.01)
        << gpu;
    EXPECT_NEAR(busbw(AchievedModel(dgx(gpu), only("Ring")), Collective::kAllGather, 8 * kGiB), 654.6, 0.1) << gpu;
    const AchievedModel nvls(dgx(gpu), only("NVLS"));
    EXPECT_NEAR(busbw(nvls, Collective::kAllReduce, 8 * kGiB), 839.0, 839.0 * 0.01) << gpu;
  }
  // A calibration's share replaces the preset's: 0.816 gives the H100's share of 900.
  Efficiencies hopper_like;
  hopper_like.ring = 0.816;
  EXPECT_NEAR(busbw(AchievedModel(dgx("B200"), ring_in_place, hopper_like), Collective::kAllGather, 8 * kGiB),
              900 * 0.816, 900 * 0.816 * 0.01);
}

TEST(NcclAchieved, OnEightA100sARingReachesWhatTwoA100NodesMeasured) {
  // Two 8x A100 SXM nodes' all-reduce sweeps (docs/nccl.md) end at busbw 232.8 (4 GiB) and 235.0
  // (8 GiB), 0.776-0.783 of NVLink3's 300: the preset's 0.78 gives 234.
  const AchievedModel a100(dgx("A100"), Enabled::all());
  EXPECT_EQ(a100.time(Collective::kAllReduce, 8 * kGiB).choice.algorithm, Algorithm::kRing);
  EXPECT_NEAR(busbw(a100, Collective::kAllReduce, 8 * kGiB), 234.0, 234.0 * 0.005);
}

TEST(NcclAchieved, OnEightMi300xsARingReachesWhatAmdMeasured) {
  // AMD's 8x MI300X all-reduce sweep (RCCL 2.22, docs/nccl.md) ends at busbw 319.0 at 16 GB,
  // 0.712 of the 7 x 64 GB/s xGMI links: the preset's share gives 318.9.
  const AchievedModel mi300x(dgx("MI300X"), Enabled::all());
  EXPECT_EQ(mi300x.time(Collective::kAllReduce, 16 * kGiB).choice.algorithm, Algorithm::kRing);
  EXPECT_NEAR(busbw(mi300x, Collective::kAllReduce, 16 * kGiB), 319.0, 319.0 * 0.005);
  // A send to one peer of the mesh has the one link to it: 64 x 0.712 = 45.6 GB/s, what AMD's
  // TransferBench measured a link at (45.1-47.2), however many channels the peer has.
  Efficiencies many_channels;
  many_channels.p2p_channel_gb_per_s = 1000;
  const AchievedModel unbound(dgx("MI300X"), Enabled::all(), many_channels);
  EXPECT_NEAR(busbw(unbound, Collective::kSendRecv, 16 * kGiB), 64 * 0.712, 0.5);
  // RCCL's 8 channels a peer (nccl_p2p_test.cc) carry more than the link does, so its own
  // send/receive and all-to-all reach the links: 45.6 to one peer, 7 x 45.6 = 319 busbw to all.
  EXPECT_NEAR(busbw(mi300x, Collective::kSendRecv, 16 * kGiB), 64 * 0.712, 0.5);
  EXPECT_NEAR(busbw(mi300x, Collective::kAllToAll, 16 * kGiB), 7 * 64 * 0.712, 7 * 0.5);
  // In a full mesh a GPU reaches the others of its node over one link each: 4 MI300X use 3 of
  // their 7 links (AMD: with 2 or 4 GPUs only a fraction of the node's bandwidth is used).
  const AchievedModel four(dgx("MI300X", 4), Enabled::all());
  EXPECT_NEAR(busbw(four, Collective::kAllReduce, 16 * kGiB), 3 * 64 * 0.712, 0.5);
  // Its all-to-all too, on RCCL's 24 channels for 4 ranks (8 a peer): the 3 links bind.
  EXPECT_NEAR(busbw(four, Collective::kAllToAll, 16 * kGiB), 3 * 64 * 0.712, 0.5);
  EXPECT_EQ(dgx("MI300X", 4).scale_up_gb_per_s(), 3 * 64.0);
  EXPECT_EQ(dgx("MI300X", 1, 2).scale_up_gb_per_s(), 64.0);  // a lone GPU: never zero
  EXPECT_EQ(dgx("H100", 4).scale_up_gb_per_s(), 450.0);      // through switches: all 18 links
}

TEST(NcclAchieved, AcrossNodesAnNdrNicCarries46To48GBs) {
  // One pair across two nodes: one NIC's 50 GB/s x 0.92, the point-to-point share, 46 GB/s, less
  // the latency's part of 16 GiB (about 30 us in 374,000: 0.01%).
  const AchievedModel two(dgx("H100", 8, 2), Enabled::all());
  EXPECT_NEAR(busbw(two, Collective::kSendRecv, 16 * kGiB), 46.0, 46.0 * 1e-3);
  // A ring bound by its NICs, two a node or the DGX's eight: each carries its share, 50 x 0.96 =
  // 48 GB/s, the collectives' share, less the latency's part of 8 GiB.
  // With eight the NVLinks would bind at 450 x 0.816 = 367 (45.9 a NIC) if they carried every hop
  // of the ring; the hop out of the node leaves by a NIC, so they carry 7/8 and allow 419.
  for (const std::uint32_t nics : {2u, 8u}) {
    for (const std::uint32_t nodes : {2u, 4u}) {
      const AchievedModel ring(dgx("H100", 8, nodes, nics), only("Ring"));
      const double per_nic = busbw(ring, Collective::kAllReduce, 8 * kGiB) / nics;
      EXPECT_NEAR(per_nic, 48.0, 0.4) << nodes << " nodes, " << nics << " NICs";
    }
  }
}

TEST(NcclAchieved, AcrossTwoDgxA100sARingReachesWhatNvidiaMeasures) {
  // NVIDIA (nccl#812): two DGX A100s with 8 HDR 200G NICs each reach ring all-reduce busbw 192
  // GB/s, 24 a NIC: 8 x 25 x 0.96. The NICs bind (the NVLinks allow 300 x 0.78 x 8/7 = 267).
  const AchievedModel ring(dgx("A100", 8, 2), only("Ring"));
  EXPECT_NEAR(busbw(ring, Collective::kAllReduce, 8 * kGiB), 192.0, 192.0 * 0.01);
}

TEST(NcclAchieved, AcrossNodesA400GRoceNicCarriesWhatGcpMeasured) {
  // GCP's 400G RoCE, 2 x 8 GPUs, all-gather at 8 GiB (a ring bound by the NICs): measured 40.7-41.1
  // GB/s a NIC on A3 Ultra (H200, three sweeps) and 45.8 on A4 (B200, one). The preset's 0.85 (50 x
  // 0.85 = 42.5) fits the five GCP sweeps best (docs/nccl.md): within 4% of the first, 7% of the other.
  for (const char* gpu : {"H200", "B200"}) {
    Machine m = dgx(gpu, 8, 2);
    m.nic = &nic_preset("roce400");
    const double per_nic = busbw(AchievedModel(m, only("Ring")), Collective::kAllGather, 8 * kGiB) / 8;
    EXPECT_NEAR(per_nic, 42.5, 0.5) << gpu;
  }
}

TEST(NcclAchieved, EachAlgorithmIsBoundByItsBusiestLink) {
  // Closed forms of achieved.h's table, Simple, 8x H100 nodes with a 400G NIC per GPU: a node's
  // NICs carry 8 x 50 x 0.96 = 384 GB/s for collectives and 8 x 50 x 0.92 = 368 for all-to-all;
  // NVLink rings 450 x 0.816; NVLS 450 x 0.744.
  const double nics = 8 * 50 * 0.96, p2p_nics = 8 * 50 * 0.92, ring = 450 * 0.816, nvls = 450 * 0.744;
  const auto ar = Collective::kAllReduce;
  const AchievedModel two(dgx("H100", 8, 2), Enabled::all());
  const AchievedModel four(dgx("H100", 8, 4), Enabled::all());
  const double one_node_ring =
      AchievedModel(dgx("H100"), Enabled::all()).algorithm_gb_per_s(ar, Algorithm::kRing, Protocol::kSimple);
  // Ring: bus bandwidth min(ring's NVLink, NICs) over the bus factor 2(n-1)/n. Across nodes a
  // ring leaves each node by a NIC: 7 of its 8 hops in a node cross NVLink, so the NVLinks carry
  // 7/8 of a GPU's sends and allow ring x 8/7 = 419.7; the NICs' 384 bind.
  EXPECT_DOUBLE_EQ(four.algorithm_gb_per_s(ar, Algorithm::kRing, Protocol::kSimple),
                   std::min(ring * 8 / 7, nics) / (2.0 * 31 / 32));
  // Tree: a chain's GPU sends the buffer twice; two nodes send it once each way between them
  // (each is the other's leaf), more nodes twice (inner node of one tree, leaf of the other).
  EXPECT_DOUBLE_EQ(two.algorithm_gb_per_s(ar, Algorithm::kTree, Protocol::kSimple), std::min(ring / 2, nics));
  EXPECT_DOUBLE_EQ(four.algorithm_gb_per_s(ar, Algorithm::kTree, Protocol::kSimple), std::min(ring / 2, nics / 2));
  // NVLS-tree: NVLS inside the node at NVLS-tree's 0.91 of its rate (the buffer and a GPU's share
  // back: x 8/9) less each loop's 8 heads x 0.6 us (loops of 16 x 8 x 128 KiB on two nodes), a
  // tree across.
  const double tree_nvls = nvls * 0.91 * 8 / 9;
  const double loop_bytes = 16.0 * 8 * 128 * 1024, loop_nvlink_us = loop_bytes / (1000 * tree_nvls);
  const double nvls_large = tree_nvls * loop_nvlink_us / (loop_nvlink_us + 8 * 0.6);
  EXPECT_DOUBLE_EQ(two.algorithm_gb_per_s(ar, Algorithm::kNvlsTree, Protocol::kSimple), std::min(nvls_large, nics));
  EXPECT_DOUBLE_EQ(four.algorithm_gb_per_s(ar, Algorithm::kNvlsTree, Protocol::kSimple),
                   std::min(nvls_large, nics / 2));
  // CollNet (the network reduces): a ring's reduce-scatter and all-gather inside, the buffer once
  // through the NICs.
  EXPECT_DOUBLE_EQ(four.algorithm_gb_per_s(ar, Algorithm::kCollNetDirect, Protocol::kSimple),
                   std::min(ring * 8 / 14, nics));
  // All-to-all: per byte of a GPU's buffer, 7/32 over its NVLinks and, for the node, 8 x 24/32
  // through its NICs.
  // With PXN (the default) a GPU's NVLinks also carry its pieces for the other rails: 7/8 of the
  // buffer; the NICs bind here either way. Without it, 7/32. A NIC of 10 TB/s leaves the NVLinks
  // to bind, and tells the two apart. The NVLinks run at an all-to-all's share: 0.776 less 0.311
  // over the 4 network channels a peer's 32 MiB piece of 1 GiB takes.
  const double all_to_all = 450 * 0.776 * (1 - 0.311 / 4);
  EXPECT_DOUBLE_EQ(four.p2p_gb_per_s(Collective::kAllToAll, Protocol::kSimple, kGiB),
                   1 / std::max(7.0 / 8 / all_to_all, 8.0 * 24 / 32 / p2p_nics));
  NicPreset fast = nic_preset("ndr400");
  fast.line_gb_per_s = 1e4;
  Machine wide = dgx("H100", 8, 4);
  wide.nic = &fast;
  EXPECT_DOUBLE_EQ(AchievedModel(wide, Enabled::all()).p2p_gb_per_s(Collective::kAllToAll, Protocol::kSimple, kGiB),
                   all_to_all * 8 / 7);
  wide.pxn = false;
  EXPECT_DOUBLE_EQ(AchievedModel(wide, Enabled::all()).p2p_gb_per_s(Collective::kAllToAll, Protocol::kSimple, kGiB),
                   all_to_all * 32 / 7);
  // With NICs to spare the ring's NVLinks bind: 7 of a node's 8 hops, ring x 8/7; in one node
  // every hop crosses NVLink. With 4 NICs for 8 GPUs the rings leave by 4 of them, and the other
  // 4 carry every hop of theirs: ring alone.
  EXPECT_DOUBLE_EQ(AchievedModel(wide, Enabled::all()).algorithm_gb_per_s(ar, Algorithm::kRing, Protocol::kSimple),
                   ring * 8 / 7 / (2.0 * 31 / 32));
  EXPECT_DOUBLE_EQ(one_node_ring, ring / (2.0 * 7 / 8));
  Machine wide_few = dgx("H100", 8, 4, 4);
  wide_few.nic = &fast;
  EXPECT_DOUBLE_EQ(AchievedModel(wide_few, Enabled::all()).algorithm_gb_per_s(ar, Algorithm::kRing, Protocol::kSimple),
                   ring / (2.0 * 31 / 32));
  // LL keeps NCCL's ratio to Simple: ring LL is min(141, bus / 2) against bus in NCCL's model.
  const AchievedModel one(dgx(), Enabled::all());
  EXPECT_DOUBLE_EQ(one.algorithm_gb_per_s(ar, Algorithm::kRing, Protocol::kLL),
                   one.algorithm_gb_per_s(ar, Algorithm::kRing, Protocol::kSimple) * 141.0 / 360.0);
}

TEST(NcclAchieved, APlatformLatencyAddsToTheTimeNotToTheChoice) {
  // The time of every size grows by the platform's latency; NCCL's choice, made on its own
  // constants, is the same.
  Machine m = dgx("H100", 8, 2);
  const AchievedModel plain(m, Enabled::all());
  m.platform_latency_us = 30;
  const AchievedModel slower(m, Enabled::all());
  for (const std::uint64_t bytes : {std::uint64_t{8}, 64 * kMiB, kGiB}) {
    for (const Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kAllToAll}) {
      const Timing a = plain.time(c, bytes), b = slower.time(c, bytes);
      EXPECT_DOUBLE_EQ(b.us, a.us + 30) << collective_name(c) << " " << bytes;
      EXPECT_EQ(b.choice.algorithm, a.choice.algorithm);
      EXPECT_EQ(b.choice.protocol, a.choice.protocol);
    }
  }
  m.platform_latency_us = -1;
  EXPECT_THAT(error_of([&] { AchievedModel(m, Enabled::all()); }), HasSubstr("platform latency -1 us"));
}

TEST(NcclAchieved, BlackwellStepsAndCallsTakeLongerThanNcclsConstants) {
  // The 8x B200 node's all-gather and reduce-scatter (7 LL steps in the node) start 5.25-5.31 us
  // above NCCL's latency, its all-reduce (14) 9.6, its send/receive 2.12 and its all-to-all 3.92:
  // the preset adds 1.0 to a collective and 0.617 to each LL step NCCL's latency counts over
  // NVLink, and 1.86 + 0.129 for each send and receive to a point-to-point call: 2 for a
  // send/receive, 16 for an all-to-all of 8, 32 of 16. A ring across nodes already charges each
  // of its steps in a node the network's post overhead, 1.0 us for LL (2.0 on AMD hosts), against
  // NVLink's 0.6: a 1.217 us step shows 0.217 of its 0.617 there (none on AMD hosts). Hopper's
  // DGX-like nodes start at NCCL's floor: nothing is added there. The choice is NCCL's.
  struct Case {
    std::uint32_t nodes;
    bool amd_cpu;
    Collective c;
    std::uint64_t bytes;
    Algorithm a;
    Protocol p;
    double added_us;
  };
  const Case cases[] = {
      {1, false, Collective::kAllReduce, 8, Algorithm::kRing, Protocol::kLL, 1.0 + 14 * 0.617},
      {1, false, Collective::kAllGather, 8, Algorithm::kRing, Protocol::kLL, 1.0 + 7 * 0.617},
      {1, false, Collective::kReduceScatter, 8, Algorithm::kRing, Protocol::kLL, 1.0 + 7 * 0.617},
      // One NVSwitch node's ring channels are one ring: a broadcast's latency is one step.
      {1, false, Collective::kBroadcast, 8, Algorithm::kRing, Protocol::kLL, 1.0 + 0.617},
      {1, false, Collective::kAllReduce, 8, Algorithm::kRing, Protocol::kLL128, 1.0},
      {1, false, Collective::kAllReduce, 64 * kMiB, Algorithm::kNvls, Protocol::kSimple, 1.0},
      {2, false, Collective::kAllReduce, 8, Algorithm::kTree, Protocol::kLL, 1.0 + 14 * 0.617},
      {2, false, Collective::kAllReduce, 8, Algorithm::kRing, Protocol::kLL, 1.0 + 28 * (0.617 - 0.4)},
      {2, true, Collective::kAllReduce, 8, Algorithm::kRing, Protocol::kLL, 1.0},
      {2, false, Collective::kAllReduce, 64 * kMiB, Algorithm::kNvlsTree, Protocol::kSimple, 1.0},
  };
  for (const char* gpu : {"B200", "GB200"}) {
    for (const Case& k : cases) {
      Machine blackwell = dgx(gpu, 8, k.nodes);
      blackwell.amd_cpu = k.amd_cpu;
      Machine as_hopper = blackwell;
      GpuPreset preset = *blackwell.gpu;
      preset.call_latency_us = preset.ll_step_latency_us = preset.p2p_call_latency_us = preset.p2p_op_latency_us = 0;
      as_hopper.gpu = &preset;
      const AchievedModel b(blackwell, Enabled::all()), h(as_hopper, Enabled::all());
      EXPECT_NEAR(*b.time_us(k.c, k.a, k.p, k.bytes), *h.time_us(k.c, k.a, k.p, k.bytes) + k.added_us, 1e-9)
          << gpu << " " << collective_name(k.c) << " " << algorithm_name(k.a) << "/" << protocol_name(k.p) << " on "
          << k.nodes;
      EXPECT_EQ(b.time(k.c, k.bytes).choice.algorithm, h.time(k.c, k.bytes).choice.algorithm);
    }
    for (const std::uint32_t nodes : {1u, 2u}) {
      const Machine blackwell = dgx(gpu, 8, nodes);
      Machine as_hopper = blackwell;
      GpuPreset preset = *blackwell.gpu;
      preset.p2p_call_latency_us = preset.p2p_op_latency_us = 0;
      as_hopper.gpu = &preset;
      const AchievedModel b(blackwell, Enabled::all()), h(as_hopper, Enabled::all());
      for (const std::uint64_t bytes : {std::uint64_t{8}, 64 * kMiB}) {
        EXPECT_NEAR(b.time(Collective::kSendRecv, bytes).us, h.time(Collective::kSendRecv, bytes).us + 2.118, 1e-9);
        EXPECT_NEAR(b.time(Collective::kAllToAll, bytes).us,
                    h.time(Collective::kAllToAll, bytes).us + 1.86 + 0.129 * 16 * nodes, 1e-9)
            << gpu << " " << nodes;
      }
    }
  }
  // The check fitted to nothing: a 2 x 8 B200 cluster's 8-byte tree all-reduce measured 35.5-36.5
  // us (8-64 B); NCCL's tree LL latency there and the 9.64 give 35.1, and its one network message
  // at Blackwell's 0.548 us (not Hopper's 0.27) 35.4.
  EXPECT_NEAR(AchievedModel(dgx("B200", 8, 2), Enabled::all()).time(Collective::kAllReduce, 8).us, 35.1 + 0.548 - 0.27,
              0.05);
  // That cost per message is Hopper's times Blackwell's ratio of steps, 1.217 / 0.6.
  EXPECT_DOUBLE_EQ(gpu_preset("B200").tree_message_us, 0.27 * (0.6 + 0.617) / 0.6);
  EXPECT_EQ(gpu_preset("GB200").tree_message_us, gpu_preset("B200").tree_message_us);
  EXPECT_EQ(gpu_preset("H100").tree_message_us, 0.27);
  const Machine hopper = dgx("H100");
  EXPECT_EQ(hopper.added_latency_us(false), 0.0);
  EXPECT_EQ(hopper.added_latency_us(true), 0.0);
  EXPECT_EQ(hopper.gpu->ll_step_latency_us, 0.0);
}

TEST(NcclAchieved, ARunsNcclSettingsKeepThePresetsNvlsCost) {
  // A run's system file without nccl-nvls-chunk-us leaves the GPU preset's cost per chunk (B200:
  // 1.217 us), as nccl-tests does; with it, the file's.
  const Machine b200 = dgx("B200");
  const AchievedModel preset(b200, only("NVLS"));
  const AchievedModel from_spec(b200, only("NVLS"), efficiencies_of(system::NcclSpec{}));
  EXPECT_EQ(from_spec.time(Collective::kAllReduce, 64 * kMiB).us, preset.time(Collective::kAllReduce, 64 * kMiB).us);
  system::NcclSpec hopper_cost;
  hopper_cost.nvls_chunk_us = 0.6;
  EXPECT_LT(AchievedModel(b200, only("NVLS"), efficiencies_of(hopper_cost)).time(Collective::kAllReduce, 64 * kMiB).us,
            preset.time(Collective::kAllReduce, 64 * kMiB).us - 10);
  // So with a tree's cost per network message: unset, two B200 nodes' 0.548 us; set, the file's.
  const Machine two = dgx("B200", 8, 2);
  const AchievedModel tree(two, only("Tree"));
  const AchievedModel tree_from_spec(two, only("Tree"), efficiencies_of(system::NcclSpec{}));
  const auto tree_us = [](const AchievedModel& m) {
    return *m.time_us(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL128, kMiB);
  };
  EXPECT_EQ(tree_us(tree_from_spec), tree_us(tree));
  system::NcclSpec hopper_message;
  hopper_message.tree_message_us = 0.27;
  const AchievedModel tree_as_hopper(two, only("Tree"), efficiencies_of(hopper_message));
  const double blackwell_message_us = 0.27 * (0.6 + 0.617) / 0.6;
  const double messages = tree.tree_messages_us(Protocol::kLL128, kMiB) / blackwell_message_us;
  EXPECT_GT(messages, 10.0);
  EXPECT_NEAR(tree_us(tree) - tree_us(tree_as_hopper), messages * (blackwell_message_us - 0.27), 1e-9);
}

TEST(NcclAchieved, SwitchingPairsOffLeavesTheOthersTimes) {
  // NCCL_ALGO=X NCCL_PROTO=Y runs (X, Y) as NCCL runs it by default: every pair's time is the
  // same whatever else is switched off. (With Simple off, LL's ratio to it was once a flat half:
  // 20.00 us for a 512 KiB ring LL all-reduce on 8 H100s, against 21.38.)
  for (const Machine& m : {dgx("H100", 8, 1), dgx("H100", 8, 2), dgx("A100", 8, 4), dgx("H100", 1, 4)}) {
    const AchievedModel all(m, Enabled::all());
    for (std::size_t ci = 0; ci < 5; ++ci) {
      const auto c = static_cast<Collective>(ci);
      for (std::size_t ai = 0; ai < kAlgorithms; ++ai) {
        for (std::size_t pi = 0; pi < kProtocols; ++pi) {
          const auto a = static_cast<Algorithm>(ai);
          const auto p = static_cast<Protocol>(pi);
          Enabled pair = only(algorithm_name(a));
          apply_enable_list(pair, protocol_name(p), false, "test");
          const AchievedModel some(m, pair);
          for (const std::uint64_t bytes : {512 * kKiB, 64 * kMiB}) {
            const auto forced = some.time_us(c, a, p, bytes);
            const auto by_default = all.time_us(c, a, p, bytes);
            ASSERT_EQ(forced.has_value(), by_default.has_value()) << algorithm_name(a) << "/" << protocol_name(p);
            if (forced) {
              EXPECT_DOUBLE_EQ(*forced, *by_default) << algorithm_name(a) << "/" << protocol_name(p);
            }
          }
        }
      }
    }
  }
}

TEST(NcclAchieved, ShapeOfASweep) {
  // Time grows with size, never shrinks; small sizes sit on the latency floor (ring LL, 15 us,
  // and 8 bytes' 14 bus bytes on one LL channel of 0.327 x 36.7 GB/s), less what back-to-back
  // calls overlap while only one chunk of 8 holds data (sparse_ring.h: 14.27 - 9.89 LL steps of
  // 0.6 us); half of the peak busbw is reached where latency and transfer take as long.
  const AchievedModel model(dgx(), Enabled::all());
  SweepOptions o;
  o.max_bytes = 16 * kGiB;
  const std::vector<SweepRow> rows = run_sweep(model, o);
  ASSERT_EQ(rows.size(), 32u);  // 8 B to 16 GiB by 2
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_GE(rows[i].out_of_place.time_us, rows[i - 1].out_of_place.time_us);
  EXPECT_NEAR(rows[0].out_of_place.time_us,
              6.6 + 14 * 0.6 + 14 / (1000 * 0.327 * 36.7) - back_to_back_saved_steps(8, 1) * 0.6, 1e-9);
  EXPECT_LT(rows[10].out_of_place.busbw, 0.01 * rows.back().out_of_place.busbw);  // 8 KiB
}

// ---- nccl-tests' table --------------------------------------------------------------------

TEST(NcclTestsTable, ColumnsAndSizesAsNcclTestsPrintsThem) {
  const AchievedModel model(dgx(), Enabled::all());
  SweepOptions o;
  o.collective = Collective::kAllGather;
  o.min_bytes = 100;
  o.max_bytes = 1000;
  o.factor = 10;
  const std::vector<SweepRow> rows = run_sweep(model, o);
  ASSERT_EQ(rows.size(), 2u);  // 100 and 1000 bytes
  // 100 bytes = 25 floats; 3 a rank, rounded down to 16 bytes: none. 1000 bytes: 250 floats,
  // 31 a rank, 28 rounded: nccl-tests prints the count a rank and the whole output, 28 x 8 x 4.
  EXPECT_EQ(rows[0].count, 0u);
  EXPECT_EQ(rows[0].size, 0u);
  EXPECT_EQ(rows[1].count, 28u);
  EXPECT_EQ(rows[1].size, 896u);
  const std::vector<SweepRow> kilo = {rows[1]};
  const std::string table = sweep_table(model, o, kilo, true);
  EXPECT_THAT(table, HasSubstr("#       size         count      type   redop    root     time   algbw   busbw  "
                               "#wrong"));
  EXPECT_THAT(table, HasSubstr("         896            28     float    none      -1"));
  EXPECT_THAT(table, HasSubstr("N/A  Ring/LL\n"));
  EXPECT_THAT(table, HasSubstr("# Avg bus bandwidth    : "));
  EXPECT_THAT(error_of([&] {
                SweepOptions bad = o;
                bad.factor = 1;
                run_sweep(model, bad);
              }),
              HasSubstr("a sweep that never grows"));
  EXPECT_THAT(error_of([&] {
                SweepOptions bad = o;
                bad.min_bytes = 2000;
                bad.max_bytes = 1000;
                run_sweep(model, bad);
              }),
              HasSubstr("expected -b <= -e"));
}

TEST(NcclTestsTable, TheInPlaceColumnIsTheInPlaceCall) {
  // nccl-tests times each size out of place, then in place. RCCL runs its MSCCL schedule for an
  // 8-MI300X all-reduce of 12 MiB out of place and its ring in place (msccl.h): the columns
  // differ there, the algorithm column names both, and the footer averages both columns, as
  // nccl-tests averages every call it times. At 8 MiB both run the schedule.
  const AchievedModel model(dgx("MI300X"), Enabled::all());
  SweepOptions o;
  o.min_bytes = 8 * kMiB;
  o.max_bytes = 12 * kMiB;
  o.factor = 0;
  o.step_bytes = 4 * kMiB;
  const std::vector<SweepRow> rows = run_sweep(model, o);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].in_place.choice.algorithm, Algorithm::kMsccl);
  EXPECT_EQ(rows[0].in_place.time_us, rows[0].out_of_place.time_us);
  EXPECT_EQ(rows[1].out_of_place.choice.algorithm, Algorithm::kMsccl);
  EXPECT_EQ(rows[1].in_place.choice.algorithm, Algorithm::kRing);
  EXPECT_NE(rows[1].in_place.time_us, rows[1].out_of_place.time_us);
  const std::string table = sweep_table(model, o, rows, true);
  EXPECT_THAT(table, HasSubstr("N/A  MSCCL/Simple\n"));
  EXPECT_THAT(table, HasSubstr("N/A  MSCCL/Simple (in place: Ring/Simple)\n"));
  const double average =
      (rows[0].out_of_place.busbw + rows[0].in_place.busbw + rows[1].out_of_place.busbw + rows[1].in_place.busbw) / 4;
  EXPECT_THAT(table, HasSubstr(fmt::format("# Avg bus bandwidth    : {:g} ", average)));
  // The columns are the sweep's, whatever the model was made for.
  EXPECT_EQ(run_sweep(AchievedModel(dgx("MI300X"), in_place(Enabled::all())), o)[1].out_of_place.choice.algorithm,
            Algorithm::kMsccl);
}

TEST(NcclTestsTable, AnAllGathersColumnsDifferByItsOwnShard) {
  // 8 H100s, an all-gather of 8 GiB: out of place the ring also copies the GPU's 1 GiB shard, at
  // 3350 GB/s; the table names one algorithm, as both columns run the ring.
  const AchievedModel model(dgx(), Enabled::all());
  SweepOptions o;
  o.collective = Collective::kAllGather;
  o.min_bytes = o.max_bytes = 8 * kGiB;
  const std::vector<SweepRow> rows = run_sweep(model, o);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].out_of_place.time_us - rows[0].in_place.time_us, kGiB / 3350e3, 1e-6);
  EXPECT_THAT(sweep_table(model, o, rows, true), HasSubstr("N/A  Ring/Simple\n"));
}

TEST(NcclTestsTable, BackToBackRingAllReducesOverlapWhileChunksAreEmpty) {
  // An 8x H100 node measured 13.0-13.7 us at 8-16 B, 14.9 at 64 B and 15.9 at 128 B (NVIDIA's
  // DGX sample, docs/nccl.md): 8-16 B fill one chunk of 8, 64 B four, 128 B all. Back to back the
  // model takes off 4.38 and 1.46 LL steps of 0.6 us (sparse_ring.h): 12.37 and 14.13, and
  // nothing from 128 B. A B200's LL step is 1.217 us: 19.31 at 8 B (measured 18.9-20.3). Both
  // columns; a lone call (the model's own time, what a run takes) keeps the whole ring.
  SweepOptions o;
  o.min_bytes = 8;
  o.max_bytes = 128;
  const auto times = [&](const AchievedModel& model, const SweepOptions& options) {
    std::vector<double> us;
    for (const SweepRow& r : run_sweep(model, options)) {
      EXPECT_EQ(r.in_place.time_us, r.out_of_place.time_us);
      us.push_back(r.out_of_place.time_us);
    }
    return us;
  };
  const AchievedModel h100(dgx(), Enabled::all());
  const std::vector<double> us = times(h100, o);  // 8, 16, 32, 64, 128 bytes
  const auto lone = [&](std::uint64_t bytes) { return h100.time(Collective::kAllReduce, bytes).us; };
  EXPECT_NEAR(us[0], lone(8) - 4.38 * 0.6, 1e-9);
  EXPECT_NEAR(us[0], 12.37, 0.01);
  EXPECT_NEAR(us[2], lone(32) - 4.38 * 0.6, 1e-9);  // two filled chunks: the same chain
  EXPECT_NEAR(us[3], lone(64) - 1.46 * 0.6, 1e-9);
  EXPECT_EQ(us[4], lone(128));
  EXPECT_NEAR(times(AchievedModel(dgx("B200"), Enabled::all()), o)[0], 19.31, 0.01);
  // The chunks are 16 bytes' worth of the type's elements: 64 bytes of doubles (8) fill four (8
  // elements read as floats would fill two), and 112 bytes of floats (28) seven, whose chain is
  // the full ring's.
  SweepOptions doubles = o;
  doubles.type = DataType::kDouble;
  doubles.min_bytes = doubles.max_bytes = 64;
  EXPECT_NEAR(times(h100, doubles)[0], lone(64) - 1.46 * 0.6, 1e-9);
  SweepOptions seven = o;
  seven.min_bytes = seven.max_bytes = 112;
  EXPECT_EQ(times(h100, seven)[0], lone(112));
  // Not where the ring is not NCCL's one order on NVSwitches (MI300X's mesh), across nodes, for
  // another collective or protocol, or below a host's launches (-g).
  EXPECT_EQ(times(AchievedModel(dgx("MI300X"), Enabled::all()), o)[0],
            AchievedModel(dgx("MI300X"), Enabled::all()).time(Collective::kAllReduce, 8).us);
  const AchievedModel two(dgx("H100", 8, 2), only("Ring"));
  EXPECT_EQ(times(two, o)[0], two.time(Collective::kAllReduce, 8).us);
  SweepOptions gather = o;
  gather.collective = Collective::kAllGather;
  gather.min_bytes = gather.max_bytes = 128;
  EXPECT_EQ(run_sweep(h100, gather)[0].out_of_place.time_us, h100.time(Collective::kAllGather, 128).us);
  SweepOptions launched = o;
  launched.host_issue_us = 36;
  EXPECT_EQ(run_sweep(h100, launched)[0].out_of_place.time_us, 36.0);
  // Simple waits on its steps' counters even where a chunk is empty; LL128 is not LL's loop.
  for (const char* protocol : {"Simple", "LL128"}) {
    Enabled one = only("Ring");
    apply_enable_list(one, protocol, false, "test");
    const AchievedModel model(dgx(), one);
    EXPECT_EQ(times(model, o)[0], model.time(Collective::kAllReduce, 8).us) << protocol;
  }
}

TEST(NcclPresets, NamesAndErrors) {
  EXPECT_EQ(&gpu_preset("h100-sxm"), &gpu_preset("H100"));
  EXPECT_EQ(gpu_preset("GB200").domain, 72u);
  EXPECT_THAT(error_of([] { gpu_preset("V100"); }), HasSubstr("unknown GPU \"V100\"; expected one of H100, H200"));
  EXPECT_THAT(error_of([] { nic_preset("cx9"); }), HasSubstr("unknown NIC \"cx9\"; expected one of ndr400"));
  EXPECT_THAT(error_of([] { check_machine(dgx("H100", 16)); }), HasSubstr("a H100 scale-up domain holds 8"));
  EXPECT_THAT(error_of([] { check_machine(dgx("H100", 1, 1)); }), HasSubstr("one GPU in all"));
  EXPECT_NO_THROW(check_machine(dgx("GB200", 72)));
  // The preset a device's printed name holds: the longest (a GB200 holds "B200" too), or none.
  EXPECT_EQ(gpu_preset_in("NVIDIA H100 80GB HBM3"), &gpu_preset("H100"));
  EXPECT_EQ(gpu_preset_in("NVIDIA GB200"), &gpu_preset("GB200"));
  EXPECT_EQ(gpu_preset_in("NVIDIA B200"), &gpu_preset("B200"));
  EXPECT_EQ(gpu_preset_in("AMD Instinct MI300X"), &gpu_preset("MI300X"));
  EXPECT_EQ(gpu_preset_in("NVIDIA H800"), nullptr);
}

}  // namespace
}  // namespace chakrasim::system::nccl
