// Tests of Topology: strides, rank <-> coordinates (dimension 0 fastest), the lowest differing
// dimension, hops per dimension kind, the NPU count and the GB/s -> bytes/ns conversion.
#include "network/topology.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace chakrasim::network {
namespace {

using DK = DimensionKind;

// The reference's 3-D example (docs/astra-sim-model.md §1.2): [Ring 2, FullyConnected 8, Switch 4].
Topology three_d() {
  return Topology(
      TopologySpec{{{DK::kRing, 2, 200, 50}, {DK::kFullyConnected, 8, 100, 500}, {DK::kSwitch, 4, 50, 2000}}});
}

TEST(Topology, StridesAndNpuCount) {
  // [2, 8, 4]: strides 1, 2, 2*8 = 16; 2*8*4 = 64 NPUs.
  const Topology t = three_d();
  EXPECT_EQ(t.dims(), 3u);
  EXPECT_EQ(t.npu_count(), 64u);
  EXPECT_EQ(t.stride(0), 1u);
  EXPECT_EQ(t.stride(1), 2u);
  EXPECT_EQ(t.stride(2), 16u);
  EXPECT_EQ(t.npus_in(0), 2u);
  EXPECT_EQ(t.npus_in(1), 8u);
  EXPECT_EQ(t.npus_in(2), 4u);
}

TEST(Topology, CoordinatesVaryDimensionZeroFastest) {
  // rank 37 = c0 + 2*(c1 + 8*c2) with c = (1, 2, 2): 1 + 2*(2 + 16) = 37.
  // rank 18 = 0 + 2*(1 + 8*1): c = (0, 1, 1). rank 63: c = (1, 7, 3).
  const Topology t = three_d();
  EXPECT_EQ(t.coordinate(37, 0), 1u);
  EXPECT_EQ(t.coordinate(37, 1), 2u);
  EXPECT_EQ(t.coordinate(37, 2), 2u);
  EXPECT_EQ(t.coordinate(18, 0), 0u);
  EXPECT_EQ(t.coordinate(18, 1), 1u);
  EXPECT_EQ(t.coordinate(18, 2), 1u);
  EXPECT_EQ(t.coordinate(63, 0), 1u);
  EXPECT_EQ(t.coordinate(63, 1), 7u);
  EXPECT_EQ(t.coordinate(63, 2), 3u);
  // Every rank round-trips through its coordinates.
  for (NpuId r = 0; r < t.npu_count(); ++r) {
    EXPECT_EQ(t.coordinate(r, 0) + 2 * (t.coordinate(r, 1) + 8 * t.coordinate(r, 2)), r);
  }
}

TEST(Topology, LowestDifferingDimension) {
  // 0 = (0,0,0); 1 = (1,0,0) -> dim 0; 18 = (0,1,1) -> dim 1 (dim 2 differs too);
  // 2 = (0,1,0) vs 34 = (0,1,2) -> dim 2; 37 = (1,2,2) vs 36 = (0,2,2) -> dim 0.
  const Topology t = three_d();
  EXPECT_EQ(t.lowest_differing_dim(0, 1), 0u);
  EXPECT_EQ(t.lowest_differing_dim(0, 18), 1u);
  EXPECT_EQ(t.lowest_differing_dim(18, 0), 1u);
  EXPECT_EQ(t.lowest_differing_dim(2, 34), 2u);
  EXPECT_EQ(t.lowest_differing_dim(37, 36), 0u);
  EXPECT_EQ(t.lowest_differing_dim(0, 16), 2u);
}

TEST(Topology, RingHopsTakeTheShorterWayRound) {
  // Ring of 8: 0->3 is 3 forward, 0->5 is 3 backward, 0->7 is 1 backward, 0->4 is 4 either
  // way, 6->1 is 3 (6,7,0,1), 2->2 is 0.
  const Topology t(TopologySpec{{{DK::kRing, 8, 50, 500}}});
  EXPECT_EQ(t.hops(0, 0, 1), 1u);
  EXPECT_EQ(t.hops(0, 0, 3), 3u);
  EXPECT_EQ(t.hops(0, 0, 5), 3u);
  EXPECT_EQ(t.hops(0, 0, 7), 1u);
  EXPECT_EQ(t.hops(0, 7, 0), 1u);
  EXPECT_EQ(t.hops(0, 0, 4), 4u);
  EXPECT_EQ(t.hops(0, 6, 1), 3u);
  EXPECT_EQ(t.hops(0, 1, 6), 3u);
  EXPECT_EQ(t.hops(0, 2, 2), 0u);
}

TEST(Topology, FullyConnectedIsOneHopAndSwitchIsTwo) {
  // FullyConnected 8: any pair is 1 hop; Switch 4: any pair is 2 hops (up and down).
  const Topology t = three_d();
  EXPECT_EQ(t.hops(1, 0, 1), 1u);
  EXPECT_EQ(t.hops(1, 0, 7), 1u);
  EXPECT_EQ(t.hops(1, 5, 2), 1u);
  EXPECT_EQ(t.hops(2, 0, 1), 2u);
  EXPECT_EQ(t.hops(2, 0, 3), 2u);
  EXPECT_EQ(t.hops(2, 3, 1), 2u);
  // Dimension 0 is a Ring of 2: its only neighbour is 1 hop away.
  EXPECT_EQ(t.hops(0, 0, 1), 1u);
}

TEST(Topology, BytesPerNsUsesBinaryGigabytes) {
  // 50 GB/s with GB = 2^30 B: 50 * 1073741824 / 1e9 = 53.6870912 B/ns, computed in that order.
  EXPECT_EQ(bytes_per_ns(50), 50.0 * 1073741824.0 / 1e9);
  EXPECT_DOUBLE_EQ(bytes_per_ns(50), 53.6870912);
  EXPECT_DOUBLE_EQ(bytes_per_ns(100), 107.3741824);
  EXPECT_DOUBLE_EQ(bytes_per_ns(1), 1.073741824);
}

TEST(Topology, SpecIsKeptAndKindsHaveNames) {
  // The spec passes through unchanged; kinds print as the YAML spells them.
  const Topology t = three_d();
  EXPECT_EQ(t.spec().dims[1].kind, DK::kFullyConnected);
  EXPECT_EQ(t.spec().dims[2].latency_ns, 2000.0);
  EXPECT_EQ(t.spec().dims[0].bandwidth_gib_per_s, 200.0);
  EXPECT_STREQ(dimension_kind_name(DK::kRing), "Ring");
  EXPECT_STREQ(dimension_kind_name(DK::kFullyConnected), "FullyConnected");
  EXPECT_STREQ(dimension_kind_name(DK::kSwitch), "Switch");
}

TEST(Topology, MoreThanTwoToTheThirtyTwoNpusIsAnError) {
  // 65536 * 65536 = 2^32 NPUs does not fit an NpuId: Error. 65536 * 65535 fits.
  EXPECT_THROW(Topology(TopologySpec{{{DK::kRing, 65536, 50, 500}, {DK::kRing, 65536, 50, 500}}}), Error);
  const Topology fits(TopologySpec{{{DK::kRing, 65536, 50, 500}, {DK::kRing, 65535, 50, 500}}});
  EXPECT_EQ(fits.npu_count(), 65536u * 65535u);
}

}  // namespace
}  // namespace chakrasim::network
