// The collective-algorithm table (system/algorithms.h): the built-in rows, the texts the parser
// builds from them, and an algorithm added through a row alone, run end to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/system_config.h"
#include "core/error.h"
#include "support/test_support.h"
#include "system/algorithms.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
using system::AlgorithmKind;
using ::testing::HasSubstr;

TEST(AlgorithmTable, BuiltInRowsAreTheReferencesAlgorithms) {
  const auto& rows = system::algorithms();
  ASSERT_GE(rows.size(), 5u);
  EXPECT_STREQ(system::algorithm_info(AlgorithmKind::kRing).token, "ring");
  EXPECT_STREQ(system::algorithm_info(AlgorithmKind::kDirect).token, "direct");
  EXPECT_STREQ(system::algorithm_info(AlgorithmKind::kHalvingDoubling).token, "halvingDoubling");
  EXPECT_STREQ(system::algorithm_info(AlgorithmKind::kDoubleBinaryTree).token, "doubleBinaryTree");
  EXPECT_STREQ(system::algorithm_info(AlgorithmKind::kCustom).token, "custom");
  for (const system::AlgorithmInfo& r : rows) {
    EXPECT_TRUE(r.configure != nullptr || r.make != nullptr) << r.token;
    EXPECT_STRNE(r.description, "") << r.token;
  }
  // Only ring and direct look the same from every NPU up to a shift (sim/symmetry.h).
  EXPECT_TRUE(system::algorithm_info(AlgorithmKind::kRing).symmetric_safe);
  EXPECT_TRUE(system::algorithm_info(AlgorithmKind::kDirect).symmetric_safe);
  EXPECT_FALSE(system::algorithm_info(AlgorithmKind::kHalvingDoubling).symmetric_safe);
  EXPECT_FALSE(system::algorithm_info(AlgorithmKind::kDoubleBinaryTree).symmetric_safe);
}

TEST(AlgorithmTable, ParserTextsComeFromTheRows) {
  // The built-in part of the list is the text the parser printed before the table existed.
  EXPECT_THAT(system::list_tokens_text(), HasSubstr("ring or oneRing, direct or oneDirect (optionally with a window of "
                                                    "at least 1, e.g. "
                                                    "direct4), halvingDoubling or oneHalvingDoubling"));
  EXPECT_EQ(algorithm_of("oneRing").kind, AlgorithmKind::kRing);
  EXPECT_TRUE(algorithm_of("oneRing").one_flat);
  EXPECT_EQ(algorithm_of("direct4").window, 4u);
  EXPECT_THROW(algorithm_of("oneDoubleBinaryTree"), Error);  // the tree has no flat form
  EXPECT_THROW(algorithm_of("ring4"), Error);                // nor does ring take a window
  EXPECT_THROW(algorithm_of("custom"), Error);               // custom has a key of its own
}

// A toy algorithm: every NPU pays E, sends its whole chunk to its ring successor, and is done
// when its predecessor's chunk has arrived. Only all-gather.
class ShiftOnce final : public system::PluggedAlgorithm {
 public:
  explicit ShiftOnce(const system::PhaseSetup& s)
      : bytes_(s.phase->bytes), next_(s.ring.away(1, true)), prev_(s.ring.away(1, false)) {}
  void start(system::PhaseIo& io) override { io.bundle(false, bytes_); }
  void on_step_ready(system::PhaseIo& io) override {
    io.send(next_, bytes_);
    io.receive(prev_, bytes_);
  }
  void on_receive(system::PhaseIo& io) override { io.finish(); }

 private:
  std::uint64_t bytes_;
  NpuId next_, prev_;
};

AlgorithmKind toy_kind() {
  static const AlgorithmKind kind = [] {
    system::AlgorithmInfo row;
    row.token = "shiftOnce";
    row.kinds = {system::CollectiveKind::kAllGather};
    row.description = "test toy: one shift of the whole chunk round the ring";
    row.make = [](const system::PhaseSetup& s) -> std::unique_ptr<system::PluggedAlgorithm> {
      return std::make_unique<ShiftOnce>(s);
    };
    return system::register_algorithm(row);
  }();
  return kind;
}

TEST(AlgorithmTable, AnAlgorithmAddedByOneRowRunsEndToEnd) {
  const AlgorithmKind kind = toy_kind();
  // The parser knows it by its row alone, and lists it in its error text.
  EXPECT_EQ(algorithm_of("shiftOnce").kind, kind);
  EXPECT_THAT(system::list_tokens_text(), HasSubstr("or shiftOnce"));
  // A 1 MiB all-gather on a ring of 4 (50 GiB/s, 500 ns): one step, E = 10, then one hop,
  // 500 + 1048576 / (50 x 2^30 / 10^9) = 500 + 19531.25 ns, truncated once: 20041 ns in all.
  const sim::Inputs in = one_collective(network_of({{DimensionKind::kRing, 4, 50, 500}}),
                                        system_of("shiftOnce", 1, 1, 1), chakra::CommType::kAllGather, 1 << 20);
  expect_all_finish(sim::simulate(in), 10 + 20031);
  // The planner asks the row which kinds it runs.
  const sim::Inputs all_reduce = one_collective(network_of({{DimensionKind::kRing, 4, 50, 500}}),
                                                system_of("shiftOnce", 1, 1, 1), chakra::CommType::kAllReduce, 1 << 20);
  try {
    sim::simulate(all_reduce);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("is shiftOnce, which has no all-reduce"));
  }
  EXPECT_THROW(system::register_algorithm(system::algorithm_info(kind)), Error);  // one row per token
}

}  // namespace
}  // namespace chakrasim::test
