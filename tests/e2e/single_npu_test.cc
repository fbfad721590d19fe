// A network may have dimensions of one NPU, down to a single-GPU baseline: such a dimension gets
// no collective phase (docs/astra-sim-model.md §4), so it changes no figure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/trace_builder.h"
#include "network/network.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;

// On one NPU a collective has nobody to talk to: it takes no time on any backend, and the
// compute before it keeps its duration.
TEST(SingleNpu, CollectivesTakeNoTimeAndComputeKeepsItsOwn) {
  for (const network::BackendInfo& backend : network::backends()) {
    if (backend.own_engine) continue;  // test-only engines have their own tests
    for (const auto kind : {DimensionKind::kRing, DimensionKind::kSwitch, DimensionKind::kFullyConnected}) {
      chakra::TraceBuilder b;
      const std::uint64_t compute = b.comp("gemm", 5).id();
      b.collective("ar", chakra::CommType::kAllReduce, kMiB, {compute});
      b.collective("ag", chakra::CommType::kAllGather, kMiB, {compute});
      b.collective("a2a", chakra::CommType::kAllToAll, kMiB, {compute});
      sim::Inputs in;
      in.backend = backend.name;
      in.network = network_of({{kind, 1, 50, 500}});
      in.system = system_of("ring", 1, 4, 1);
      in.graphs = same_trace(b.trace(), 1);
      const sim::Result r = run(in);
      expect_all_finish(r, 5000, 1);
    }
  }
}

// The tutorial all-reduce (117780 ns on a ring of 8, §9.4) with a one-NPU dimension before or
// after the ring: the same figure on both backends.
TEST(SingleNpu, AOneNpuDimensionChangesNoFigure) {
  for (const char* backend : {"congestion-unaware", "congestion-aware"}) {
    const network::DimensionSpec ring{DimensionKind::kRing, 8, 50, 500};
    const network::DimensionSpec single{DimensionKind::kSwitch, 1, 50, 500};
    for (const network::TopologySpec& net :
         {network_of({ring}), network_of({single, ring}), network_of({ring, single})}) {
      const sim::Inputs in =
          one_collective(net, system_of("ring", net.dims.size(), 4, 1), chakra::CommType::kAllReduce, kMiB, backend);
      expect_all_finish(run(in), 117780, 8);
    }
  }
}

}  // namespace
}  // namespace chakrasim::test
