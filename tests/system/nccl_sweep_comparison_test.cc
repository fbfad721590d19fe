// A real nccl-tests run set beside the model: the errors, the shapes, spikes and the table
// (sweep_comparison.h).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "system/nccl/sweep.h"
#include "system/nccl/sweep_comparison.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CompareOptions launches(std::uint32_t gpus_per_thread, double host_launch_us) {
  CompareOptions options;
  options.gpus_per_thread = gpus_per_thread;
  options.host_launch_us = host_launch_us;
  return options;
}
CompareOptions spikes_left_out() {
  CompareOptions options;
  options.leave_out_spikes = true;
  return options;
}

// The model's own times, as a run's rows.
MeasuredRun own_run(const AchievedModel& model, Collective c, std::uint64_t min, std::uint64_t max) {
  SweepOptions sweep;
  sweep.collective = c;
  sweep.min_bytes = min;
  sweep.max_bytes = max;
  MeasuredRun run;
  for (const SweepRow& r : run_sweep(model, sweep)) {
    MeasuredRow m;
    m.size = r.size;
    m.out_of_place_us = r.out_of_place.time_us;
    m.in_place_us = r.in_place.time_us;
    m.line = run.rows.size() + 1;
    run.rows.push_back(m);
  }
  return run;
}

// A run of one row of `size` bytes taking 20 us, on line `line` of its log.
MeasuredRun one_row(std::uint64_t size, std::size_t line) {
  MeasuredRow row;
  row.size = size;
  row.out_of_place_us = 20;
  row.line = line;
  MeasuredRun run;
  run.rows.push_back(row);
  return run;
}

TEST(NcclSweepComparison, TheErrorIsTheGeometricMeanOfTheRatios) {
  // The model's own times as the measured ones: no error. Then 10% slower and 10% faster
  // measured times: |ln(1/1.1)| and |ln(1/0.9)| averaged, in place only where printed.
  const Machine machine = dgx();
  const Enabled enabled = Enabled::all();
  MeasuredRun run = own_run(AchievedModel(machine, enabled), Collective::kAllReduce, 1024, 2048);
  const Comparison exact = compare_with_model(run, "own.log", Collective::kAllReduce, machine, enabled, {}, {});
  ASSERT_EQ(exact.rows.size(), 2u);
  EXPECT_NEAR(exact.out_of_place_error, 0, 1e-12);
  EXPECT_NEAR(exact.mean_signed_error, 0, 1e-12);
  EXPECT_EQ(exact.rows[0].choice.algorithm, Algorithm::kRing);
  run.rows[0].out_of_place_us *= 1.1;
  run.rows[1].out_of_place_us *= 0.9;
  run.rows[1].in_place_us.reset();
  run.rows.push_back(MeasuredRow{});  // a size of no element: nothing to compare
  const Comparison off = compare_with_model(run, "own.log", Collective::kAllReduce, machine, enabled, {}, {});
  ASSERT_EQ(off.rows.size(), 2u);
  EXPECT_NEAR(off.out_of_place_error, std::exp((std::log(1.1) + std::log(1 / 0.9)) / 2) - 1, 1e-12);
  EXPECT_NEAR(off.mean_signed_error, std::exp((std::log(1 / 1.1) + std::log(1 / 0.9)) / 2) - 1, 1e-12);
  EXPECT_EQ(off.in_place_rows, 1u);
  EXPECT_NEAR(off.in_place_error, 0, 1e-12);
  // A thread launching several GPUs' calls: no call under its launches.
  const Comparison launched =
      compare_with_model(run, "own.log", Collective::kAllReduce, machine, enabled, {}, launches(1, 100));
  EXPECT_EQ(launched.rows[0].model_out_of_place_us, 100);
  // Types and operations each get the algorithms they leave NCCL: an average runs no NVLS.
  MeasuredRun large = own_run(AchievedModel(machine, enabled), Collective::kAllReduce, 1 << 30, 1 << 30);
  large.rows.push_back(large.rows[0]);
  large.rows[1].op = ReduceOp::kAvg;
  const Comparison ops = compare_with_model(large, "ops.log", Collective::kAllReduce, machine, enabled, {}, {});
  EXPECT_EQ(ops.rows[0].choice.algorithm, Algorithm::kNvls);
  EXPECT_EQ(ops.rows[1].choice.algorithm, Algorithm::kRing);
}

TEST(NcclSweepComparison, ARowTheMachineCannotHaveRunIsAnError) {
  const Machine machine = dgx();
  const auto error_of_compare = [&](const MeasuredRun& run, Collective c, const Machine& m) {
    try {
      compare_with_model(run, "run.log", c, m, Enabled::all(), {}, {});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // An all-gather of 6 ranks' 36-byte shards: 8 ranks' shards are 16-byte multiples (128 bytes
  // in all), or, before nccl-tests 2.13.12, whole floats (192).
  MeasuredRun run = one_row(216, 7);
  EXPECT_THAT(error_of_compare(run, Collective::kAllGather, machine), HasSubstr("run.log:7: 216 bytes of float, which "
                                                                                "nccl-tests prints only on other "
                                                                                "numbers of ranks (on the "
                                                                                "machine's 8 it prints 128)"));
  run.rows[0].size = 1024;
  run.rows[0].root = 8;
  EXPECT_THAT(error_of_compare(run, Collective::kBroadcast, machine), HasSubstr("run.log:7: root 8; the machine's "
                                                                                "ranks are 0 to 7"));
  run.rows[0].root = 0;
  run.rows[0].type = DataType::kFloat8E4M3;
  EXPECT_THAT(error_of_compare(run, Collective::kAllReduce, dgx("A100")), HasSubstr("run.log:7: all_reduce of f8e4m3"));
  // A send/receive of no bytes still runs in the model, but nccl-tests prints no time for it; a
  // log of such rows only has nothing to compare.
  MeasuredRun nothing;
  nothing.rows.push_back(MeasuredRow{});
  EXPECT_THAT(error_of_compare(nothing, Collective::kSendRecv, machine), HasSubstr("run.log: no row of sendrecv"));
}

TEST(NcclSweepComparison, AnOlderNcclTestsSharesWholeElementsARank) {
  // Before 2.13.12 nccl-tests split a gather's count in whole elements a rank: 8 ranks' 32-byte
  // all-gather of floats is one float each (today's prints 0 there, no 16 bytes a rank). Such a
  // row reads back, timed as those 8 floats.
  const Machine machine = dgx();
  const Comparison c =
      compare_with_model(one_row(32, 3), "old.log", Collective::kAllGather, machine, Enabled::all(), {}, {});
  ASSERT_EQ(c.rows.size(), 1u);
  const ColumnModels models(AchievedModel(machine, Enabled::all()));
  SweepOptions whole;
  whole.collective = Collective::kAllGather;
  whole.share_in_16_bytes = false;
  const SweepRow own = sweep_row(models, whole, 32);
  EXPECT_EQ(own.size, 32u);
  EXPECT_EQ(own.count, 1u);
  EXPECT_EQ(c.rows[0].model_out_of_place_us, own.out_of_place.time_us);
  SweepOptions today = whole;
  today.share_in_16_bytes = true;
  EXPECT_EQ(sweep_row(models, today, 32).size, 0u);
}

TEST(NcclSweepComparison, EachTypesRowsHaveTheirShapeBesideTheModels) {
  // The model's own times as the measured ones: the same shape on both sides. An 8x H100 all-
  // reduce runs rings in LL to 1 MiB and NVLS from 2 MiB (tuning's choice).
  const Machine machine = dgx();
  MeasuredRun run = own_run(AchievedModel(machine, Enabled::all()), Collective::kAllReduce, 8, 1 << 30);
  const std::size_t floats = run.rows.size();
  // A second type's rows (one size, doubles, 10 us), whose shape is its own.
  MeasuredRow dbl;
  dbl.size = 1024;
  dbl.type = DataType::kDouble;
  dbl.out_of_place_us = 10;
  run.rows.insert(run.rows.begin() + 2, dbl);
  const Comparison c = compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, {});
  ASSERT_EQ(c.shapes.size(), 2u);
  EXPECT_EQ(c.shapes[0].type, DataType::kFloat);
  EXPECT_EQ(c.shapes[1].type, DataType::kDouble);
  const SweepShape& measured = c.shapes[0].measured;
  const SweepShape& model = c.shapes[0].model;
  EXPECT_EQ(measured.peak_size_bytes, model.peak_size_bytes);
  EXPECT_DOUBLE_EQ(measured.peak_algbw_gb_per_s, model.peak_algbw_gb_per_s);
  EXPECT_DOUBLE_EQ(measured.floor_us, model.floor_us);
  ASSERT_TRUE(measured.half_peak_size_bytes.has_value());
  EXPECT_DOUBLE_EQ(*measured.half_peak_size_bytes, *model.half_peak_size_bytes);
  // The float rows' own: their floor is the model's least time over them, not the 10 us row's.
  double least = run.rows[0].out_of_place_us;
  for (const MeasuredRow& r : run.rows) {
    if (r.type == DataType::kFloat) least = std::min(least, r.out_of_place_us);
  }
  EXPECT_DOUBLE_EQ(measured.floor_us, least);
  EXPECT_EQ(c.shapes[1].measured.floor_us, 10);
  EXPECT_EQ(floats + 1, c.rows.size());
  // Measured 10% slower everywhere: the floor 10% under, the peak 1/1.1 - 1 over, half at the same size.
  for (MeasuredRow& r : run.rows) r.out_of_place_us *= 1.1;
  const Comparison slow = compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, {});
  EXPECT_NEAR(slow.shapes[0].model.floor_us / slow.shapes[0].measured.floor_us, 1 / 1.1, 1e-12);
  EXPECT_NEAR(*slow.shapes[0].model.half_peak_size_bytes / *slow.shapes[0].measured.half_peak_size_bytes, 1, 1e-9);
  const std::string table = comparison_table(slow, Collective::kAllReduce, machine, "own.log");
  EXPECT_THAT(table, HasSubstr("# shape of the float sum rows, out of place, measured / model:\n"));
  EXPECT_THAT(table, HasSubstr(fmt::format("#   latency floor (the least time): {:.2f} us at {} B / {:.2f} at {} B "
                                           "(-9.1%)\n",
                                           1.1 * least, slow.shapes[0].measured.floor_size_bytes, least,
                                           slow.shapes[0].model.floor_size_bytes)));
  // busbw = algbw x 2(n-1)/n; the model's peak 10% over the measured one.
  EXPECT_THAT(table,
              HasSubstr(fmt::format("#   peak busbw: {:.1f} GB/s at 1.0 GiB / {:.1f} at 1.0 GiB (+10.0%)\n",
                                    1.75 * measured.peak_algbw_gb_per_s / 1.1, 1.75 * measured.peak_algbw_gb_per_s)));
  EXPECT_THAT(table, ::testing::ContainsRegex("#   half of the peak first reached at: [0-9.]+ MiB / [0-9.]+ MiB "
                                              "\\(1.00x "
                                              "the size\\)\n"));
  EXPECT_THAT(table, HasSubstr("#   the model's choice: Ring/LL, NVLS/Simple from 2.0 MiB\n"));
  // The doubles' one row: no half point to see, and one choice.
  EXPECT_THAT(table, HasSubstr("# shape of the double sum rows"));
  EXPECT_THAT(table, HasSubstr("half of the peak first reached at: the smallest size or under / the smallest size or "
                               "under\n"));
  EXPECT_THAT(table, HasSubstr("#   the model's choice: Ring/LL\n"));
}

TEST(NcclSweepComparison, SpikesLeftOutAreRowsOverBothNeighbours) {
  // The model's own times, 8 B to 64 MiB on 8 H100s (an all-reduce: half its peak at ~15 MiB),
  // then: the smallest size 3x (over its one neighbour: a spike), 16 MiB 3x (over both), 1 KiB
  // 1.1x (not 1.2x over either: kept).
  const Machine machine = dgx();
  MeasuredRun run = own_run(AchievedModel(machine, Enabled::all()), Collective::kAllReduce, 8, 64 << 20);
  const auto row_of = [&](std::uint64_t size) -> MeasuredRow& {
    return *std::find_if(run.rows.begin(), run.rows.end(), [&](const MeasuredRow& r) { return r.size == size; });
  };
  row_of(8).out_of_place_us *= 3;
  row_of(16 << 20).out_of_place_us *= 3;
  row_of(1024).out_of_place_us *= 1.1;
  for (MeasuredRow& r : run.rows) r.in_place_us.reset();
  const std::size_t rows = run.rows.size();
  // Kept in: every row counts.
  const Comparison kept = compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, {});
  EXPECT_EQ(kept.spikes, 0u);
  EXPECT_NEAR(kept.out_of_place_error, std::exp((2 * std::log(3.0) + std::log(1.1)) / static_cast<double>(rows)) - 1,
              1e-12);
  // Left out: two spikes, the means over the other rows.
  const Comparison left =
      compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, spikes_left_out());
  EXPECT_EQ(left.spikes, 2u);
  ASSERT_EQ(left.rows.size(), rows);
  for (const ComparedRow& r : left.rows) {
    EXPECT_EQ(r.spike, r.measured.size == 8 || r.measured.size == (16u << 20)) << r.measured.size;
  }
  EXPECT_NEAR(left.out_of_place_error, std::exp(std::log(1.1) / static_cast<double>(rows - 2)) - 1, 1e-12);
  EXPECT_NEAR(left.mean_signed_error, std::exp(-std::log(1.1) / static_cast<double>(rows - 2)) - 1, 1e-12);
  // The shape without them: the half point where the model has it (both sides leave the row out);
  // with 16 MiB in, the measured half moves past it.
  ASSERT_TRUE(left.shapes[0].measured.half_peak_size_bytes.has_value());
  EXPECT_DOUBLE_EQ(*left.shapes[0].measured.half_peak_size_bytes, *left.shapes[0].model.half_peak_size_bytes);
  EXPECT_GT(*kept.shapes[0].measured.half_peak_size_bytes, 16u << 20);
  const std::string table = comparison_table(left, Collective::kAllReduce, machine, "own.log");
  EXPECT_THAT(table, HasSubstr("Ring/LL  (a spike: left out)\n"));
  EXPECT_THAT(table, HasSubstr(fmt::format("out of place over {} rows (2 spikes left out: over 1.2 times each "
                                           "neighbour's time)\n",
                                           rows - 2)));
  EXPECT_THAT(comparison_table(kept, Collective::kAllReduce, machine, "own.log"), Not(HasSubstr("spike")));
  // The largest size 2x its own: over its one neighbour, which is smaller, as every largest size
  // is: never a spike.
  row_of(64 << 20).out_of_place_us *= 2;
  const Comparison last =
      compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, spikes_left_out());
  EXPECT_EQ(last.spikes, 2u);
  EXPECT_FALSE(last.rows.back().spike);
}

TEST(NcclSweepComparison, EachTableAndTypeIsASweepOfItsOwn) {
  const Machine machine = dgx();
  const AchievedModel model(machine, Enabled::all());
  // Two runs in one log: the same sizes twice. The second is 1.3x slower and has a spike at
  // 64 KiB (2x); each is its own sweep, its spikes found among its own sizes, its shape its own.
  const MeasuredRun first = own_run(model, Collective::kAllReduce, 8, 4 << 20);
  MeasuredRun run = first;
  for (MeasuredRow r : first.rows) {
    r.out_of_place_us *= r.size == 65536 ? 2.6 : 1.3;
    r.in_place_us = *r.in_place_us * (r.size == 65536 ? 3 : 1);  // the spike's in place too: left out
    run.rows.push_back(r);
  }
  const Comparison two =
      compare_with_model(run, "two.log", Collective::kAllReduce, machine, Enabled::all(), {}, spikes_left_out());
  ASSERT_EQ(two.shapes.size(), 2u);
  EXPECT_EQ(two.shapes[0].repeat, 0u);
  EXPECT_EQ(two.shapes[1].repeat, 1u);
  EXPECT_EQ(two.spikes, 1u);
  EXPECT_TRUE(two.rows[first.rows.size() + 13].spike);  // 8 B x 2^13
  EXPECT_NEAR(two.shapes[1].measured.floor_us / two.shapes[0].measured.floor_us, 1.3, 1e-12);
  EXPECT_NEAR(two.in_place_error, 0, 1e-12);  // every in-place time the model's but the spike's
  const std::string two_table = comparison_table(two, Collective::kAllReduce, machine, "two.log");
  EXPECT_THAT(two_table, HasSubstr("# shape of the float sum rows (the log's table 2 of them), out of place"));
  // Rows in any order: the same sweep, by size.
  MeasuredRun reversed = first;
  std::reverse(reversed.rows.begin(), reversed.rows.end());
  const Comparison backwards =
      compare_with_model(reversed, "r.log", Collective::kAllReduce, machine, Enabled::all(), {}, {});
  const Comparison forwards =
      compare_with_model(first, "f.log", Collective::kAllReduce, machine, Enabled::all(), {}, {});
  EXPECT_EQ(*backwards.shapes[0].measured.half_peak_size_bytes, *forwards.shapes[0].measured.half_peak_size_bytes);
  EXPECT_EQ(backwards.shapes[0].model_choices.size(), 2u);  // Ring/LL, then NVLS/Simple: not a switch each row
  EXPECT_EQ(backwards.shapes[0].model_choices.front().first, 8u);
  // Types interleaved, doubles 10x slower than floats at each size: among all rows each double
  // would be a spike; within its own type none is.
  MeasuredRun mixed;
  for (const MeasuredRow& r : first.rows) {
    mixed.rows.push_back(r);
    MeasuredRow d = r;
    d.type = DataType::kDouble;
    d.out_of_place_us *= 10;
    d.in_place_us.reset();
    if (d.size % 8 == 0) mixed.rows.push_back(d);
  }
  const Comparison types =
      compare_with_model(mixed, "m.log", Collective::kAllReduce, machine, Enabled::all(), {}, spikes_left_out());
  EXPECT_EQ(types.spikes, 0u);
  EXPECT_EQ(types.shapes.size(), 2u);
}

TEST(NcclSweepComparison, TheTableShowsEachRowAndTheMeans) {
  Machine machine = dgx();
  machine.platform_latency_us = 2;
  MeasuredRun run;
  MeasuredRow small;
  small.size = 1024;
  small.out_of_place_us = 40;  // far above the model's: a platform's latency, named
  small.in_place_us = 40;
  MeasuredRow one_column = small;
  one_column.size = 2048;
  one_column.in_place_us.reset();
  run.rows = {one_column, small};
  const Comparison c = compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, {});
  const std::string table = comparison_table(c, Collective::kAllReduce, machine, "run.log");
  EXPECT_THAT(table, HasSubstr("--compare run.log: all_reduce on 1 node(s) x 8 H100"));
  EXPECT_THAT(table, HasSubstr("        1024     float     sum    -1       40.00"));
  EXPECT_THAT(table, HasSubstr("        2048     float     sum    -1       40.00"));
  EXPECT_THAT(table, ::testing::ContainsRegex("40.00 +[0-9.]+ +-[0-9.]+%           -  "));
  EXPECT_THAT(table, HasSubstr("Ring/LL\n"));
  EXPECT_THAT(table, HasSubstr("out of place over 2 rows, "));
  EXPECT_THAT(table, HasSubstr("in place over 1\n"));
  EXPECT_THAT(table, HasSubstr("under the measured ones"));
  // The floor's gap (its least time: 40 us, at 1 KiB, the smaller of the two that take it), and
  // what the option would be given the latency already set.
  const double gap = 40 - c.rows[1].model_out_of_place_us;
  EXPECT_THAT(table, HasSubstr(fmt::format("# the floor, 40.00 us at 1.0 KiB, is {:.2f} us over the model's there: "
                                           "--platform-latency-us {:.2f} would add it to every call\n",
                                           gap, 2 + gap)));
  // Where the host's launches set the model's time there, the launch that gives the floor: 40 us
  // over 8.
  const Comparison launched =
      compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, launches(8, 4.5));
  const std::string launched_table = comparison_table(launched, Collective::kAllReduce, machine, "run.log");
  EXPECT_THAT(launched_table, HasSubstr("# the floor, 40.00 us at 1.0 KiB, is over the model's there, the host's 8 "
                                        "launch(es) (36.00 us): --host-launch-us 5.00 would make them the measured "
                                        "floor\n"));
  EXPECT_THAT(launched_table, Not(HasSubstr("--platform-latency-us")));
  // From 1 MiB the bytes, not a latency, set the smallest size's time; and a model slower than
  // the run there says nothing either.
  run.rows = {small};
  run.rows[0].size = 1 << 20;
  run.rows[0].out_of_place_us = 1000;
  const Comparison large = compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, {});
  EXPECT_THAT(comparison_table(large, Collective::kAllReduce, machine, "run.log"), Not(HasSubstr("--platform")));
  EXPECT_THAT(comparison_table(large, Collective::kAllReduce, machine, "run.log"), HasSubstr("#   least time (from 1 "
                                                                                             "MiB: no latency floor): "
                                                                                             "1000.00 us at 1.0 MiB "
                                                                                             "/ "));
  run.rows[0].size = 1024;
  run.rows[0].out_of_place_us = 1;
  const Comparison fast = compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, {});
  const std::string fast_table = comparison_table(fast, Collective::kAllReduce, machine, "run.log");
  EXPECT_THAT(fast_table, Not(HasSubstr("--platform")));
  EXPECT_THAT(fast_table, HasSubstr("over the measured ones"));
  // A send/receive names NCCL's point-to-point path.
  const Comparison p2p = compare_with_model(run, "run.log", Collective::kSendRecv, machine, Enabled::all(), {}, {});
  EXPECT_THAT(comparison_table(p2p, Collective::kSendRecv, machine, "run.log"), HasSubstr("  P2P/LL\n"));
}

}  // namespace
}  // namespace chakrasim::system::nccl
