// Symmetric runs (sim/symmetry.h) simulate NPU 0 alone and must give exactly the figures of the
// full run, for every NPU; runs that are not symmetric must not take that path.
#include <algorithm>

#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "network/network.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;

void expect_same_as_full_run(sim::Inputs in) {
  const sim::Result fast = run(in);
  EXPECT_TRUE(fast.symmetric);
  in.allow_symmetry = false;
  const sim::Result full = run(in);
  EXPECT_FALSE(full.symmetric);
  ASSERT_EQ(fast.npus.size(), full.npus.size());
  for (std::size_t r = 0; r < full.npus.size(); ++r) {
    EXPECT_EQ(fast.npus[r].finish_ns, full.npus[r].finish_ns) << "NPU " << r;
    EXPECT_EQ(fast.npus[r].exposed_comm_ns, full.npus[r].exposed_comm_ns) << "NPU " << r;
    EXPECT_EQ(fast.npus[r].gpu_compute_ns, full.npus[r].gpu_compute_ns) << "NPU " << r;
  }
  EXPECT_LT(fast.events * 4, full.events);  // and it is much cheaper
}

// Compute, every native collective, baseline and localBWAware, ring and direct, on 1-D and 3-D
// networks of every dimension kind, with several chunks in flight and rendezvous.
chakra::Trace mixed_trace() {
  chakra::TraceBuilder b;
  b.comp("fwd", 3);                                                     // 0
  b.collective("ar", chakra::CommType::kAllReduce, kMiB, {0});          // 1
  b.comp("bwd", 5, {0});                                                // 2
  b.collective("ag", chakra::CommType::kAllGather, 64 * 1024, {1, 2});  // 3
  b.collective("rs", chakra::CommType::kReduceScatter, 3 * kMiB, {3});  // 4
  b.collective("a2a", chakra::CommType::kAllToAll, 512 * 1024, {4});    // 5
  b.comp("opt", 2, {5});                                                // 6
  return b.trace();
}

class Symmetry : public ::testing::TestWithParam<const char*> {};

TEST_P(Symmetry, MatchesTheFullRun) {
  const auto three_d = network_of({{DimensionKind::kRing, 2, 200, 50},
                                   {DimensionKind::kFullyConnected, 4, 100, 500},
                                   {DimensionKind::kSwitch, 4, 50, 2000}});
  for (const char* algorithm : {"ring", "direct"}) {
    for (bool baseline : {false, true}) {
      for (std::uint32_t active : {1u, 4u}) {
        SCOPED_TRACE(std::string(algorithm) + (baseline ? " baseline" : " localBWAware") + " active " +
                     std::to_string(active));
        sim::Inputs in;
        in.backend = GetParam();
        in.network = three_d;
        in.system = system_of(algorithm, 3, 4, active, baseline);
        in.graphs = same_trace(mixed_trace(), 32);
        expect_same_as_full_run(in);
        in.network = network_of({{DimensionKind::kRing, 16, 50, 500}});
        in.system = system_of(algorithm, 1, 4, active, baseline);
        in.graphs = same_trace(mixed_trace(), 16);
        in.system.rendezvous = active == 4;
        expect_same_as_full_run(in);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Symmetry, ::testing::Values("congestion-unaware", "congestion-aware"),
                         [](const auto& backend) {
                           return std::string(backend.param[11] == 'u' ? "Unaware" : "Aware");
                         });

// Congestion-aware links shared by many messages at once: direct algorithms on a switch (every
// down-link takes a message from every peer), multi-hop rings, zero latency (hop arrivals tie
// with link releases), uneven chunks, and two dimensions of the same kind.
TEST(Symmetry, CongestionAwareContentionMatchesTheFullRun) {
  const std::vector<std::pair<const char*, network::TopologySpec>> networks = {
      {"switch 8 latency 0", network_of({{DimensionKind::kSwitch, 8, 50, 0}})},
      {"ring 8 latency 0", network_of({{DimensionKind::kRing, 8, 100, 0}})},
      {"ring 7", network_of({{DimensionKind::kRing, 7, 100, 300}})},
      {"fully connected 6", network_of({{DimensionKind::kFullyConnected, 6, 25, 0}})},
      {"ring 4 x ring 3", network_of({{DimensionKind::kRing, 4, 100, 0}, {DimensionKind::kRing, 3, 30, 700}})},
      {"switch 4 x switch 4", network_of({{DimensionKind::kSwitch, 4, 100, 10}, {DimensionKind::kSwitch, 4, 100, 10}})},
  };
  for (const auto& [name, net] : networks) {
    for (const char* algorithm : {"ring", "direct"}) {
      for (std::uint64_t splits : {1u, 3u}) {
        SCOPED_TRACE(std::string(name) + " " + algorithm + " splits " + std::to_string(splits));
        sim::Inputs in;
        in.backend = "congestion-aware";
        in.network = net;
        in.system = system_of(algorithm, net.dims.size(), splits, 2);
        in.graphs = same_trace(mixed_trace(), network::Topology(net).npu_count());
        expect_same_as_full_run(in);
      }
    }
  }
}

TEST(Symmetry, OnlyWhereItHolds) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(mixed_trace(), 8);
  EXPECT_TRUE(run(in).symmetric);
  in.system = system_of("halvingDoubling", 1, 1, 1);  // roles differ between NPUs
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, kMiB), 8);
  EXPECT_FALSE(run(in).symmetric);
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(mixed_trace(), 8);
  in.graphs[3] = std::make_shared<const chakra::Graph>(chakra::Graph::build(mixed_trace(), "copy"));
  EXPECT_FALSE(run(in).symmetric);  // not one shared trace
}

TEST(Symmetry, FollowsTheBackendsShiftInvariantFlag) {
  // The congestion-unaware row, registered again under another name with shift_invariant off:
  // the same symmetric-looking run is then simulated in full, with the same figures. Nothing but
  // the flag decides (no backend name is compared anywhere).
  if (std::none_of(network::backends().begin(), network::backends().end(),
                   [](const network::BackendInfo& b) { return std::string(b.name) == "test-unaware-unfolded"; })) {
    network::BackendInfo row = network::find_backend("congestion-unaware");
    row.name = "test-unaware-unfolded";
    row.shift_invariant = false;
    network::register_backend(row);
  }
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 2, 1);
  in.graphs = same_trace(mixed_trace(), 8);
  const sim::Result folded = run(in);
  EXPECT_TRUE(folded.symmetric);
  in.backend = "test-unaware-unfolded";
  const sim::Result unfolded = run(in);
  EXPECT_FALSE(unfolded.symmetric);
  ASSERT_EQ(unfolded.npus.size(), folded.npus.size());
  for (std::size_t r = 0; r < folded.npus.size(); ++r) {
    EXPECT_EQ(unfolded.npus[r].finish_ns, folded.npus[r].finish_ns) << "NPU " << r;
  }
}

}  // namespace
}  // namespace chakrasim::test
