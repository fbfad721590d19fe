// Symmetric runs (sim/symmetry.h) simulate NPU 0 alone and must give exactly the figures of the
// full run, for every NPU; runs that are not symmetric must not take that path.
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
constexpr std::uint64_t kMiB = 1 << 20;

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
  b.comp("fwd", 3);                                                       // 0
  b.collective("ar", chakra::CommType::kAllReduce, kMiB, {0});            // 1
  b.comp("bwd", 5, {0});                                                  // 2
  b.collective("ag", chakra::CommType::kAllGather, 64 * 1024, {1, 2});    // 3
  b.collective("rs", chakra::CommType::kReduceScatter, 3 * kMiB, {3});    // 4
  b.collective("a2a", chakra::CommType::kAllToAll, 512 * 1024, {4});      // 5
  b.comp("opt", 2, {5});                                                  // 6
  return b.trace();
}

TEST(Symmetry, MatchesTheFullRun) {
  const auto three_d = network_of({{DimensionKind::kRing, 2, 200, 50},
                                   {DimensionKind::kFullyConnected, 4, 100, 500},
                                   {DimensionKind::kSwitch, 4, 50, 2000}});
  for (const char* algorithm : {"ring", "direct"}) {
    for (bool baseline : {false, true}) {
      for (std::uint32_t active : {1u, 4u}) {
        SCOPED_TRACE(std::string(algorithm) + (baseline ? " baseline" : " localBWAware") + " active " +
                     std::to_string(active));
        sim::Inputs in;
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

TEST(Symmetry, OnlyWhereItHolds) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(mixed_trace(), 8);
  EXPECT_TRUE(run(in).symmetric);
  in.backend = "congestion-aware";  // shared links: order matters across NPUs
  EXPECT_FALSE(run(in).symmetric);
  in.backend = "congestion-unaware";
  in.system = system_of("halvingDoubling", 1, 1, 1);  // roles differ between NPUs
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, kMiB), 8);
  EXPECT_FALSE(run(in).symmetric);
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(mixed_trace(), 8);
  in.graphs[3] = std::make_shared<const chakra::Graph>(chakra::Graph::build(mixed_trace(), "copy"));
  EXPECT_FALSE(run(in).symmetric);  // not one shared trace
}

}  // namespace
}  // namespace chakrasim::test
