// Tests of the key suggestions (config/nearest_key.h): edit distances worked by hand, and which
// unknown keys get a suggestion.
#include "config/nearest_key.h"

#include <gtest/gtest.h>

namespace chakrasim::config {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);                // three insertions
  EXPECT_EQ(edit_distance("bandwith", "bandwidth"), 1u);  // one insertion
  EXPECT_EQ(edit_distance("latancy", "latency"), 1u);     // one substitution
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);      // k->s, e->i, +g
  EXPECT_EQ(edit_distance("npus_count", "npus-count"), 1u);
  EXPECT_EQ(edit_distance("abc", "cba"), 2u);  // a->c, c->a
}

TEST(NearestKey, SuggestsOnlyLikelyTypos) {
  const std::vector<std::string> keys = {"topology", "npus_count", "bandwidth", "latency"};
  EXPECT_EQ(nearest_key("bandwith", keys), "bandwidth");
  EXPECT_EQ(nearest_key("BANDWIDTH", keys), "bandwidth");     // case is ignored
  EXPECT_EQ(nearest_key("topology-name", keys), "topology");  // 5 edits, within half of 13
  EXPECT_EQ(nearest_key("nested", keys), std::nullopt);       // 5+ edits from all, over max(2, 3)
  EXPECT_EQ(nearest_key("xy", keys), std::nullopt);
  EXPECT_EQ(nearest_key("anything", {}), std::nullopt);
}

}  // namespace
}  // namespace chakrasim::config
