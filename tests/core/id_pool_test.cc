// IdPool: ids come back last-released first, and a reused slot keeps its value (and so the
// capacity of a buffer it owns) until the caller overwrites it.
#include "core/id_pool.h"

#include <gtest/gtest.h>

#include <vector>

namespace chakrasim {
namespace {

TEST(IdPool, FreshIdsCountUpAndReleasedOnesComeBackLastFirst) {
  IdPool<int> pool;
  EXPECT_EQ(pool.add(10), 0u);
  EXPECT_EQ(pool.add(11), 1u);
  EXPECT_EQ(pool.add(12), 2u);
  pool.release(0);
  pool.release(2);
  EXPECT_EQ(pool.live(), 1u);
  EXPECT_EQ(pool.acquire(), 2u);  // the last released
  EXPECT_EQ(pool.acquire(), 0u);
  EXPECT_EQ(pool.acquire(), 3u);  // none free: a fresh one
  EXPECT_EQ(pool.capacity(), 4u);
  EXPECT_EQ(pool.live(), 4u);
}

TEST(IdPool, AReusedSlotKeepsItsValueUntilOverwritten) {
  IdPool<std::vector<int>> pool;
  const std::uint32_t id = pool.add(std::vector<int>(100, 7));
  pool[id].clear();
  pool.release(id);
  const std::uint32_t again = pool.acquire();
  ASSERT_EQ(again, id);
  EXPECT_TRUE(pool[again].empty());
  EXPECT_GE(pool[again].capacity(), 100u);
}

TEST(IdPool, TakeReturnsTheValueAndFreesTheId) {
  IdPool<int> pool;
  const std::uint32_t a = pool.add(5);
  const std::uint32_t b = pool.add(6);
  EXPECT_EQ(pool.take(a), 5);
  EXPECT_EQ(pool.live(), 1u);
  EXPECT_EQ(pool.add(8), a);
  EXPECT_EQ(pool[b], 6);
  EXPECT_EQ(pool[a], 8);
}

}  // namespace
}  // namespace chakrasim
