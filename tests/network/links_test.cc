// Tests of LinkTable (network/links.h): how many links each dimension kind has, their ids and
// names, and the route of a message as a list of links, for full and folded tables.
#include "network/links.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace chakrasim::network {
namespace {

using DK = DimensionKind;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(LinkTable, CountsPerDimensionKind) {
  // Ring 8: 2 links per NPU = 16. FullyConnected 6: 5 per NPU = 30. Switch 4: up + down per
  // NPU = 8. Folded, NPU 0's alone: 2, 5 and 2.
  for (const auto& [kind, npus, full, folded] :
       {std::tuple{DK::kRing, 8u, 16u, 2u}, {DK::kFullyConnected, 6u, 30u, 5u}, {DK::kSwitch, 4u, 8u, 2u}}) {
    const Topology t(TopologySpec{{{kind, npus, 50, 500}}});
    EXPECT_EQ(LinkTable(t, nullptr).size(), full) << dimension_kind_name(kind);
    const Folding whole = Folding::whole(t);
    EXPECT_EQ(LinkTable(t, &whole).size(), folded) << dimension_kind_name(kind);
  }
}

TEST(LinkTable, DimensionsAreNumberedInOrder) {
  // [Ring 2, FullyConnected 4, Switch 2] = 16 NPUs: dimension 0 has ids 0..31 (2 per NPU),
  // dimension 1 ids 32..79 (3 per NPU), dimension 2 ids 80..111 (2 per NPU).
  const Topology t(
      TopologySpec{{{DK::kRing, 2, 200, 50}, {DK::kFullyConnected, 4, 100, 500}, {DK::kSwitch, 2, 25, 2000}}});
  const LinkTable links(t, nullptr);
  EXPECT_EQ(links.size(), 112u);
  EXPECT_EQ(links.dim_of(0), 0u);
  EXPECT_EQ(links.dim_of(31), 0u);
  EXPECT_EQ(links.dim_of(32), 1u);
  EXPECT_EQ(links.dim_of(79), 1u);
  EXPECT_EQ(links.dim_of(80), 2u);
  EXPECT_EQ(links.dim_of(111), 2u);
  // A link has its dimension's bandwidth and latency.
  EXPECT_EQ(links.spec_of(40).bandwidth_gib_per_s, 100.0);
  EXPECT_EQ(links.spec_of(100).latency_ns, 2000.0);
}

TEST(LinkTable, RingRoutesGoTheShorterWayClockwiseOnATie) {
  // Ring 8: NPU n's link to n+1 is 2n, to n-1 is 2n+1.
  //   0 -> 3: forward 3 < back 5, clockwise over 0->1, 1->2, 2->3 = links 0, 2, 4
  //   0 -> 6: forward 6 > back 2, anticlockwise over 0->7, 7->6    = links 1, 15
  //   0 -> 4: a tie (4 and 4), clockwise                         = links 0, 2, 4, 6
  //   7 -> 0: one step clockwise, wrapping                         = link 14
  const Topology t(TopologySpec{{{DK::kRing, 8, 50, 500}}});
  const LinkTable links(t, nullptr);
  EXPECT_THAT(links.route(0, 3), ElementsAre(0u, 2u, 4u));
  EXPECT_THAT(links.route(0, 6), ElementsAre(1u, 15u));
  EXPECT_THAT(links.route(0, 4), ElementsAre(0u, 2u, 4u, 6u));
  EXPECT_THAT(links.route(7, 0), ElementsAre(14u));
  EXPECT_EQ(links.name(0), "NPU 0 -> NPU 1 (ring, dim 0)");
  EXPECT_EQ(links.name(15), "NPU 7 -> NPU 6 (ring, dim 0)");
}

TEST(LinkTable, FullyConnectedHasALinkPerOrderedPair) {
  // FullyConnected 4: NPU n's link to n+1+k (mod 4) is 3n + k.
  //   0 -> 1: k = 0 -> 0;  0 -> 3: k = 2 -> 2;  3 -> 0: k = 0 -> 9;  2 -> 1: k = 2 -> 8
  const Topology t(TopologySpec{{{DK::kFullyConnected, 4, 50, 500}}});
  const LinkTable links(t, nullptr);
  EXPECT_THAT(links.route(0, 1), ElementsAre(0u));
  EXPECT_THAT(links.route(0, 3), ElementsAre(2u));
  EXPECT_THAT(links.route(3, 0), ElementsAre(9u));
  EXPECT_THAT(links.route(2, 1), ElementsAre(8u));
  EXPECT_EQ(links.name(8), "NPU 2 -> NPU 1 (fully connected, dim 0)");
}

TEST(LinkTable, SwitchRoutesGoUpThenDown) {
  // Switch 4: NPU n's up-link is 2n, its down-link 2n+1. 1 -> 3: up 2, down 7.
  const Topology t(TopologySpec{{{DK::kSwitch, 4, 50, 500}}});
  const LinkTable links(t, nullptr);
  EXPECT_THAT(links.route(1, 3), ElementsAre(2u, 7u));
  EXPECT_EQ(links.name(2), "NPU 1 up-link (switch, dim 0)");
  EXPECT_EQ(links.name(7), "NPU 3 down-link (switch, dim 0)");
  // Step by step, the cursor sits in the switch between the two links.
  LinkTable::Cursor c{1, false};
  EXPECT_EQ(links.next(c, 3), 2u);
  EXPECT_TRUE(c.in_switch);
  EXPECT_FALSE(LinkTable::arrived(c, 3));
  EXPECT_EQ(links.next(c, 3), 7u);
  EXPECT_EQ(c.at, 3u);
  EXPECT_TRUE(LinkTable::arrived(c, 3));
}

TEST(LinkTable, SeveralDimensionsRouteLowestFirst) {
  // [Ring 4, Switch 2], 8 NPUs (docs/network.md's example): dimension 0 has ids 0..15, dimension
  // 1 starts at 16. NPU 1 = (1, 0) to NPU 6 = (2, 1) takes the ring link 1 -> 2 (id 2), then
  // NPU 2's up-link (16 + 2*2 = 20) and NPU 6's down-link (16 + 2*6 + 1 = 29).
  const Topology t(TopologySpec{{{DK::kRing, 4, 50, 500}, {DK::kSwitch, 2, 50, 500}}});
  const LinkTable links(t, nullptr);
  EXPECT_THAT(links.route(1, 6), ElementsAre(2u, 20u, 29u));
  EXPECT_EQ(links.name(20), "NPU 2 up-link (switch, dim 1)");
  // Within one dimension only: 1 -> 5 = (1, 1) crosses dimension 1 alone: up 16 + 2, down
  // 16 + 2*5 + 1.
  EXPECT_THAT(links.route(1, 5), ElementsAre(18u, 27u));
  EXPECT_THAT(links.route(3, 3), IsEmpty());
}

TEST(LinkTable, FoldedTablesMapEveryNpusLinksOntoNpu0s) {
  // Folded Ring 8: every NPU's +1 link is id 0 and its -1 link id 1, so 5 -> 7 is 0, 0 and
  // 5 -> 3 is 1, 1. Folded FullyConnected 4: links by offset, so 2 -> 1 (offset 3) is id 2.
  // Folded Switch 4: up 0, down 1.
  const Topology ring(TopologySpec{{{DK::kRing, 8, 50, 500}}});
  const Folding ring_whole = Folding::whole(ring);
  const LinkTable ring_links(ring, &ring_whole);
  EXPECT_TRUE(ring_links.folded());
  EXPECT_THAT(ring_links.route(5, 7), ElementsAre(0u, 0u));
  EXPECT_THAT(ring_links.route(5, 3), ElementsAre(1u, 1u));
  EXPECT_EQ(ring_links.name(0), "every NPU's ring link +1 (dim 0)");
  const Topology fc(TopologySpec{{{DK::kFullyConnected, 4, 50, 500}}});
  const Folding fc_whole = Folding::whole(fc);
  EXPECT_THAT(LinkTable(fc, &fc_whole).route(2, 1), ElementsAre(2u));
  EXPECT_EQ(LinkTable(fc, &fc_whole).name(2), "every NPU's link to offset +3 (fully connected, dim 0)");
  const Topology sw(TopologySpec{{{DK::kSwitch, 4, 50, 500}}});
  const Folding sw_whole = Folding::whole(sw);
  EXPECT_THAT(LinkTable(sw, &sw_whole).route(1, 3), ElementsAre(0u, 1u));
  EXPECT_EQ(LinkTable(sw, &sw_whole).name(1), "every NPU's down-link (switch, dim 0)");
}

TEST(LinkTable, ClassFoldedTablesKeepEachRepresentativesLinks) {
  // Ring 8 rotated by multiples of 4: classes {0,4} {1,5} {2,6} {3,7}, 2 links each = 8. NPU 5's
  // +1 link is its class's (class 1): id 2; 5 -> 7 crosses 5's and 6's +1 links: ids 2 and 4.
  const Topology ring(TopologySpec{{{DK::kRing, 8, 50, 500}}});
  const Folding by_four(ring, {{Folding::MoveKind::kRotate, 4, 0}});
  const LinkTable links(ring, &by_four);
  EXPECT_EQ(links.size(), 8u);
  EXPECT_THAT(links.route(5, 7), ElementsAre(2u, 4u));
  EXPECT_EQ(links.name(2), "NPU 1's class's ring link +1 (dim 0)");
  // Switch 8 with bit 1 flipped: classes {0,2} {1,3} {4,6} {5,7}; 6 -> 1 goes up 6's (class 2's
  // link 4) and down 1's (class 1's down-link, id 3).
  const Topology sw(TopologySpec{{{DK::kSwitch, 8, 50, 500}}});
  const Folding flip(sw, {{Folding::MoveKind::kFlip, 0, 2}});
  EXPECT_THAT(LinkTable(sw, &flip).route(6, 1), ElementsAre(4u, 3u));
}

}  // namespace
}  // namespace chakrasim::network
