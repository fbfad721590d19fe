// NVLS as a pipeline of NCCL's loops (system/nccl/nvls_pipeline.h): the chunking NCCL's enqueue
// picks, the pipeline's depth, and the time in closed form; and the shape this gives an 8x H100
// all-reduce sweep at middle sizes.
#include "system/nccl/nvls_pipeline.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "system/nccl/achieved.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;

TEST(NvlsPipeline, ChunksShrinkAsNcclsEnqueueShrinksThem) {
  // Hopper: 16 NVLS channels, a head per GPU: 128 chunks in flight. 128 KiB from 64 loops of it
  // (1 GiB), 64 KiB from 8 loops of 64 KiB (64 MiB), 32 KiB from 2 loops of 32 KiB (8 MiB), else
  // 16 KiB.
  const Machine m = dgx();
  const auto chunk = [&](std::uint64_t bytes) { return nvls_chunking(m, Algorithm::kNvls, 8, bytes, 0).chunk_bytes; };
  EXPECT_EQ(nvls_chunking(m, Algorithm::kNvls, 8, kGiB, 0).channels, 16u);
  EXPECT_EQ(nvls_chunking(m, Algorithm::kNvls, 8, kGiB, 0).loop_bytes(), 16 * kMiB);
  EXPECT_EQ(chunk(16 * kGiB), 128 * kKiB);
  EXPECT_EQ(chunk(kGiB), 128 * kKiB);
  EXPECT_EQ(chunk(kGiB - 1), 64 * kKiB);
  EXPECT_EQ(chunk(64 * kMiB), 64 * kKiB);
  EXPECT_EQ(chunk(64 * kMiB - 1), 32 * kKiB);
  EXPECT_EQ(chunk(8 * kMiB), 32 * kKiB);
  EXPECT_EQ(chunk(8 * kMiB - 1), 16 * kKiB);
  EXPECT_EQ(chunk(8), 16 * kKiB);
  // Four GPUs: half the chunks in flight, so each step comes at half the size.
  EXPECT_EQ(nvls_chunking(dgx("H100", 4), Algorithm::kNvls, 4, 512 * kMiB, 0).chunk_bytes, 128 * kKiB);
  EXPECT_EQ(nvls_chunking(dgx("H100", 4), Algorithm::kNvls, 4, 512 * kMiB - 1, 0).chunk_bytes, 64 * kKiB);
  // Blackwell: 24 channels in one domain, 32 across nodes.
  EXPECT_EQ(nvls_chunking(dgx("B200"), Algorithm::kNvls, 8, kGiB, 0).channels, 24u);
  EXPECT_EQ(nvls_chunking(dgx("B200", 8, 2), Algorithm::kNvlsTree, 8, kGiB, 0).channels, 32u);
  // NVLS across nodes that NCCL rates under 150 GB/s keeps 32 KiB chunks.
  EXPECT_EQ(nvls_chunking(dgx("H100", 8, 2), Algorithm::kNvls, 8, 16 * kGiB, 149).chunk_bytes, 32 * kKiB);
  EXPECT_EQ(nvls_chunking(dgx("H100", 8, 2), Algorithm::kNvls, 8, 16 * kGiB, 150).chunk_bytes, 128 * kKiB);
}

TEST(NvlsPipeline, TreeChunksAreCappedFromFourNodesAndShrinkOnTheirOwnSteps) {
  // NVLS-tree: 128 KiB on 2 and 3 nodes, 64 KiB from 4; halved below 4 loops of 128 KiB (64 MiB
  // on 8 GPUs) and below 1 loop of 64 KiB (8 MiB).
  const auto chunk = [](std::uint32_t nodes, std::uint64_t bytes) {
    return nvls_chunking(dgx("H100", 8, nodes), Algorithm::kNvlsTree, 8, bytes, 0).chunk_bytes;
  };
  EXPECT_EQ(chunk(2, kGiB), 128 * kKiB);
  EXPECT_EQ(chunk(3, kGiB), 128 * kKiB);
  EXPECT_EQ(chunk(4, kGiB), 64 * kKiB);
  EXPECT_EQ(chunk(2, 64 * kMiB), 128 * kKiB);
  EXPECT_EQ(chunk(2, 64 * kMiB - 1), 64 * kKiB);
  EXPECT_EQ(chunk(2, 8 * kMiB), 64 * kKiB);
  EXPECT_EQ(chunk(2, 8 * kMiB - 1), 32 * kKiB);
  EXPECT_EQ(chunk(4, 8 * kMiB - 1), 32 * kKiB);
}

TEST(NvlsPipeline, StagesAreTheNodesTwoAndTwoForEachTreeLevel) {
  EXPECT_EQ(nvls_stages(Collective::kAllReduce, Algorithm::kNvls, 1), 2.0);
  EXPECT_EQ(nvls_stages(Collective::kAllGather, Algorithm::kNvls, 1), 1.0);
  EXPECT_EQ(nvls_stages(Collective::kReduceScatter, Algorithm::kNvls, 1), 1.0);
  EXPECT_EQ(nvls_stages(Collective::kAllReduce, Algorithm::kNvls, 4), 2.0);  // the network reduces
  // NVLS-tree: a loop up and a loop down each of the tree's ceil(log2 nodes) levels.
  EXPECT_EQ(nvls_stages(Collective::kAllReduce, Algorithm::kNvlsTree, 2), 4.0);
  EXPECT_EQ(nvls_stages(Collective::kAllReduce, Algorithm::kNvlsTree, 3), 6.0);
  EXPECT_EQ(nvls_stages(Collective::kAllReduce, Algorithm::kNvlsTree, 4), 6.0);
  EXPECT_EQ(nvls_stages(Collective::kAllReduce, Algorithm::kNvlsTree, 16), 10.0);
}

TEST(NvlsPipeline, TimeIsLoopsAtTheSlowerSideAndTheFill) {
  // Loops of 1 MB (10 chunks of 100 kB), NVLink side 100 GB/s + 2 us a loop, NICs 80 GB/s.
  const NvlsChunking k{10, 1, 100'000};
  // NVLink-bound (NICs faster): a loop takes 10 + 2 us. 5.5 loops, then 2 more of fill.
  NvlsTime t = nvls_time(k, 3, 5'500'000, 100, 1000, 2);
  EXPECT_DOUBLE_EQ(t.transfer_us, 5.5 * 12);
  EXPECT_DOUBLE_EQ(t.fill_us, 2 * 12);
  EXPECT_DOUBLE_EQ(t.nvlink_share, 10.0 / 12);
  // NIC-bound: 12.5 us a loop; the loop's fixed cost hides under it.
  t = nvls_time(k, 3, 5'500'000, 100, 80, 2);
  EXPECT_DOUBLE_EQ(t.transfer_us, 5.5 * 12.5);
  EXPECT_DOUBLE_EQ(t.fill_us, 2 * 12.5);
  // A call smaller than a loop fills with what it has: 0.4 MB, 4 + 2 us.
  t = nvls_time(k, 2, 400'000, 100, 1000, 2);
  EXPECT_DOUBLE_EQ(t.transfer_us, 0.4 * 12);
  EXPECT_DOUBLE_EQ(t.fill_us, 6);
}

TEST(NvlsPipeline, EightH100SweepHasNvlsMiddleShape) {
  // The shape of a measured 8x H100 NVLS all-reduce sweep (docs/nccl.md): the bus bandwidth
  // reaches half its peak at 16 MiB (237 GB/s measured), ~360 at 64 MiB, ~420 at 256 MiB.
  // Derivation at 16 MiB: 32 KiB chunks, loops of 4 MiB: 4 MiB at 297.6 GB/s is 14.1 us, + 4.8;
  // 4 loops and one of fill is 94.5 us, + 25 us of latency: 119.5 us, busbw 245.8.
  Enabled nvls_only = Enabled::all();
  apply_enable_list(nvls_only, "NVLS", true, "test");
  const AchievedModel model(dgx(), nvls_only);
  const auto busbw = [&](std::uint64_t bytes) {
    return static_cast<double>(bytes) / 1e3 /
           *model.time_us(Collective::kAllReduce, Algorithm::kNvls, Protocol::kSimple, bytes) * 14 / 8;
  };
  EXPECT_NEAR(busbw(16 * kMiB), 245.8, 0.1);
  EXPECT_NEAR(busbw(64 * kMiB), 362, 362 * 0.05);
  EXPECT_NEAR(busbw(256 * kMiB), 422, 422 * 0.05);
  // Every doubling gains: no step down where the chunk shrinks.
  double last = 0;
  for (std::uint64_t bytes = kMiB; bytes <= 16 * kGiB; bytes *= 2) {
    EXPECT_GT(busbw(bytes), last) << bytes;
    last = busbw(bytes);
  }
}

}  // namespace
}  // namespace chakrasim::system::nccl
