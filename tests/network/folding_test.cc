// network/folding.h: classes, representatives and the relabelling of messages.
#include "network/folding.h"

#include <gtest/gtest.h>

namespace chakrasim::network {
namespace {

using DK = DimensionKind;
using Move = Folding::Move;
using Kind = Folding::MoveKind;

TEST(Folding, WholeIsOneClassOfNpu0) {
  const Topology t(TopologySpec{{{DK::kRing, 4, 50, 500}, {DK::kSwitch, 3, 50, 500}}});
  const Folding f = Folding::whole(t);
  EXPECT_EQ(f.class_count(), 1u);
  EXPECT_EQ(f.representative(0), 0u);
  // The mirror image: NPU 0 sends to 7 = (3, 1); 7's move onto 0 takes 0 to (-3, -1) = (1, 2) = 9.
  EXPECT_EQ(f.seen_from_representative(7, 0), 9u);
  EXPECT_EQ(f.move_of(7), 7u);
}

TEST(Folding, RotationsAndFlipsMakeClasses) {
  // [Switch 8, Ring 6]: flip bit 1 (x ^ 2) in dimension 0, rotate by 3 in dimension 1.
  // Representative coordinates: x & ~2 (0, 1, 4, 5) and y mod 3 (0, 1, 2): 12 classes.
  const Topology t(TopologySpec{{{DK::kSwitch, 8, 50, 500}, {DK::kRing, 6, 50, 500}}});
  const Folding f(t, {Move{Kind::kFlip, 0, 2}, Move{Kind::kRotate, 3, 0}});
  EXPECT_EQ(f.class_count(), 12u);
  // NPU (7, 4) = 39: representative (5, 1) = 13.
  EXPECT_EQ(f.representative(f.class_of(39)), 13u);
  EXPECT_EQ(f.move_of(39), 26u);  // (2, 3)
  // Under 39's move (x ^ 2, y - 3), NPU (6, 5) = 46 becomes (4, 2) = 20.
  EXPECT_EQ(f.seen_from_representative(39, 46), 20u);
  // Representatives are their own and ascending.
  for (std::uint32_t c = 0; c < f.class_count(); ++c) {
    EXPECT_EQ(f.class_of(f.representative(c)), c);
    if (c > 0) {
      EXPECT_LT(f.representative(c - 1), f.representative(c));
    }
  }
  // One generator: 13 with dimension 0 flipped by 2 is 15; rotated by 3 in dimension 1, (5, 4) = 37.
  EXPECT_EQ(Folding::moved(t, 0, Move{Kind::kFlip, 0, 2}, 13), 15u);
  EXPECT_EQ(Folding::moved(t, 1, Move{Kind::kRotate, 3, 0}, 13), 37u);
}

TEST(Folding, NoMoveKeepsEveryNpu) {
  const Topology t(TopologySpec{{{DK::kRing, 5, 50, 500}}});
  const Folding f(t, {Move{Kind::kRotate, 5, 0}});
  EXPECT_EQ(f.class_count(), 5u);
  EXPECT_EQ(f.seen_from_representative(3, 1), 1u);
}

}  // namespace
}  // namespace chakrasim::network
