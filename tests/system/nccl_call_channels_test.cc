// The channels NCCL runs a call on (system/nccl/call_channels.h), and what few of them cost LL.
#include "system/nccl/call_channels.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "system/nccl/achieved.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint64_t kKiB = 1024;

TEST(CallChannels, CommunicatorChannelsAreTheRingGraphsDoubled) {
  // Twice the graph's; twice again on Hopper across nodes over 45 GB/s a channel while under 16.
  EXPECT_EQ(comm_channels(dgx("H100", 8, 2), 8, 45), 16u);
  EXPECT_EQ(comm_channels(dgx("H100", 8, 2), 4, 48), 16u);
  EXPECT_EQ(comm_channels(dgx("H100", 8, 2), 8, 48), 16u);
  EXPECT_EQ(comm_channels(dgx("A100", 8, 2), 4, 48), 8u);
  EXPECT_EQ(comm_channels(dgx("H100", 8, 1), 4, 48), 8u);
  EXPECT_EQ(comm_channels(dgx("H100", 8, 2), 40, 20), 64u);
}

TEST(CallChannels, AnLLRingDropsAChannelPerThreadsTimesEightBytesAPeer) {
  // Ring LL: 512 threads x 8 bytes x 8 ranks = 32 KiB a channel on 8 GPUs, of 24.
  const auto ring = [](std::uint32_t ranks, std::uint64_t bytes) {
    return call_channels(Algorithm::kRing, Protocol::kLL, ranks, 24, bytes);
  };
  EXPECT_EQ(ring(8, 8), 1u);
  EXPECT_EQ(ring(8, 32 * kKiB), 1u);
  EXPECT_EQ(ring(8, 64 * kKiB - 1), 1u);
  EXPECT_EQ(ring(8, 64 * kKiB), 2u);
  EXPECT_EQ(ring(8, 512 * kKiB), 16u);
  EXPECT_EQ(ring(8, 768 * kKiB), 24u);
  EXPECT_EQ(ring(8, 4096 * kKiB), 24u);  // the communicator's, at most
  // 16 ranks: 64 KiB a channel.
  EXPECT_EQ(ring(16, 512 * kKiB), 8u);
  // A tree's LL threshold is not the ranks': 4 KiB a channel; LL128's 640 threads x 8 bytes.
  EXPECT_EQ(call_channels(Algorithm::kTree, Protocol::kLL, 16, 16, 16 * kKiB), 4u);
  EXPECT_EQ(call_channels(Algorithm::kRing, Protocol::kLL128, 8, 24, 51200), 10u);
  EXPECT_EQ(call_channels(Algorithm::kRing, Protocol::kSimple, 8, 24, 256 * kKiB), 8u);
}

TEST(CallChannels, AnLLCallTakesItsBusBytesOverItsChannelsRate) {
  // 32 KiB ring all-reduce of 8: one channel, each GPU sending 2 x 7/8 x 32768 = 57,344 bytes,
  // at 10 GB/s: 5.7344 us. 64 KiB: two channels, the same. A tree carries its share up and
  // down: 16 KiB on 4 channels, 2 x 16384 / 4 = 8192 bytes a channel, 0.8192 us.
  EXPECT_DOUBLE_EQ(ll_channels_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL, 8, 24, 32 * kKiB, 10),
                   5.7344);
  EXPECT_DOUBLE_EQ(ll_channels_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL, 8, 24, 64 * kKiB, 10),
                   5.7344);
  EXPECT_DOUBLE_EQ(ll_channels_us(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL, 16, 16, 16 * kKiB, 10),
                   0.8192);
  // An all-gather's ring sends 7/8 of its output: 28,672 bytes at 32 KiB.
  EXPECT_DOUBLE_EQ(ll_channels_us(Collective::kAllGather, Algorithm::kRing, Protocol::kLL, 8, 24, 32 * kKiB, 10),
                   2.8672);
  // Other protocols and algorithms: the links bound their channels.
  EXPECT_EQ(ll_channels_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL128, 8, 24, 32 * kKiB, 10), 0);
  EXPECT_EQ(ll_channels_us(Collective::kAllReduce, Algorithm::kNvls, Protocol::kLL, 8, 24, 32 * kKiB, 10), 0);
}

TEST(CallChannels, ASmallLLCallTakesItsChannelsTimeALargeOneItsLinks) {
  // 8 H100s, ring LL all-reduce, an LL channel at 0.327 x NCCL's 36.7 GB/s: at 32 KiB the one
  // channel takes 57,344 bytes / 12.0009 GB/s = 4.778 us, where the links would take 0.4; at
  // 4 MiB (24 channels, 288 GB/s of bus bytes against LL's share of the links) the links bind.
  Enabled ring = Enabled::all();
  apply_enable_list(ring, "Ring", true, "test");
  apply_enable_list(ring, "LL", false, "test");
  const AchievedModel model(dgx("H100", 8, 1), ring);
  EXPECT_DOUBLE_EQ(model.ll_channel_gb_per_s(), 0.327 * 36.7);
  const double latency = model.tuning().latency_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL);
  const auto time = [&](std::uint64_t bytes) {
    return *model.time_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL, bytes) - latency;
  };
  EXPECT_NEAR(time(32 * kKiB), 57344.0 / (1000 * 0.327 * 36.7), 1e-9);
  const double links_us =
      4096.0 * kKiB / (1000 * model.algorithm_gb_per_s(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL));
  EXPECT_GT(links_us, model.ll_channels_us(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL, 4096 * kKiB));
  EXPECT_NEAR(time(4096 * kKiB), links_us, 1e-9);
  // A100: NCCL's ceiling is 20 GB/s, the channel 6.54.
  EXPECT_DOUBLE_EQ(AchievedModel(dgx("A100", 8, 1), ring).ll_channel_gb_per_s(), 0.327 * 20.0);
}

}  // namespace
}  // namespace chakrasim::system::nccl
