// A ring all-reduce too small to fill every rank's chunk, timed back to back (sparse_ring.h).
#include "system/nccl/sparse_ring.h"

#include <cstdint>
#include <utility>

#include <gtest/gtest.h>

namespace chakrasim::system::nccl {
namespace {

TEST(SparseRing, FilledChunksFollowNcclsChunkOfSixteenBytes) {
  // 8 ranks of floats: a chunk is alignUp(ceil(count / 8), 4) elements, so 2 and 4 floats fill
  // chunk 0, 8 fill two, 16 four, 28 seven, 32 all eight; 40 make chunks of 8, five of them filled.
  const std::pair<std::uint64_t, std::uint32_t> floats[] = {{2, 1}, {4, 1}, {8, 2}, {16, 4}, {28, 7}, {32, 8}, {40, 5}};
  for (const auto& [count, filled] : floats) EXPECT_EQ(filled_chunks(count, 4, 8), filled) << count;
  EXPECT_EQ(filled_chunks(4, 8, 8), 2u);   // doubles: 2 a chunk
  EXPECT_EQ(filled_chunks(8, 2, 8), 1u);   // halves: 8 a chunk
  EXPECT_EQ(filled_chunks(32, 1, 8), 2u);  // bytes: 16 a chunk
  EXPECT_EQ(filled_chunks(1 << 20, 4, 8), 8u);
  EXPECT_EQ(filled_chunks(0, 4, 8), 0u);
}

TEST(SparseRing, BackToBackCallsOverlapByTheRingsLongestChainOfWaits) {
  // With free empty steps, one filled chunk c of n: rank c + 1 sends it at its first move and
  // gets it back, reduced, at move n; it has nothing more to wait for and starts the next call
  // there, so the period is n steps (the lone call's 2(n - 1)). In general, with ceil(filled / 2)
  // = j, the chain repeats every 2n - n / j steps, 2(n - 1) once every chunk is filled.
  for (const std::uint32_t n : {4u, 8u, 16u, 32u}) {
    for (std::uint32_t filled = 1; filled <= n; ++filled) {
      const double j = (filled + 1) / 2;
      EXPECT_NEAR(back_to_back_ring_steps(n, filled, 0.0), 2.0 * n - n / j, 1e-6) << n << " " << filled;
    }
  }
  // Empty steps that cost a share of a step lengthen the chain: with the measured 0.27, one filled
  // chunk of 8 takes its 8 hops (a step each) and then rank c + 1's 6 empty moves and the next
  // call's first move at 0.27 each: 9.89 steps. A call with every chunk filled takes its 14 and
  // its first move's share, 14.27: one of 8 filled saves 4.38 steps, four 1.46, seven none.
  EXPECT_NEAR(back_to_back_ring_steps(8, 1), 9.89, 1e-6);
  EXPECT_NEAR(back_to_back_ring_steps(8, 8), 14.27, 1e-6);
  EXPECT_NEAR(back_to_back_ring_steps(16, 16), 30.27, 1e-6);
  EXPECT_NEAR(back_to_back_saved_steps(8, 1), 4.38, 1e-6);
  EXPECT_NEAR(back_to_back_saved_steps(8, 4), 1.46, 1e-6);
  EXPECT_EQ(back_to_back_saved_steps(8, 7), 0.0);
  EXPECT_EQ(back_to_back_saved_steps(8, 8), 0.0);
  EXPECT_EQ(back_to_back_saved_steps(8, 0), 0.0);
  // Past 8 ranks the chain settles into cycles of several calls (4 calls, 28 steps, for 7 or 8
  // filled of 16 when empty steps are free); the saving still falls as more chunks fill.
  double last = back_to_back_saved_steps(72, 1);
  for (std::uint32_t filled = 3; filled < 72; filled += 8) {
    const double saved = back_to_back_saved_steps(72, filled);
    EXPECT_LE(saved, last) << filled;
    last = saved;
  }
}

}  // namespace
}  // namespace chakrasim::system::nccl
