// A tree's network messages (system/nccl/tree_messages.h): the channels and chunks NCCL's
// enqueue picks, and what their count adds to a tree across nodes.
#include "system/nccl/tree_messages.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "system/nccl/achieved.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;

TEST(TreeMessages, SmallCallsRunOnFewerChannels) {
  // LL: one channel dropped for every 512 threads x 8 bytes = 4 KiB the call lacks; a channel's
  // chunk is then its share: 128 KiB on 16 channels is 16 messages of 8 KiB (every channel kept:
  // 128 KiB >= 16 x 4 KiB); 16 KiB keeps 4 channels, 4 messages of 4 KiB; 8 bytes, one channel.
  const Machine m = dgx("H100", 8, 2);
  TreeMessages t = tree_messages(m, Protocol::kLL, 16, 128 * kKiB);
  EXPECT_EQ(t.channels, 16u);
  EXPECT_EQ(t.chunk_bytes, 8 * kKiB);
  EXPECT_DOUBLE_EQ(t.messages, 16);
  t = tree_messages(m, Protocol::kLL, 16, 16 * kKiB);
  EXPECT_EQ(t.channels, 4u);
  EXPECT_DOUBLE_EQ(t.messages, 4);
  t = tree_messages(m, Protocol::kLL, 16, 8);
  EXPECT_EQ(t.channels, 1u);
  EXPECT_DOUBLE_EQ(t.messages, 1);
  // LL's chunk is 32 KiB at most: 4 MiB on 16 channels, 128 messages.
  EXPECT_DOUBLE_EQ(tree_messages(m, Protocol::kLL, 16, 4 * kMiB).messages, 128);
  // Simple's, 512 KiB.
  EXPECT_EQ(tree_messages(m, Protocol::kSimple, 16, 64 * kMiB).chunk_bytes, 512 * kKiB);
}

TEST(TreeMessages, LL128ChunksShrinkWithTheTreesDepth) {
  // 4 nodes of 8: depth 1 + 2 + 0.8 = 3.8; halve 576,000 while fewer than 3.8 x 64 / 8 = 30.4
  // chunks a channel and above 128 KiB (to 72,000), then while fewer than 7.6 and above 32 KiB.
  // 8 MiB on 16 channels: 8388608 / (16 x 72000) = 7 < 7.6: 36,000 (14 a channel, stop).
  const Machine four = dgx("H100", 8, 4);
  EXPECT_EQ(tree_messages(four, Protocol::kLL128, 16, 8 * kMiB).chunk_bytes, 36000u);
  // 4 MiB: 18,000 (at or under 32 KiB, stop).
  EXPECT_EQ(tree_messages(four, Protocol::kLL128, 16, 4 * kMiB).chunk_bytes, 18000u);
  // 1 GiB: 1073741824 / (16 x 576000) = 116 chunks a channel: kept.
  EXPECT_EQ(tree_messages(four, Protocol::kLL128, 16, 1024 * kMiB).chunk_bytes, 576000u);
  // 2 nodes: depth 2.8, thresholds 22.4 and 5.6: 4 MiB gives 72,000 then 36,000 (7 >= 5.6).
  EXPECT_EQ(tree_messages(dgx("H100", 8, 2), Protocol::kLL128, 16, 4 * kMiB).chunk_bytes, 36000u);
}

TEST(TreeMessages, TheyAddToATreeAcrossNodesOnly) {
  // An 8 MiB tree LL128 all-reduce on 4 nodes: 8388608 / 36000 = 233.0 messages x 0.27 us over
  // NCCL's latency and the bytes at the tree's rate; in one node, or for a ring, nothing.
  Enabled tree = Enabled::all();
  apply_enable_list(tree, "Tree", true, "test");
  const AchievedModel four(dgx("H100", 8, 4), tree);
  const double messages_us = 8388608.0 / 36000 * 0.27;
  EXPECT_DOUBLE_EQ(four.tree_messages_us(Protocol::kLL128, 8 * kMiB), messages_us);
  const double plain_us =
      four.tuning().latency_us(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL128) +
      8388608.0 / (1000 * four.algorithm_gb_per_s(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL128));
  EXPECT_DOUBLE_EQ(*four.time_us(Collective::kAllReduce, Algorithm::kTree, Protocol::kLL128, 8 * kMiB),
                   plain_us + messages_us);
  EXPECT_EQ(AchievedModel(dgx("H100", 8, 1), tree).tree_messages_us(Protocol::kLL128, 8 * kMiB), 0.0);
}

TEST(TreeMessages, LLsLinesAreReadByASendProxyUpTheTreeAndDown) {
  // A 16 KiB tree LL all-reduce on 2 nodes: 4 channels (one for each 512 threads x 8 bytes), a
  // message each (a chunk is at most the channel's 4 KiB). A channel's 4 KiB goes up as 8 KiB of
  // lines and comes down again, each read by a send proxy at 0.3 ns a byte: 2 x 8192 x 0.3 ns.
  Enabled tree = Enabled::all();
  apply_enable_list(tree, "Tree", true, "test");
  const AchievedModel two(dgx("H100", 8, 2), tree);
  EXPECT_EQ(tree_messages(dgx("H100", 8, 2), Protocol::kLL, 32, 16 * kKiB).channels, 4u);
  EXPECT_DOUBLE_EQ(two.tree_messages_us(Protocol::kLL, 16 * kKiB), 4 * 0.27 + 2 * 8192 * 0.3 / 1000);
  // The calibration's rate; none for LL128 and Simple, whose buffers NCCL reads from the GPU.
  Efficiencies no_scan;
  no_scan.ll_proxy_scan_ns = 0;
  EXPECT_DOUBLE_EQ(AchievedModel(dgx("H100", 8, 2), tree, no_scan).tree_messages_us(Protocol::kLL, 16 * kKiB),
                   4 * 0.27);
  const TreeMessages ll128 = tree_messages(dgx("H100", 8, 2), Protocol::kLL128, 32, 16 * kKiB);
  EXPECT_DOUBLE_EQ(two.tree_messages_us(Protocol::kLL128, 16 * kKiB), ll128.messages * 0.27);
}

}  // namespace
}  // namespace chakrasim::system::nccl
