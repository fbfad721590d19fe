// Which share binds a large call in the model, and the value of it that gives a measured time
// (share_hint.h), alone and in the comparison's table.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "system/nccl/share_hint.h"
#include "system/nccl/sweep.h"
#include "system/nccl/sweep_comparison.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// The model's out-of-place time of a float sum call of `bytes` with `efficiencies`.
double model_us(const Machine& machine, const Enabled& enabled, const Efficiencies& efficiencies, Collective c,
                std::uint64_t bytes) {
  SweepOptions one;
  one.collective = c;
  return sweep_row(ColumnModels(AchievedModel(machine, enabled, efficiencies)), one, bytes).out_of_place.time_us;
}

std::optional<ShareHint> hint_for(const Machine& machine, Collective c, std::uint64_t bytes, double measured_us) {
  SweepOptions row;
  row.collective = c;
  return share_hint(machine, Enabled::all(), {}, row, bytes, measured_us);
}

TEST(NcclShareHint, TheShareThatBindsIsNamedWithItsValueNow) {
  // One node: rings on NVLink for an all-gather, NVLS for an all-reduce, the all-to-all's own
  // share for an all-to-all; across nodes the NICs, a collective's share or point to point's, and
  // for an all-reduce on two nodes (NVLS-tree, the NICs with room) NVLS-tree's own share, not the
  // NVLS share it multiplies (which would move one node's NVLS too).
  struct Case {
    Machine machine;
    Collective c;
    const char* option;
    double now;
  };
  const Case cases[] = {
      {dgx(), Collective::kAllGather, "--ring-efficiency", 0.816},
      {dgx(), Collective::kAllReduce, "--nvls-efficiency", 0.744},
      {dgx(), Collective::kAllToAll, "--all-to-all-efficiency", 0.776},
      {dgx("H100", 8, 4), Collective::kAllGather, "--nic-efficiency", 0.96},
      {dgx("H100", 8, 4), Collective::kAllToAll, "--nic-p2p-efficiency", 0.92},
      {dgx("H100", 8, 2), Collective::kAllReduce, "--nvls-tree-efficiency", 0.91},
  };
  for (const Case& k : cases) {
    const double t = model_us(k.machine, Enabled::all(), {}, k.c, 8 * kGiB);
    const auto hint = hint_for(k.machine, k.c, 8 * kGiB, t);
    ASSERT_TRUE(hint) << k.option;
    EXPECT_STREQ(hint->option, k.option);
    EXPECT_DOUBLE_EQ(hint->now, k.now) << k.option;
    // The model's own time: its own share, to the bisection's width.
    EXPECT_NEAR(hint->share, k.now, 1e-9) << k.option;
    EXPECT_TRUE(hint->reachable);
  }
}

TEST(NcclShareHint, TheValueGivesTheMeasuredTime) {
  // A ring all-gather across 4 nodes bound by its NICs, measured 5% slower than the model: the
  // NIC share that gives that time, set, gives it back (the latency is NCCL's, unchanged, so the
  // share is under 0.96 / 1.05).
  const Machine m = dgx("H100", 8, 4);
  const double t = model_us(m, Enabled::all(), {}, Collective::kAllGather, 8 * kGiB);
  const auto hint = hint_for(m, Collective::kAllGather, 8 * kGiB, 1.05 * t);
  ASSERT_TRUE(hint);
  EXPECT_LT(hint->share, 0.96 / 1.05);
  EXPECT_GT(hint->share, 0.96 / 1.05 - 0.001);
  Efficiencies set;
  set.nic = hint->share;
  set.nic_p2p = 0.92;
  EXPECT_NEAR(model_us(m, Enabled::all(), set, Collective::kAllGather, 8 * kGiB), 1.05 * t, 1e-6 * t);
  // Faster than a share of 1 allows: named, and said to be out of reach.
  const auto fast = hint_for(m, Collective::kAllGather, 8 * kGiB, 0.9 * t);
  ASSERT_TRUE(fast);
  EXPECT_FALSE(fast->reachable);
  EXPECT_STREQ(fast->option, "--nic-efficiency");
  EXPECT_EQ(fast->next_option, nullptr);  // at 1 the NICs still bind: NVLink allows 450 x 0.816 x 8/7
  // With 9 NICs a node the ring's NVLink binds (419.7 GB/s against the NICs' 432), and before
  // its share reaches 1 the NICs take over: named as the next.
  const Machine nine = dgx("H100", 8, 4, 9);
  const double nine_us = model_us(nine, Enabled::all(), {}, Collective::kAllGather, 8 * kGiB);
  const auto past = hint_for(nine, Collective::kAllGather, 8 * kGiB, 0.83 * nine_us);
  ASSERT_TRUE(past);
  EXPECT_STREQ(past->option, "--ring-efficiency");
  EXPECT_FALSE(past->reachable);
  ASSERT_NE(past->next_option, nullptr);
  EXPECT_STREQ(past->next_option, "--nic-efficiency");
}

TEST(NcclShareHint, ACallALatencySetsHasNone) {
  // 8 bytes: no share moves the time.
  EXPECT_FALSE(
      hint_for(dgx(), Collective::kAllReduce, 8, model_us(dgx(), Enabled::all(), {}, Collective::kAllReduce, 8)));
  // Nor where even a share near 0 leaves the model faster than the run.
  EXPECT_FALSE(hint_for(dgx(), Collective::kAllGather, 8 * kGiB, 1e12));
}

TEST(NcclShareHint, TheTableNamesItForTheFirstSweepsPeak) {
  // Rows from 32 MiB to 1 GiB, all 2% slower than the model's ring all-gather: the peak (1 GiB)
  // is NVLink's for rings, and the share that gives its time is a little under 0.816 / 1.02.
  const Machine m = dgx();
  MeasuredRun run;
  for (std::uint64_t size = 32 * kMiB; size <= kGiB; size *= 2) {
    MeasuredRow row;
    row.size = size;
    row.out_of_place_us = 1.02 * model_us(m, Enabled::all(), {}, Collective::kAllGather, size);
    row.line = run.rows.size() + 1;
    run.rows.push_back(row);
  }
  const Comparison c = compare_with_model(run, "run.log", Collective::kAllGather, m, Enabled::all(), {}, {});
  ASSERT_TRUE(c.peak_hint);
  EXPECT_STREQ(c.peak_hint->option, "--ring-efficiency");
  EXPECT_LT(c.peak_hint->share, 0.816 / 1.02);
  EXPECT_GT(c.peak_hint->share, 0.816 / 1.02 - 0.002);
  const std::string table = comparison_table(c, Collective::kAllGather, m, "run.log");
  EXPECT_THAT(table, ::testing::ContainsRegex("# the peak, [0-9.]+ GB/s busbw at 1.0 GiB, is set in the model by "
                                              "NVLink's rate for rings \\(--ring-efficiency 0.816\\): "
                                              "--ring-efficiency 0\\.(79[0-9]|800) would give its time\n"));
  // Out of reach: the run faster than a share of 1 gives.
  for (MeasuredRow& row : run.rows) row.out_of_place_us *= 0.5;
  const Comparison fast = compare_with_model(run, "run.log", Collective::kAllGather, m, Enabled::all(), {}, {});
  EXPECT_THAT(comparison_table(fast, Collective::kAllGather, m, "run.log"), HasSubstr("(--ring-efficiency 0.816); even "
                                                                                      "--ring-efficiency 1 leaves the "
                                                                                      "model slower there\n"));
  // And where another share takes over on the way to 1, which (9 NICs a node: see above).
  {
    const Machine nine = dgx("H100", 8, 4, 9);
    MeasuredRun big;
    big.rows = {run.rows.back()};
    big.rows[0].out_of_place_us = 0.83 * model_us(nine, Enabled::all(), {}, Collective::kAllGather, kGiB);
    const Comparison past = compare_with_model(big, "run.log", Collective::kAllGather, nine, Enabled::all(), {}, {});
    EXPECT_THAT(comparison_table(past, Collective::kAllGather, nine, "run.log"), HasSubstr("even --ring-efficiency 1 "
                                                                                           "leaves the model slower "
                                                                                           "there, and at 1 the NICs' "
                                                                                           "rate for "
                                                                                           "collectives binds it "
                                                                                           "instead "
                                                                                           "(--nic-efficiency)\n"));
  }
  // Where the host's launches set the model's time at the peak (8 of 400 us from one thread,
  // -g 8, against the GPUs' 2631 at 1 GiB), no share moves it: no hint.
  CompareOptions launched;
  launched.gpus_per_thread = 8;
  launched.host_launch_us = 400;
  EXPECT_FALSE(compare_with_model(run, "run.log", Collective::kAllGather, m, Enabled::all(), {}, launched).peak_hint);
  // A peak under 64 MiB reads as latency and bytes alike: no hint.
  run.rows.resize(1);
  const Comparison small = compare_with_model(run, "run.log", Collective::kAllGather, m, Enabled::all(), {}, {});
  EXPECT_FALSE(small.peak_hint);
  EXPECT_THAT(comparison_table(small, Collective::kAllGather, m, "run.log"), Not(HasSubstr("# the peak")));
}

}  // namespace
}  // namespace chakrasim::system::nccl
