// NCCL's point-to-point path (all-to-all, send/receive): the channels it gives each peer, and
// what they cost a call.
#include <cstdint>

#include <gtest/gtest.h>

#include "system/nccl/achieved.h"
#include "system/nccl/call_channels.h"
#include "system/nccl/p2p_channels.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint64_t kKiB = std::uint64_t{1} << 10;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// An H100 node's communicator holds 24 channels (twice its ring graph's 12): 32 p2p channels.
constexpr std::uint32_t kH100NodeChannels = 24;

TEST(NcclP2p, APeerStartsOnTheChannelsEveryRankCanHaveAndDoublesOnlyPast32Chunks) {
  // One node of 8 H100s: a peer may take 2 channels a link (36, so 64), at most the 32 p2p
  // channels; it starts with what 8 ranks can each have of 32 (4), one per 64 KiB (an NVLink
  // chunk of 512 KiB / 8) below that, and doubles while a channel's part is over 16 MiB (32 chunks).
  const Machine node = dgx();
  const auto channels = [&](std::uint64_t bytes) { return p2p_op_channels(node, kH100NodeChannels, bytes); };
  EXPECT_EQ(channels(0), 1u);
  EXPECT_EQ(channels(64 * kKiB), 1u);
  EXPECT_EQ(channels(64 * kKiB + 1), 2u);
  EXPECT_EQ(channels(256 * kKiB), 4u);
  EXPECT_EQ(channels(64 * kMiB), 4u);  // 16 MiB a channel: not over
  EXPECT_EQ(channels(64 * kMiB + 4), 8u);
  EXPECT_EQ(channels(256 * kMiB), 16u);
  EXPECT_EQ(channels(512 * kMiB), 32u);
  EXPECT_EQ(channels(16 * kGiB), 32u);
  // Fewer ranks share the 32 channels among fewer: 2 GPUs start on 16.
  EXPECT_EQ(p2p_op_channels(dgx("H100", 2), kH100NodeChannels, 64 * kMiB), 16u);
  // In a full mesh (MI300X: a link to each peer) RCCL gives a peer 4 channels a link, twice that
  // in one node: 8 of the 64 p2p channels its communicator's 56 (its table's 28 rings, doubled)
  // round up to, from the start.
  EXPECT_EQ(comm_channels(dgx("MI300X"), 2, 20.0), 56u);
  // Not the table's full node: the search's, but at least RCCL's 24 for 4 ranks and 32 for 2;
  // across nodes the search's too.
  EXPECT_EQ(comm_channels(dgx("MI300X", 4), 2, 20.0), 24u);
  EXPECT_EQ(comm_channels(dgx("MI300X", 2), 2, 20.0), 32u);
  EXPECT_EQ(comm_channels(dgx("MI300X", 8, 2), 2, 20.0), 4u);
  EXPECT_EQ(comm_channels(dgx("H100", 4), 2, 20.0), 4u);  // NCCL: no such least
  EXPECT_EQ(p2p_op_channels(dgx("MI300X"), 56, 64 * kMiB), 8u);
  EXPECT_EQ(p2p_op_channels(dgx("MI300X"), 56, kGiB), 8u);
  EXPECT_EQ(p2p_op_channels(dgx("MI300X", 8, 2), 56, kGiB), 2u);  // a network peer's 2 bind
  // Across nodes a peer over the network may take one channel per 14 GB/s of its NIC (NDR's 50:
  // 4), and 16 ranks start on 2 of 32; network chunks are 128 KiB, a part at most one.
  const Machine two = dgx("H100", 8, 2);
  EXPECT_EQ(p2p_op_channels(two, 32, 64 * kKiB), 1u);
  EXPECT_EQ(p2p_op_channels(two, 32, 128 * kKiB), 2u);
  EXPECT_EQ(p2p_op_channels(two, 32, 256 * kKiB), 2u);
  EXPECT_EQ(p2p_op_channels(two, 32, 256 * kKiB + 2), 4u);
  EXPECT_EQ(p2p_op_channels(two, 32, kGiB), 4u);
}

TEST(NcclP2p, ASendReceiveInANodeRunsOnItsFewChannelsTill512MiB) {
  // nccl-tests' send/receive on 8 H100s measured 80-82 GB/s at 32-64 MiB (4 channels), 164 at
  // 128 MiB (8), 300 at 256 MiB (16) and the links' 356-361 from 512 MiB (32 channels would give
  // 672): a channel carries 21 GB/s. Time = NCCL's p2p latency (8.2 us with Simple in a node: LL's
  // 6.6 + 0.6, and 1) + the bytes at the slower of the channels and the link (450 x 0.816).
  const AchievedModel model(dgx(), Enabled::all());
  const auto us = [&](std::uint64_t bytes) { return model.time(Collective::kSendRecv, bytes).us; };
  const double link = 450 * 0.816;
  EXPECT_NEAR(us(32 * kMiB), 8.2 + 32 * kMiB / (1000 * 4 * 21.0), 1e-6);
  EXPECT_NEAR(us(64 * kMiB), 8.2 + 64 * kMiB / (1000 * 4 * 21.0), 1e-6);
  EXPECT_NEAR(us(128 * kMiB), 8.2 + 128 * kMiB / (1000 * 8 * 21.0), 1e-6);
  EXPECT_NEAR(us(256 * kMiB), 8.2 + 256 * kMiB / (1000 * 16 * 21.0), 1e-6);
  EXPECT_NEAR(us(kGiB), 8.2 + kGiB / (1000 * link), 1e-6);
  // LL (16 KiB and less a peer) keeps its ring step's latency, 7.2 us, and its bytes run on one
  // channel at half an LL ring channel's 12 GB/s: the p2p kernel splits a channel's warps between
  // its send and its receive.
  const double ll_channel = 0.327 * 36.7 / 2;
  EXPECT_NEAR(us(8), 7.2 + 8 / (1000 * ll_channel), 1e-3);
  EXPECT_NEAR(us(16 * kKiB), 7.2 + 16 * kKiB / (1000 * ll_channel), 1e-3);
  // A calibration's channel rate replaces the default.
  Efficiencies faster;
  faster.p2p_channel_gb_per_s = 42;
  EXPECT_NEAR(AchievedModel(dgx(), Enabled::all(), faster).time(Collective::kSendRecv, 32 * kMiB).us,
              8.2 + 32 * kMiB / (1000 * 4 * 42.0), 1e-6);
}

TEST(NcclP2p, ASendAcrossNodesRunsAtANetworkChannelsRate) {
  // A channel to a peer across nodes carries NCCL's 14 GB/s (NCCL_P2P_PER_CHANNEL_NET_BW), not the
  // 21 it reaches over NVLink. 10 nodes of 8 H100s: 80 ranks leave a peer one channel of the 16 p2p
  // channels (2 a peer would need 2 x 10 batches), so a send/receive runs at 14 GB/s, where one
  // cluster measured 15.1-15.2; 2 nodes give a peer 4 channels, 56 GB/s, and the NIC binds.
  const Machine ten = dgx("H100", 8, 10), two = dgx("H100", 8, 2);
  const AchievedModel ten_nodes(ten, Enabled::all()), two_nodes(two, Enabled::all());
  EXPECT_EQ(p2p_op_channels(ten, 16, kGiB), 1u);
  EXPECT_DOUBLE_EQ(ten_nodes.p2p_channels_us(Collective::kSendRecv, Protocol::kSimple, kGiB),
                   static_cast<double>(kGiB) / (1000 * 14.0));
  EXPECT_DOUBLE_EQ(two_nodes.p2p_channels_us(Collective::kSendRecv, Protocol::kSimple, kGiB),
                   static_cast<double>(kGiB) / (1000 * 4 * 14.0));
  EXPECT_LT(two_nodes.p2p_channels_us(Collective::kSendRecv, Protocol::kSimple, kGiB),
            static_cast<double>(kGiB) /
                (1000 * two_nodes.p2p_gb_per_s(Collective::kSendRecv, Protocol::kSimple, kGiB)));
  // LL's channel is slower than that already: its own rate across nodes as in one.
  EXPECT_DOUBLE_EQ(ten_nodes.p2p_channels_us(Collective::kSendRecv, Protocol::kLL, 8 * kKiB),
                   8.0 * kKiB / (1000 * 0.327 * 36.7 / 2));
}

TEST(NcclP2p, AnAllToAllsPeersShareTheChannels) {
  // 8 GPUs: 7 peers on 4 channels each, 28 of 32, 588 GB/s: more than the links carry (450 x
  // 0.776 x (1 - 0.311 / 4) = 322 GB/s for an all-to-all), so the links bind. 2 GPUs: one peer on
  // 16, 336 GB/s for the half of the buffer it sends, below the links' 367 for it (one peer: a
  // ring's share): the channels bind. Both pay the first step: a 512 KiB chunk at 21 GB/s.
  const double first_step_us = 512 * kKiB / (1000 * 21.0);
  const AchievedModel eight(dgx(), Enabled::all());
  EXPECT_EQ(eight.p2p_channels_us(Collective::kAllToAll, Protocol::kSimple, 64 * kMiB),
            64.0 * kMiB * 7 / 8 / (1000 * 28 * 21.0));
  EXPECT_NEAR(eight.time(Collective::kAllToAll, 64 * kMiB).us,
              8.2 + first_step_us + 64.0 * kMiB * 7 / 8 / (1000 * 450 * 0.776 * (1 - 0.311 / 4)), 1e-6);
  const AchievedModel two(dgx("H100", 2), Enabled::all());
  EXPECT_NEAR(two.time(Collective::kAllToAll, 64 * kMiB).us, 8.2 + first_step_us + 32.0 * kMiB / (1000 * 16 * 21.0),
              1e-6);
  // Not for the collectives, nor for LL128, which NCCL's p2p never runs.
  EXPECT_EQ(eight.p2p_channels_us(Collective::kAllReduce, Protocol::kSimple, 64 * kMiB), 0.0);
  EXPECT_EQ(eight.p2p_channels_us(Collective::kSendRecv, Protocol::kLL128, 8 * kKiB), 0.0);
}

TEST(NcclP2p, AnAllToAllThroughTheSwitchesReachesMoreOfTheLinksWithMoreChannelsAPeer) {
  // Two 8x H100 clusters: busbw 316-322 GB/s with 4 channels a peer (32-512 MiB), 336 with 8 (1
  // GiB), 344 with 16 (2 GiB), 345-348 with 32 (4-16 GiB). Share = 0.776 x (1 - 0.311 / channels):
  // 322.0, 335.6, 342.4, 345.8 GB/s of 450.
  const AchievedModel eight(dgx(), Enabled::all());
  const auto busbw = [&](std::uint64_t bytes) { return 450 * eight.all_to_all_share(bytes); };
  EXPECT_NEAR(busbw(512 * kMiB), 322.0, 0.1);
  EXPECT_NEAR(busbw(kGiB), 335.6, 0.1);
  EXPECT_NEAR(busbw(2 * kGiB), 342.4, 0.1);
  EXPECT_NEAR(busbw(16 * kGiB), 345.8, 0.1);
  // The whole call, first step and latency in: within 1% of the two clusters' 311-315 GB/s at 512
  // MiB and their 348 at 16 GiB.
  const auto call_busbw = [&](std::uint64_t bytes) {
    return static_cast<double>(bytes) * 7 / 8 / (1000 * eight.time(Collective::kAllToAll, bytes).us);
  };
  EXPECT_GT(call_busbw(512 * kMiB), 311 * 0.99);
  EXPECT_LT(call_busbw(512 * kMiB), 315 * 1.01);
  EXPECT_NEAR(call_busbw(16 * kGiB), 348, 348 * 0.01);
  // One peer is a ring's one-to-one traffic; a full mesh (MI300X) has no switch to share: its
  // ring's share.
  EXPECT_EQ(AchievedModel(dgx("H100", 2), Enabled::all()).all_to_all_share(kGiB), 0.816);
  EXPECT_EQ(AchievedModel(dgx("MI300X"), Enabled::all()).all_to_all_share(kGiB), 0.712);
  // Ampere keeps Hopper's ratio to its ring; a calibration replaces the preset's.
  EXPECT_NEAR(AchievedModel(dgx("A100"), Enabled::all()).all_to_all_share(16 * kGiB),
              0.78 * 0.776 / 0.816 * (1 - 0.311 / 32), 1e-12);
  Efficiencies calibrated;
  calibrated.all_to_all = 0.7;
  EXPECT_NEAR(AchievedModel(dgx(), Enabled::all(), calibrated).all_to_all_share(16 * kGiB), 0.7 * (1 - 0.311 / 32),
              1e-12);
  // B200's channels (672 GB/s at 32 a peer) bind before its links (900 x 0.776 x 0.99 = 691).
  const AchievedModel b200(dgx("B200"), Enabled::all());
  EXPECT_GT(900 * b200.all_to_all_share(16 * kGiB), 32 * 21.0);
}

TEST(NcclP2p, AnAllToAllsFirstStepIsAChunkOrAPartAtAChannelsRate) {
  // 8 H100s: a peer's piece is an eighth, on 4 channels from 256 KiB: parts of 64 KiB at 2 MiB,
  // 512 KiB at 16 MiB, a chunk (512 KiB) from there. Across nodes the chunk is 128 KiB.
  const AchievedModel eight(dgx(), Enabled::all());
  const auto step_us = [&](std::uint64_t bytes) { return eight.all_to_all_first_step_us(Protocol::kSimple, bytes); };
  EXPECT_DOUBLE_EQ(step_us(2 * kMiB), 64 * kKiB / (1000 * 21.0));
  EXPECT_DOUBLE_EQ(step_us(16 * kMiB), 512 * kKiB / (1000 * 21.0));
  EXPECT_DOUBLE_EQ(step_us(kGiB), 512 * kKiB / (1000 * 21.0));
  // Across nodes the chunk is 128 KiB, at a network channel's 14 GB/s.
  EXPECT_DOUBLE_EQ(AchievedModel(dgx("H100", 8, 2), Enabled::all()).all_to_all_first_step_us(Protocol::kSimple, kGiB),
                   128 * kKiB / (1000 * 14.0));
  // LL has no steps to fill; a send/receive shows none.
  EXPECT_EQ(eight.all_to_all_first_step_us(Protocol::kLL, 64 * kKiB), 0.0);
  EXPECT_NEAR(eight.time(Collective::kSendRecv, 32 * kMiB).us, 8.2 + 32 * kMiB / (1000 * 4 * 21.0), 1e-6);
}

TEST(NcclP2p, AnAllToAllWaitsForItsBusiestChannel) {
  // NCCL puts round r's parts (to rank + r; round 0 is the copy to itself) on p2p channels
  // reverse(r) + part, r's 5 bits reversed over 32 channels: rounds 1-7 start at 16, 8, 24, 4,
  // 20, 12, 28. With 4 channels a peer (up to 512 MiB) they are disjoint: one part each. With 8
  // (1 GiB) they overlap: channels 8-31 carry 2 parts and 4-7 and 0-3 one (and the copy). With 16
  // (2 GiB) channels 16-31 carry 4. With 32 (from 4 GiB) every channel carries all 7 peers' parts.
  // Time = the busiest channel's parts at 21 GB/s each.
  const AchievedModel eight(dgx(), Enabled::all());
  const auto channels_us = [&](std::uint64_t bytes) {
    return eight.p2p_channels_us(Collective::kAllToAll, Protocol::kSimple, bytes);
  };
  const auto parts_us = [](std::uint64_t bytes, double channels, double parts) {
    return static_cast<double>(bytes / 8) / channels * parts / (1000 * 21.0);
  };
  EXPECT_DOUBLE_EQ(channels_us(512 * kMiB), parts_us(512 * kMiB, 4, 1));
  EXPECT_DOUBLE_EQ(channels_us(kGiB), parts_us(kGiB, 8, 2));
  EXPECT_DOUBLE_EQ(channels_us(2 * kGiB), parts_us(2 * kGiB, 16, 4));
  EXPECT_DOUBLE_EQ(channels_us(4 * kGiB), parts_us(4 * kGiB, 32, 7));
  // LL: an op of 16 KiB and less a peer, on one channel at half an LL ring channel's rate.
  EXPECT_DOUBLE_EQ(eight.p2p_channels_us(Collective::kAllToAll, Protocol::kLL, 128 * kKiB),
                   16.0 * kKiB / (1000 * 0.327 * 36.7 / 2));
  // Across 2 nodes NCCL gives each group of 8 rounds one base: reverse(0) = 0 and reverse(1) = 16.
  // 16 ranks at 64 MiB: 4 MiB a peer on 4 channels. Channels 0-3 carry the copy and the node's 7
  // other GPUs' parts over NVLink, channels 16-19 the other node's 8 over the network, at a network
  // channel's 14 GB/s: those bind.
  const AchievedModel two(dgx("H100", 8, 2), Enabled::all());
  EXPECT_DOUBLE_EQ(two.p2p_channels_us(Collective::kAllToAll, Protocol::kSimple, 64 * kMiB),
                   static_cast<double>(4 * kMiB) / 4 * 8 / (1000 * 14.0));
}

}  // namespace
}  // namespace chakrasim::system::nccl
