// The process groups of a METADATA node's inputs.values (chakra/process_groups.h), which the
// simulator registers and the synthesizer learns.
#include "chakra/process_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace chakrasim::test {
namespace {

using ::testing::ElementsAre;

TEST(ProcessGroups, ThePythonReprAroundAJsonList) {
  const auto groups = chakra::describe_process_groups(
      R"(['[{"pg_name": "1", "ranks": [0, 1]}, {"pg_name": 2, "ranks": [3, -1, "x"]}, {"pg_name": "3"}, {"ranks": [4]}]'])");
  ASSERT_EQ(groups.size(), 3u);  // the entry without a pg_name is none
  EXPECT_EQ(groups[0].name, "1");
  EXPECT_TRUE(groups[0].has_ranks);
  EXPECT_THAT(groups[0].ranks, ElementsAre(0u, 1u));
  EXPECT_TRUE(groups[0].ranks_whole);
  EXPECT_EQ(groups[1].name, "2");  // a number: its JSON text
  EXPECT_THAT(groups[1].ranks, ElementsAre(3u));
  EXPECT_FALSE(groups[1].ranks_whole);
  EXPECT_FALSE(groups[2].has_ranks);
  EXPECT_TRUE(groups[2].ranks.empty());
}

TEST(ProcessGroups, TextThatDoesNotParseDescribesNothing) {
  EXPECT_TRUE(chakra::describe_process_groups("").empty());
  EXPECT_TRUE(chakra::describe_process_groups("['[']").empty());
  EXPECT_TRUE(chakra::describe_process_groups(R"(['{"pg_name": "1"}'])").empty());  // not a list
  EXPECT_TRUE(chakra::describe_process_groups("['" + std::string(100000, '[') + "']").empty());
}

}  // namespace
}  // namespace chakrasim::test
