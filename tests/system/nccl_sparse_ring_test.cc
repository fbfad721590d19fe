// A ring all-reduce too small to fill every rank's chunk, timed back to back (sparse_ring.h).
#include "system/nccl/sparse_ring.h"

#include <gtest/gtest.h>

namespace chakrasim::system::nccl {
namespace {

TEST(SparseRing, FilledChunksFollowNcclsChunkOfSixteenBytes) {
  // 8 ranks of floats: a chunk is alignUp(ceil(count / 8), 4) elements, so 2 and 4 floats fill
  // chunk 0, 8 fill two, 16 four, 32 all eight; 40 make chunks of 8, five of them filled.
  const std::pair<std::uint64_t, std::uint32_t> floats[] = {{2, 1}, {4, 1}, {8, 2}, {16, 4}, {32, 8}, {40, 5}};
  for (const auto& [count, filled] : floats) EXPECT_EQ(filled_chunks(count, 4, 8), filled) << count;
  EXPECT_EQ(filled_chunks(4, 8, 8), 2u);   // doubles: 2 a chunk
  EXPECT_EQ(filled_chunks(32, 1, 8), 2u);  // bytes: 16 a chunk
  EXPECT_EQ(filled_chunks(1 << 20, 4, 8), 8u);
  EXPECT_EQ(filled_chunks(0, 4, 8), 0u);
}

TEST(SparseRing, BackToBackCallsOverlapByTheRingsLongestChainOfWaits) {
  // With free empty steps, one filled chunk c: rank c + 1 sends it at its first move and gets it
  // back, reduced, at move n; it has nothing more to wait for and starts the next call there, so
  // the period is n steps (8 of 8 ranks' lone 14). Three or four filled chunks: 12; all: 2(n - 1).
  const double eight[] = {8, 8, 12, 12, 40.0 / 3, 40.0 / 3, 14, 14};
  for (std::uint32_t filled = 1; filled <= 8; ++filled) {
    EXPECT_NEAR(back_to_back_ring_steps(8, filled, 0.0), eight[filled - 1], 1e-6) << filled;
  }
  const double four[] = {4, 4, 6, 6};
  for (std::uint32_t filled = 1; filled <= 4; ++filled) {
    EXPECT_NEAR(back_to_back_ring_steps(4, filled, 0.0), four[filled - 1], 1e-6) << filled;
  }
  // Empty steps that cost a share of a step lengthen the chain: with the measured 0.27, one filled
  // chunk of 8 takes its 8 hops (a step each) and then rank c + 1's 6 empty moves and the next
  // call's first move at 0.27 each: 9.89 steps, between the free case's 8 and the lone call's 14.
  EXPECT_NEAR(back_to_back_ring_steps(8, 1), 9.89, 0.01);
  EXPECT_NEAR(back_to_back_ring_steps(8, 4), 12.81, 0.01);
  EXPECT_EQ(back_to_back_ring_steps(8, 8), 14.0);
  EXPECT_EQ(back_to_back_ring_steps(16, 16), 30.0);
}

}  // namespace
}  // namespace chakrasim::system::nccl
