// The system layer's packed values (system/tags.h) round-trip at the extremes of every field,
// and the tag spaces stay apart.
#include <limits>

#include <gtest/gtest.h>

#include "system/tags.h"

namespace chakrasim::test {
namespace {

using system::CustomNodeRef;
using system::StepTimerArg;

TEST(Tags, StepTimerArgRoundTrips) {
  for (const std::uint32_t stream : {0u, 1u, 0x7fffffffu, std::numeric_limits<std::uint32_t>::max()}) {
    for (const bool reduce : {false, true}) {
      const StepTimerArg back = StepTimerArg::unpack(StepTimerArg{stream, reduce}.pack());
      EXPECT_EQ(back.stream, stream);
      EXPECT_EQ(back.reduce, reduce);
    }
  }
}

TEST(Tags, CustomNodeRefRoundTrips) {
  const std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
  for (const std::uint32_t stream : {0u, 7u, max}) {
    for (const std::uint32_t node : {0u, 12345u, max}) {
      const CustomNodeRef back = CustomNodeRef::unpack(CustomNodeRef{stream, node}.pack());
      EXPECT_EQ(back.stream, stream);
      EXPECT_EQ(back.node, node);
    }
  }
}

TEST(Tags, SpacesNeverShareAValue) {
  namespace tags = system::tags;
  // The largest point-to-point tag stays below the collective bit; a negative comm_tag too.
  EXPECT_EQ(tags::p2p(-1) & tags::kCollective, 0u);
  EXPECT_EQ(tags::p2p(std::numeric_limits<std::int64_t>::max()) & (tags::kCollective | tags::kGoAhead), 0u);
  EXPECT_NE(tags::world_stream(0) & tags::kCollective, 0u);
  // Group streams: the group id and the counter keep their fields.
  const std::uint64_t g = tags::group_stream(0x1fffffff, 0xffffffff);
  EXPECT_EQ((g & tags::kMask) >> 32, 0x1fffffffu);
  EXPECT_EQ(g & 0xffffffffu, 0xffffffffu);
  EXPECT_EQ(g & tags::kGoAhead, 0u);
  // Custom channels sit in bits 40-55, apart from a world stream's counter below 2^40.
  const std::uint64_t c = tags::custom_channel(tags::world_stream((1ull << 40) - 1), 0xffff);
  EXPECT_EQ((c >> 40) & 0xffff, 0xffffu);
  EXPECT_EQ(c & ((1ull << 40) - 1), (1ull << 40) - 1);
  EXPECT_NE(tags::custom_channel(tags::world_stream(3), 1), tags::custom_channel(tags::world_stream(3), 2));
  EXPECT_EQ(system::npu_group_key(0xffffffffu, 5) >> 32, 0xffffffffu);
  EXPECT_EQ(system::npu_group_key(0xffffffffu, 5) & 0xffffffffu, 5u);
}

}  // namespace
}  // namespace chakrasim::test
