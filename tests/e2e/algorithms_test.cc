// ASTRA-sim compatibility of the direct, halving-doubling and double-binary-tree algorithms:
// every figure of docs/astra-sim-model.md §9 that uses them, on both analytical backends, with
// inputs built in code. Common settings: 1 MiB per NPU, 8 NPUs, 50 GB/s links (53.687 B/ns),
// 500 ns per hop, E = 10, local-mem-bw 50 (P(s) = 3 floor(s / 50)), LIFO.
//
// Network times used below, T(s, h) = floor(h * 500 + s / 53.687) for h hops (CU):
//   s = 131072 (c/8):  h1 2941, h2 3441, h3 3941, h4 4441
//   s = 262144 (c/4):  h1 5382, h2 5882          s = 524288 (c/2): h1 10265
//   s = 1048576 (c):   h1 20031, h2 20531, h4 21531
//   s = 2 MiB: h2 40062        s = 4 MiB: h1 78625
// and P(c/8) = 7863, P(c/4) = 15726, P(c) = 62913. On a Ring8, peer k positions away is
// min(k, 8 - k) hops; on a Switch every peer is 2 hops; on FC8 1 hop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/system_config.h"
#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
using ::testing::HasSubstr;

sim::Result run_on(const std::string& backend, DimensionKind topology, system::SystemSpec sys, chakra::CommType type) {
  return run(one_collective(network_of({{topology, 8, 50, 500}}), std::move(sys), type, kMiB, backend));
}

// `npu` finished at `expected`; with `symmetric`, every NPU did.
void expect_finish(const sim::Result& r, Tick expected, bool symmetric = true) {
  ASSERT_EQ(r.npus.size(), 8u);
  ASSERT_TRUE(r.all_finished());
  EXPECT_EQ(r.npus[0].finish_ns, expected) << "NPU 0";
  if (!symmetric) return;
  for (std::size_t i = 1; i < r.npus.size(); ++i) EXPECT_EQ(r.npus[i].finish_ns, expected) << "NPU " << i;
}

constexpr const char* kUnaware = "congestion-unaware";
constexpr const char* kAware = "congestion-aware";

struct MatrixCase {
  const char* name;
  const char* algorithm;
  DimensionKind topology;
  std::uint64_t splits;
  std::uint32_t active;
  Tick unaware;
  Tick aware;
  bool symmetric;  // every NPU finishes together (not so on the trees)
};
void PrintTo(const MatrixCase& c, std::ostream* os) { *os << c.name; }

class Ar8AlgorithmMatrix : public ::testing::TestWithParam<MatrixCase> {};

// The AR8 matrix rows of the three algorithms (1 MiB all-reduce, 8 NPUs):
//
// direct s1, c = 1 MiB, pieces of c/8: 3E + 2T(c/8) + P(c/8) when every peer is equally far.
//   FC8: 30 + 2 * 2941 + 7863 = 13775. Switch8 (2 hops) would be 14775 by the same form, and is.
//   Ring8: the reduce-scatter pieces arrive after 10 + T(h) and are reduced by 10 + 7863 + 10 +
//   T(h), i.e. at 10824, 11324, 11824, 12324 for h = 1..4 (two peers each but h = 4). Each
//   finished reduction releases the next all-gather send in order +1, +2, ..., +7: two at 10824,
//   two at 11324, two at 11824, one at 12324. The last piece in lands at
//   max(10824 + 2941, 10824 + 3441, 11324 + 3941, 11324 + 4441, 11824 + 3941, 11824 + 3441,
//   12324 + 2941) = 15765, plus the exit E: 15775.
// direct s4 a4: four 256 KiB chunks run at once and, without contention, do not disturb each
//   other: FC8 30 + 2 T(32768) + P(32768) = 30 + 2 * 1110 + 1965 = 4215; Switch8 +1000 = 5215;
//   Ring8 6215 (staggered as above).
// halvingDoubling s1: E + T(c/2, 1) + E + P(c/4) + T(c/4, 2) + E + P(c/8) + T(c/8, 4) + E +
//   T(c/8, 4) + E + T(c/4, 2) + E + T(c/2, 1) + E. FC8 (1 hop each): 70 + 2(10265 + 5382 + 2941)
//   + 15726 + 7863 = 60835; Ring8 (1, 2, 4 hops): 70 + 2(10265 + 5882 + 4441) + 23589 = 64835;
//   Switch8 (2 hops): 63835.
// doubleBinaryTree s1, depth 3: 2E + 6T(c) + 5(E + P(c)). FC8: 20 + 6 * 20031 + 5 * 62923 =
//   434821. On Ring8 the max-root tree 7 <- 3 <- {1, 5} <- {0, 2, 4, 6} spans 1 + 2 + 4 hops each
//   way: 8 more hops of 500 ns, 438821; on the switch every edge is 2 hops: 437821. NPU 0 (a
//   leaf) is the last to finish.
// The CA column adds link contention: every NPU sends to several peers through shared ring
// links (or its one switch up-link) at once, and the tree's 1 MiB messages pay serialisation on
// every hop.
TEST_P(Ar8AlgorithmMatrix, CongestionUnaware) {
  const MatrixCase& c = GetParam();
  expect_finish(run_on(kUnaware, c.topology, system_of(c.algorithm, 1, c.splits, c.active),
                       chakra::CommType::kAllReduce),
                c.unaware, c.symmetric);
}

TEST_P(Ar8AlgorithmMatrix, CongestionAware) {
  const MatrixCase& c = GetParam();
  expect_finish(run_on(kAware, c.topology, system_of(c.algorithm, 1, c.splits, c.active), chakra::CommType::kAllReduce),
                c.aware, c.symmetric);
}

INSTANTIATE_TEST_SUITE_P(
    Compat, Ar8AlgorithmMatrix,
    ::testing::Values(
        MatrixCase{"Direct_Ring8_s1", "direct", DimensionKind::kRing, 1, 1, 15775, 53331, true},
        MatrixCase{"Direct_Switch8_s1", "direct", DimensionKind::kSwitch, 1, 1, 14775, 41626, true},
        MatrixCase{"Direct_FC8_s1", "direct", DimensionKind::kFullyConnected, 1, 1, 13775, 13775, true},
        MatrixCase{"Direct_Ring8_s4a4", "direct", DimensionKind::kRing, 4, 4, 6215, 49965, true},
        MatrixCase{"Direct_Switch8_s4a4", "direct", DimensionKind::kSwitch, 4, 4, 5215, 35790, true},
        MatrixCase{"Direct_FC8_s4a4", "direct", DimensionKind::kFullyConnected, 4, 4, 4215, 6045, true},
        MatrixCase{"HalvingDoubling_Ring8_s1", "halvingDoubling", DimensionKind::kRing, 1, 1, 64835, 89245, true},
        MatrixCase{"HalvingDoubling_Switch8_s1", "halvingDoubling", DimensionKind::kSwitch, 1, 1, 63835, 98011, true},
        MatrixCase{"HalvingDoubling_FC8_s1", "halvingDoubling", DimensionKind::kFullyConnected, 1, 1, 60835, 60835,
                   true},
        MatrixCase{"DoubleBinaryTree_Ring8_s1", "doubleBinaryTree", DimensionKind::kRing, 1, 1, 438821, 595069, false},
        MatrixCase{"DoubleBinaryTree_Switch8_s1", "doubleBinaryTree", DimensionKind::kSwitch, 1, 1, 437821, 594069,
                   false},
        MatrixCase{"DoubleBinaryTree_FC8_s1", "doubleBinaryTree", DimensionKind::kFullyConnected, 1, 1, 434821, 434821,
                   false}),
    [](const auto& p) { return std::string(p.param.name); });

struct CollectiveCase {
  const char* name;
  const char* algorithm;
  chakra::CommType type;
  Tick unaware;
  Tick aware;
};
void PrintTo(const CollectiveCase& c, std::ostream* os) { *os << c.name; }

class OtherCollectivesRing8 : public ::testing::TestWithParam<CollectiveCase> {};

// "Other collectives" on Ring8, s1 (one chunk of 1 MiB):
// direct, one round to every peer, the farthest 4 hops away:
//   AG  2E + T(c, 4) = 20 + 21531 = 21551 (all-gather pieces are the whole 1 MiB shard)
//   RS  2E + T(c/8, 4) + P(c/8) = 20 + 4441 + 7863 = 12324
//   A2A 2E + T(c/8, 4) = 4461
// halvingDoubling:
//   AG  E + T(c, 4) + E + T(2c, 2) + E + T(4c, 1) + E = 40 + 21531 + 40062 + 78625 = 140258
//   RS  E + T(c/2, 1) + E + P(c/4) + T(c/4, 2) + E + P(c/8) + T(c/8, 4) + E: the reduction
//       after each receive is charged on the next message's size and the last receive is not
//       reduced: 10 + 10265 + 15736 + 5882 + 7873 + 4441 + 10 = 44217
TEST_P(OtherCollectivesRing8, CongestionUnaware) {
  const CollectiveCase& c = GetParam();
  expect_finish(run_on(kUnaware, DimensionKind::kRing, system_of(c.algorithm, 1, 1, 1), c.type), c.unaware);
}

TEST_P(OtherCollectivesRing8, CongestionAware) {
  const CollectiveCase& c = GetParam();
  expect_finish(run_on(kAware, DimensionKind::kRing, system_of(c.algorithm, 1, 1, 1), c.type), c.aware);
}

INSTANTIATE_TEST_SUITE_P(
    Compat, OtherCollectivesRing8,
    ::testing::Values(CollectiveCase{"AllGather_Direct", "direct", chakra::CommType::kAllGather, 21551, 196330},
                      CollectiveCase{"AllGather_HalvingDoubling", "halvingDoubling", chakra::CommType::kAllGather,
                                     140258, 237913},
                      CollectiveCase{"ReduceScatter_Direct", "direct", chakra::CommType::kReduceScatter, 12324, 33293},
                      CollectiveCase{"ReduceScatter_HalvingDoubling", "halvingDoubling",
                                     chakra::CommType::kReduceScatter, 44217, 56422},
                      CollectiveCase{"AllToAll_Direct", "direct", chakra::CommType::kAllToAll, 4461, 25430}),
    [](const auto& p) { return std::string(p.param.name); });

// Which NPU finishes when on the trees (FC8, CU, 1 MiB, s1): NPU 0 is a leaf of the max-root tree
// 7 <- 3 <- {1, 5} <- {0, 2, 4, 6}. With T = 20031 and E + P = 62923 the root is done once it
// has reduced and sent down, at E + 3T + 3(E + P) = 248872; the top node one T and E + P later,
// 331826; the inner nodes 414780; the leaves T + E after that, 434821 (the §9 figure).
// With s2 a2 the two 512 KiB chunks run at once on alternate trees (max-root, then min-root),
// and every NPU is a leaf of one of them, so every NPU ends with the leaves:
// T = floor(500 + 524288 / 53.687) = 10265, P = 3 * 10485 = 31455:
// 2E + 6T + 5(E + P) = 20 + 61590 + 157325 = 218935.
TEST(DoubleBinaryTree, FinishTimesPerNpuAndAlternateTrees) {
  const sim::Result one = run_on(kUnaware, DimensionKind::kFullyConnected, system_of("doubleBinaryTree", 1, 1, 1),
                                 chakra::CommType::kAllReduce);
  ASSERT_TRUE(one.all_finished());
  const Tick expected[] = {434821, 414780, 434821, 331826, 434821, 414780, 434821, 248872};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(one.npus[i].finish_ns, expected[i]) << "NPU " << i;
  expect_finish(run_on(kUnaware, DimensionKind::kFullyConnected, system_of("doubleBinaryTree", 1, 2, 2),
                       chakra::CommType::kAllReduce),
                218935);
}

// A direct window of n - 1 or more is the default window: direct7 and direct100 give the
// direct figures (Ring8 s1: 15775 CU, 53331 CA).
TEST(Direct, WindowOfAtLeastNMinusOneIsTheDefault) {
  for (const char* token : {"direct7", "direct100"}) {
    SCOPED_TRACE(token);
    expect_finish(run_on(kUnaware, DimensionKind::kRing, system_of(token, 1, 1, 1), chakra::CommType::kAllReduce),
                  15775);
    expect_finish(run_on(kAware, DimensionKind::kRing, system_of(token, 1, 1, 1), chakra::CommType::kAllReduce), 53331);
  }
}

// Algorithms mixed per dimension (derived from the closed forms, not a §9 figure): CU,
// [Ring 2, FC 4] at 50 GB/s and 500 ns, AR 1 MiB, s1, localBWAware, ["ring", "halvingDoubling"]:
//   RS on d0 by ring, n = 2: E + T(512 KiB) + P(512 KiB) + E = 10 + 10265 + 31455 + 10 = 41740
//   AR on d1 by halving-doubling, n = 4, c = 512 KiB: sizes c/2, c/4, c/4, c/2, one reduction
//   on c/4: 5E + 2 * 5382 + 2 * 2941 + 7863 = 24559
//   AG on d0 by ring, 512 KiB: E + 10265 + E = 10285
// in all 76584.
TEST(MixedAlgorithms, RingThenHalvingDoublingOnTwoDimensions) {
  auto sys = system_of("ring", 2, 1, 1);
  sys.implementations[static_cast<std::size_t>(system::CollectiveKind::kAllReduce)][1] = algorithm_of("halvingDoublin"
                                                                                                      "g");
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}, {DimensionKind::kFullyConnected, 4, 50, 500}});
  in.system = sys;
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, kMiB), 8);
  expect_finish(run(in), 76584);
}

// The implementation tokens as the system JSON spells them (§1.3).
TEST(AlgorithmTokens, ParseIntoKindFlatAndWindow) {
  const config::SystemConfig c = config::parse_system(
      R"({"preferred-dataset-splits": 1,
          "all-reduce-implementation": ["direct", "direct4", "halvingDoubling", "doubleBinaryTree"],
          "all-gather-implementation": ["oneDirect"], "reduce-scatter-implementation": ["oneDirect16"],
          "all-to-all-implementation": ["oneHalvingDoubling"]})",
      "sys.json", {});
  using system::AlgorithmKind;
  const auto& ar = c.system.implementations[static_cast<std::size_t>(system::CollectiveKind::kAllReduce)];
  ASSERT_EQ(ar.size(), 4u);
  EXPECT_EQ(ar[0].kind, AlgorithmKind::kDirect);
  EXPECT_EQ(ar[0].window, 0u);
  EXPECT_EQ(ar[1].kind, AlgorithmKind::kDirect);
  EXPECT_EQ(ar[1].window, 4u);
  EXPECT_EQ(ar[2].kind, AlgorithmKind::kHalvingDoubling);
  EXPECT_EQ(ar[3].kind, AlgorithmKind::kDoubleBinaryTree);
  for (const auto& impl : ar) EXPECT_FALSE(impl.one_flat);
  const auto& ag = c.system.implementations[static_cast<std::size_t>(system::CollectiveKind::kAllGather)];
  EXPECT_EQ(ag[0].kind, AlgorithmKind::kDirect);
  EXPECT_TRUE(ag[0].one_flat);
  const auto& rs = c.system.implementations[static_cast<std::size_t>(system::CollectiveKind::kReduceScatter)];
  EXPECT_EQ(rs[0].window, 16u);
  EXPECT_TRUE(rs[0].one_flat);
  const auto& a2a = c.system.implementations[static_cast<std::size_t>(system::CollectiveKind::kAllToAll)];
  EXPECT_EQ(a2a[0].kind, AlgorithmKind::kHalvingDoubling);
  EXPECT_TRUE(a2a[0].one_flat);

  for (const char* bad : {"direct0", "directX", "direct-1", "oneDoubleBinaryTree", "onering", "halvingdoubling"}) {
    SCOPED_TRACE(bad);
    try {
      config::parse_system(std::string(R"({"preferred-dataset-splits": 1, "all-reduce-implementation": [")") + bad +
                               R"("]})",
                           "sys.json", {});
      ADD_FAILURE() << "expected an Error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("algorithm \"" + std::string(bad) + "\" is unknown"));
    }
  }
}

// Halving-doubling has no all-to-all: the reference exits ("unknown communication type"); we
// stop with an Error naming the collective and the algorithm when the collective is planned.
TEST(AlgorithmErrors, HalvingDoublingAllToAllIsAnError) {
  for (const char* backend : {kUnaware, kAware}) {
    SCOPED_TRACE(backend);
    sim::Inputs in;
    in.backend = backend;
    in.network = network_of({{DimensionKind::kRing, 8, 50, 500}});
    in.system = system_of("halvingDoubling", 1, 1, 1);
    in.graphs = same_trace(single_collective(chakra::CommType::kAllToAll, kMiB), 8);
    try {
      sim::simulate(in);
      ADD_FAILURE() << "expected an Error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("all-to-all"));
      EXPECT_THAT(e.what(), HasSubstr("halvingDoubling"));
    }
  }
}

}  // namespace
}  // namespace chakrasim::test
