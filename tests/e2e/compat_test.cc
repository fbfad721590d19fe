// ASTRA-sim compatibility: every congestion-unaware figure of docs/astra-sim-model.md §9 that
// uses only the ring algorithms, reproduced exactly with inputs built in code.
#include <gtest/gtest.h>

#include "config/system_config.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;

// The tutorial demo: 1 MiB all-reduce, Ring8 50 GB/s 500 ns, splits 4, one chunk active.
// Chunk c = 262144, step c/8 = 32768 B: T = floor(500 + 32768/53.687) = 1110,
// P = 3 floor(32768/50) = 1965; one chunk 14(10+1110) + 7*1965 + 10 = 29445; 4 chunks in turn.
TEST(Compat, TutorialDemo) {
  auto in = one_collective(network_of({{DimensionKind::kRing, 8, 50, 500}}), system_of("ring", 1, 4, 1),
                           chakra::CommType::kAllReduce, kMiB);
  expect_all_finish(run(in), 117780, 8);
}

struct MatrixCase {
  const char* name;
  DimensionKind topology;
  std::uint64_t splits;
  std::uint32_t active;
  Tick expected;
};

void PrintTo(const MatrixCase& c, std::ostream* os) { *os << c.name; }

class Ar8Matrix : public ::testing::TestWithParam<MatrixCase> {};

// The ring rows of the AR8 matrix, congestion-unaware column: 1 MiB all-reduce on 8 NPUs,
// 50 GB/s, 500 ns. Switch hops are 2, so each step costs 500 ns more than on a ring or FC.
TEST_P(Ar8Matrix, RingRows) {
  const MatrixCase& c = GetParam();
  auto in = one_collective(network_of({{c.topology, 8, 50, 500}}), system_of("ring", 1, c.splits, c.active),
                           chakra::CommType::kAllReduce, kMiB);
  expect_all_finish(run(in), c.expected, 8);
}

INSTANTIATE_TEST_SUITE_P(Compat, Ar8Matrix,
                         ::testing::Values(MatrixCase{"Ring8_s1a1", DimensionKind::kRing, 1, 1, 96365},
                                           MatrixCase{"Switch8_s1a1", DimensionKind::kSwitch, 1, 1, 103365},
                                           MatrixCase{"FC8_s1a1", DimensionKind::kFullyConnected, 1, 1, 96365},
                                           MatrixCase{"Ring8_s4a1", DimensionKind::kRing, 4, 1, 117780},
                                           MatrixCase{"Switch8_s4a1", DimensionKind::kSwitch, 4, 1, 145780},
                                           MatrixCase{"FC8_s4a1", DimensionKind::kFullyConnected, 4, 1, 117780},
                                           MatrixCase{"Ring8_s4a4", DimensionKind::kRing, 4, 4, 29445},
                                           MatrixCase{"Switch8_s4a4", DimensionKind::kSwitch, 4, 4, 36445},
                                           MatrixCase{"FC8_s4a4", DimensionKind::kFullyConnected, 4, 4, 29445}),
                         [](const auto& p) { return std::string(p.param.name); });

// "Other collectives", 8 NPUs, splits 1, ring, Ring8:
//   AG: 7(10 + T(1 MiB)) + 10, T = floor(500 + 1048576/53.687) = 20031 -> 140297
//   RS: 7(10 + 2941) + 7*7863 + 10 = 75708
//   A2A: 28(10 + 2941) + 10 = 82638
TEST(Compat, OtherCollectivesRing8) {
  const auto net = network_of({{DimensionKind::kRing, 8, 50, 500}});
  expect_all_finish(run(one_collective(net, system_of("ring", 1, 1, 1), chakra::CommType::kAllGather, kMiB)), 140297,
                    8);
  expect_all_finish(run(one_collective(net, system_of("ring", 1, 1, 1), chakra::CommType::kReduceScatter, kMiB)), 75708,
                    8);
  expect_all_finish(run(one_collective(net, system_of("ring", 1, 1, 1), chakra::CommType::kAllToAll, kMiB)), 82638, 8);
}

// The multi-dimensional worked check: [Ring2 200 GB/s 50 ns, FC8 100/500, Switch4 50/2000],
// 1 MiB all-reduce, splits 1. localBWAware: RS(d0) 33966 + RS(d1) 35360 + AR(d2) 28843 +
// AG(d1) 7850 + AG(d0) 2511 = 108530. Baseline (full AR in each dim) 36467 + 79271 + 100540.
TEST(Compat, MultiDimensional) {
  const auto net = network_of({{DimensionKind::kRing, 2, 200, 50},
                               {DimensionKind::kFullyConnected, 8, 100, 500},
                               {DimensionKind::kSwitch, 4, 50, 2000}});
  expect_all_finish(run(one_collective(net, system_of("ring", 3, 1, 1), chakra::CommType::kAllReduce, kMiB)), 108530,
                    64);
  expect_all_finish(run(one_collective(net, system_of("ring", 3, 1, 1, /*baseline=*/true), chakra::CommType::kAllReduce,
                                       kMiB)),
                    216278, 64);
}

// oneRing on the same 64 NPUs is one flat ring charged at dimension 0's cost (§6.2): 78949.
TEST(Compat, OneRingOnThreeDimensions) {
  const auto net = network_of({{DimensionKind::kRing, 2, 200, 50},
                               {DimensionKind::kFullyConnected, 8, 100, 500},
                               {DimensionKind::kSwitch, 4, 50, 2000}});
  expect_all_finish(run(one_collective(net, system_of("oneRing", 1, 1, 1), chakra::CommType::kAllReduce, kMiB)), 78949,
                    64);
}

// One implementation token on a 4x4 torus covers only dimension 0: 1 MiB in 4 chunks of 256 KiB,
// each a 4-NPU ring all-reduce 6(10 + 1720) + 3*3930 + 10 = 22180, in turn: 88720 (§4.1).
TEST(Compat, OneTokenCoversOnlyDimensionZero) {
  const auto net = network_of({{DimensionKind::kRing, 4, 50, 500}, {DimensionKind::kRing, 4, 50, 500}});
  expect_all_finish(run(one_collective(net, system_of("ring", 1, 4, 1), chakra::CommType::kAllReduce, kMiB)), 88720,
                    16);
}

// The DAG anchor: c1 (5 us) -> {AR 1 MiB, c3 (20 us)} -> c4 (7 us) on Ring8, ring, splits 1.
// The AR runs 5000..101365 beside c3 (5000..25000); c4 ends at 108365. Exposed communication
// subtracts the GPU compute sum 5 + 20 + 7 us: 76365.
TEST(Compat, DagAnchor) {
  chakra::TraceBuilder b;
  b.comp("c1", 5);                                              // id 0
  b.collective("ar", chakra::CommType::kAllReduce, kMiB, {0});  // id 1
  b.comp("c3", 20, {0});                                        // id 2
  b.comp("c4", 7, {1, 2});                                      // id 3
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(b.trace(), 8);
  const sim::Result r = run(in);
  expect_all_finish(r, 108365, 8);
  for (const auto& n : r.npus) {
    EXPECT_EQ(n.exposed_comm_ns, 76365u);
    EXPECT_EQ(n.gpu_compute_ns, 32000u);
  }
}

// Two independent all-reduces share the one comm slot, so they run one after the other.
TEST(Compat, TwoAllReducesSerialise) {
  chakra::TraceBuilder b;
  b.collective("ar0", chakra::CommType::kAllReduce, kMiB);
  b.collective("ar1", chakra::CommType::kAllReduce, kMiB);
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(b.trace(), 8);
  expect_all_finish(run(in), 192730, 8);
}

// Compute nodes replay duration_micros x 1000 ns, and a zero duration takes 1 ns.
TEST(Compat, ZeroDurationComputeTakesOneNanosecond) {
  chakra::TraceBuilder b;
  b.comp("zero", 0);
  b.comp("three", 3, {0});
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.graphs = same_trace(b.trace(), 2);
  expect_all_finish(run(in), 3001, 2);
}

}  // namespace
}  // namespace chakrasim::test

namespace chakrasim::test {
namespace {

// --injection-scale=2 doubles an explicit endpoint-delay: AR8 ring, splits 1, has 15 steps that
// pay it, so 96365 + 15 x 10 = 96515 (§9). Without the key the default 10 ns is not scaled.
TEST(Compat, InjectionScale) {
  config::SystemFlags flags;
  flags.injection_scale = 2;
  const auto with_key = config::parse_system(
      R"({"preferred-dataset-splits": 1, "endpoint-delay": 10, "local-mem-bw": 50, "all-reduce-implementation": ["ring"]})",
      "s.json", flags);
  sim::Inputs in;
  in.network = network_of({{network::DimensionKind::kRing, 8, 50, 500}});
  in.system = with_key.system;
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, 1 << 20), 8);
  const sim::Result r = run(in);
  for (const auto& n : r.npus) EXPECT_EQ(n.finish_ns, 96515u);
  const auto without_key = config::
      parse_system(R"({"preferred-dataset-splits": 1, "local-mem-bw": 50, "all-reduce-implementation": ["ring"]})",
                   "s.json", flags);
  in.system = without_key.system;
  for (const auto& n : run(in).npus) EXPECT_EQ(n.finish_ns, 96365u);
}

}  // namespace
}  // namespace chakrasim::test
