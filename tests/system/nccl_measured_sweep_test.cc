// A real nccl-tests run read back and set beside the model (measured_sweep.h).
#include <algorithm>
#include <cmath>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "system/nccl/measured_sweep.h"
#include "system/nccl/sweep.h"
#include "system/nccl_test_support.h"

namespace chakrasim::system::nccl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A log as nccl-tests 2.17 prints it with MPI: three tests' tables (one the model does not have),
// with MPI's and NCCL's own lines between.
constexpr const char* kLog = R"(# nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807
# Collective test starting: alltoall_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid 100 on nodeA device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid 107 on nodeA device  7 [0000:df:00] NVIDIA H100 80GB HBM3
        1024            32     float    none      -1    20.00    0.05    0.04      0    20.00    0.05    0.04    N/A
# Collective test concluded: alltoall_perf
# Collective test starting: gather_perf
        1024            32     float    none       0    99.00    0.01    0.01      0    99.00    0.01    0.01    N/A
# Collective test starting: all_reduce_perf_mpi
# nThread 1 nGpus 2 minBytes 0 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid 200 on nodeA device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid 201 on nodeA device  1 [0000:43:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid 300 on nodeB device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
node:200:200 [0] NCCL INFO 1024 Bytes -> Algo 1 proto 0 time 13.5
           0             0     float     sum      -1     0.00    0.00    0.00      0     0.00    0.00    0.00      0
        1024           256     float     sum      -1    14.00    0.07    0.13      0    14.50    0.07    0.12      0
     1048576        262144    double     max      -1    30.25   34.66   65.00      0    30.50   34.38   64.46      0
        2048           512  bfloat16     sum    15.00    0.14    0.26  1e-07    15.50    0.13    0.25  1e-07
# Out of bounds values : 0 OK
)";

std::string error_of(const std::string& text, Collective c = Collective::kAllReduce) {
  try {
    read_nccl_tests_log(text, "bad.log", c);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NcclMeasuredSweep, ReadsTheCollectivesRowsFromALogOfSeveral) {
  const MeasuredRun run = read_nccl_tests_log(kLog, "run.log", Collective::kAllReduce);
  ASSERT_EQ(run.rows.size(), 4u);
  // Its own section's header: 3 ranks on 2 hosts, two GPUs a thread (the all-to-all's said 1).
  EXPECT_EQ(run.ranks, 3u);
  EXPECT_EQ(run.hosts, 2u);
  EXPECT_EQ(run.ranks_per_host, 2u);
  EXPECT_EQ(run.gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(run.gpus_per_thread, 2u);
  EXPECT_EQ(run.rows[0].size, 0u);
  EXPECT_EQ(run.rows[1].size, 1024u);
  EXPECT_EQ(run.rows[1].type, DataType::kFloat);
  EXPECT_EQ(run.rows[1].op, ReduceOp::kSum);
  EXPECT_DOUBLE_EQ(run.rows[1].out_of_place_us, 14.0);
  EXPECT_EQ(run.rows[1].in_place_us, 14.5);
  EXPECT_EQ(run.rows[1].line, 17u);
  EXPECT_EQ(run.rows[2].type, DataType::kDouble);
  EXPECT_EQ(run.rows[2].op, ReduceOp::kMax);
  // A size of no element: nccl-tests' 0.00 in place is no time.
  EXPECT_FALSE(run.rows[0].in_place_us.has_value());
  // Twelve fields: an older nccl-tests' row, without the root.
  EXPECT_EQ(run.rows[3].type, DataType::kBfloat16);
  EXPECT_DOUBLE_EQ(run.rows[3].out_of_place_us, 15.0);
  EXPECT_EQ(run.rows[3].in_place_us, 15.5);
  // The all-to-all's section alone, closed by its "concluded" line; the gather test (which the
  // model has not) is read for no collective.
  const MeasuredRun a2a = read_nccl_tests_log(kLog, "run.log", Collective::kAllToAll);
  ASSERT_EQ(a2a.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(a2a.rows[0].out_of_place_us, 20.0);
  EXPECT_EQ(a2a.ranks, 8u);
  EXPECT_EQ(a2a.gpus_per_thread, 1u);
  // A test the model has not, right after the collective's table; rows after its "concluded" line.
  const std::string row = " 1024 256 float sum -1 12 1 1 0 12 1 1 0\n";
  const std::string odd = " 1024 256 float sum -1 99 1 1 0 99 1 1 0\n";
  for (const char* after : {"# Collective test starting: hypercube_perf\n", "# Collective test concluded: "
                                                                            "all_reduce\n"}) {
    const MeasuredRun run_then =
        read_nccl_tests_log("# Collective test starting: all_reduce_perf\n" + row + after + odd, "t.log",
                            Collective::kAllReduce);
    ASSERT_EQ(run_then.rows.size(), 1u) << after;
    EXPECT_DOUBLE_EQ(run_then.rows[0].out_of_place_us, 12.0) << after;
  }
  EXPECT_THAT(error_of(kLog, Collective::kAllGather), HasSubstr("bad.log: no all_gather table; its \"Collective test "
                                                                "starting\" lines name all_reduce, "
                                                                "alltoall, gather"));
}

TEST(NcclMeasuredSweep, ReadsThroughWhatALauncherPutsBeforeEachLine) {
  // Open MPI's --tag-output, MPICH's tag, srun --label.
  for (const char* prefix : {"[1,0]<stdout>:", "[0] ", "0: "}) {
    const std::string log = std::string(prefix) + "# nThread 1 nGpus 1 minBytes 8\n" + prefix +
                            "        1024           256     float     sum      -1    14.00    0.07    0.13      0    "
                            "14.50    0.07    0.12      0\n";
    const MeasuredRun run = read_nccl_tests_log(log, "tagged.log", Collective::kAllReduce);
    ASSERT_EQ(run.rows.size(), 1u) << prefix;
    EXPECT_DOUBLE_EQ(run.rows[0].out_of_place_us, 14.0) << prefix;
  }
}

TEST(NcclMeasuredSweep, ReadsALogWrittenWithCarriageReturns) {
  const MeasuredRun run = read_nccl_tests_log("# nThread 1 nGpus 4 minBytes 8\r\n"
                                              " 1024 256 float sum -1 14 0.07 0.13 0 14.5 0.07 0.12 0\r\n",
                                              "crlf.log", Collective::kAllReduce);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.gpus_per_thread, 4u);
  EXPECT_EQ(run.rows[0].in_place_us, 14.5);
}

TEST(NcclMeasuredSweep, ReadsEachLayoutNcclTestsHasPrinted) {
  const auto one = [](const std::string& row, Collective c) {
    return read_nccl_tests_log(row + "\n", "rows.log", c).rows.at(0);
  };
  // A timestamp after the row (-S 1); each half's iterations' spread (-I 1): in place at 13.
  const MeasuredRow stamped =
      one(" 1024 256 float sum -1 14 0.07 0.13 0 14.5 0.07 0.12 0 2025-06-01 12:00:00", Collective::kAllReduce);
  EXPECT_EQ(stamped.in_place_us, 14.5);
  const MeasuredRow spread =
      one(" 1024 256 float sum -1 14 0.07 0.13 0 13 15 15 1.0 14.5 0.07 0.12 0 14 15 15 1.0", Collective::kAllReduce);
  EXPECT_DOUBLE_EQ(spread.out_of_place_us, 14.0);
  EXPECT_EQ(spread.in_place_us, 14.5);
  // Before the root column: an all-gather printed no operation; a broadcast its root there.
  const MeasuredRow gather = one(" 8192 256 float 21.0 0.39 0.34 0 20.5 0.40 0.35 0", Collective::kAllGather);
  EXPECT_DOUBLE_EQ(gather.out_of_place_us, 21.0);
  EXPECT_EQ(gather.in_place_us, 20.5);
  // An older all-to-all's operation column is not held to today's "none".
  EXPECT_DOUBLE_EQ(one(" 8192 256 float sum 21.0 0.39 0.34 0 20.5 0.40 0.35 0", Collective::kAllToAll).out_of_place_us,
                   21.0);
  const MeasuredRow broadcast = one(" 4096 1024 float 3 11.5 0.36 0.36 0 11.6 0.35 0.35 0", Collective::kBroadcast);
  EXPECT_EQ(broadcast.root, 3u);
  EXPECT_DOUBLE_EQ(broadcast.out_of_place_us, 11.5);
  // The out-of-place half of each: today's (a broadcast's root at 4), and the older two.
  const MeasuredRow half = one(" 4096 1024 float none 3 11.5 0.36 0.36 0", Collective::kBroadcast);
  EXPECT_EQ(half.root, 3u);
  EXPECT_FALSE(half.in_place_us.has_value());
  EXPECT_DOUBLE_EQ(one(" 4096 1024 float sum 11.5 0.36 0.36 0", Collective::kAllReduce).out_of_place_us, 11.5);
  EXPECT_DOUBLE_EQ(one(" 4096 1024 float 11.5 0.36 0.36 0", Collective::kSendRecv).out_of_place_us, 11.5);
  // A log of no header: no ranks, no -g.
  const MeasuredRun bare =
      read_nccl_tests_log(" 4096 1024 float none 3 11.5 0.36 0.36 0\n", "b", Collective::kBroadcast);
  EXPECT_FALSE(bare.ranks.has_value());
  EXPECT_FALSE(bare.gpus_per_thread.has_value());
}

TEST(NcclMeasuredSweep, SaysWhichLineIsNotARowAndWhy) {
  EXPECT_THAT(error_of("#\n 1024 256 float sum -1 12 1 1 0 12\n"), HasSubstr("bad.log:2: a row of 10 fields; expected "
                                                                             "13"));
  EXPECT_THAT(error_of(" 1024 256 float sum -1 12.x 1 1 0 12 1 1 0\n"), HasSubstr("bad.log:1: out-of-place time "
                                                                                  "\"12.x\""));
  EXPECT_THAT(error_of(" 1024 256 float sum -1 12 1 1 0 inf 1 1 0\n"), HasSubstr("in-place time \"inf\""));
  EXPECT_THAT(error_of(" 1024 256 float plus -1 12 1 1 0 12 1 1 0\n"), HasSubstr("redop \"plus\""));
  EXPECT_THAT(error_of(" 1024 256 float sum -1 0 1 1 0 12 1 1 0\n"), HasSubstr("1024 bytes in 0 us"));
  EXPECT_THAT(error_of("nothing here\n"), HasSubstr("bad.log: no nccl-tests rows of all_reduce"));
  // Another collective's table, where the log does not name it: by its operation and its root.
  EXPECT_THAT(error_of(" 1024 256 float none -1 12 1 1 0 12 1 1 0\n"), HasSubstr("bad.log:1: redop \"none\"; expected "
                                                                                 "one of sum"));
  EXPECT_THAT(error_of(" 1024 32 float sum -1 12 1 1 0 12 1 1 0\n", Collective::kAllGather),
              HasSubstr("redop \"sum\"; expected none for all_gather (is this another collective's table?)"));
  EXPECT_THAT(error_of(" 1024 256 float sum 0 12 1 1 0 12 1 1 0\n"), HasSubstr("root \"0\"; expected -1"));
  EXPECT_THAT(error_of(" 1024 256 float none -1 12 1 1 0 12 1 1 0\n", Collective::kBroadcast), HasSubstr("root \"-1\"; "
                                                                                                         "expected a "
                                                                                                         "rank for "
                                                                                                         "broadcast"));
  // Timed as the model does not: CUDA graphs, calls aggregated.
  EXPECT_THAT(error_of("# nThread 1 nGpus 1 iters: 20 agg iters: 1 validation: 1 graph: 1\n"), HasSubstr("bad.log:1: a "
                                                                                                         "run with "
                                                                                                         "CUDA graphs "
                                                                                                         "(graph: 1)"));
  EXPECT_THAT(error_of("# nThread 1 nGpus 1 iters: 20 agg iters: 4 validation: 1 graph: 0\n"), HasSubstr("bad.log:1: "
                                                                                                         "calls "
                                                                                                         "aggregated "
                                                                                                         "in groups of "
                                                                                                         "4"));
  // Two runs of the collective on other -g; a -g of none.
  const std::string row = " 1024 256 float sum -1 12 1 1 0 12 1 1 0\n";
  EXPECT_THAT(error_of("# nThread 1 nGpus 1\n" + row + "# nThread 1 nGpus 8\n" + row), HasSubstr("bad.log:4: a table "
                                                                                                 "of all_reduce run "
                                                                                                 "with -g 8 (nGpus, "
                                                                                                 "line 3) after one "
                                                                                                 "with -g 1 (line 1)"));
  EXPECT_THAT(error_of("# nThread 1 nGpus 0\n" + row), HasSubstr("bad.log: nGpus 0; expected 1 or more"));
  // A bound on rows, and on the fields a line is split into.
  std::string many;
  for (int i = 0; i <= 100000; ++i) many += "8 2 float sum -1 10 0 0 0\n";
  EXPECT_THAT(error_of(many), HasSubstr("bad.log: more than 100000 rows of all_reduce"));
  EXPECT_EQ(read_nccl_tests_log(many.substr(0, many.size() - 26), "ok.log", Collective::kAllReduce).rows.size(),
            100000u);
  std::string wide = " 1024 256 float sum -1";
  for (int i = 0; i < 1000; ++i) wide += " 1";
  EXPECT_THAT(error_of(wide), HasSubstr("a row of 64 fields"));
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

TEST(NcclMeasuredSweep, TheErrorIsTheGeometricMeanOfTheRatios) {
  // The model's own times as the measured ones: no error. Then 10% slower and 10% faster
  // measured times: |ln(1/1.1)| and |ln(1/0.9)| averaged, in place only where printed.
  const Machine machine = dgx();
  const Enabled enabled = Enabled::all();
  MeasuredRun run = own_run(AchievedModel(machine, enabled), Collective::kAllReduce, 1024, 2048);
  const Comparison exact = compare_with_model(run, "own.log", Collective::kAllReduce, machine, enabled, {}, 0);
  ASSERT_EQ(exact.rows.size(), 2u);
  EXPECT_NEAR(exact.out_of_place_error, 0, 1e-12);
  EXPECT_NEAR(exact.mean_signed_error, 0, 1e-12);
  EXPECT_EQ(exact.rows[0].choice.algorithm, Algorithm::kRing);
  run.rows[0].out_of_place_us *= 1.1;
  run.rows[1].out_of_place_us *= 0.9;
  run.rows[1].in_place_us.reset();
  run.rows.push_back(MeasuredRow{});  // a size of no element: nothing to compare
  const Comparison off = compare_with_model(run, "own.log", Collective::kAllReduce, machine, enabled, {}, 0);
  ASSERT_EQ(off.rows.size(), 2u);
  EXPECT_NEAR(off.out_of_place_error, std::exp((std::log(1.1) + std::log(1 / 0.9)) / 2) - 1, 1e-12);
  EXPECT_NEAR(off.mean_signed_error, std::exp((std::log(1 / 1.1) + std::log(1 / 0.9)) / 2) - 1, 1e-12);
  EXPECT_EQ(off.in_place_rows, 1u);
  EXPECT_NEAR(off.in_place_error, 0, 1e-12);
  // A thread launching several GPUs' calls: no call under its launches.
  const Comparison launched = compare_with_model(run, "own.log", Collective::kAllReduce, machine, enabled, {}, 100);
  EXPECT_EQ(launched.rows[0].model_out_of_place_us, 100);
  // Types and operations each get the algorithms they leave NCCL: an average runs no NVLS.
  MeasuredRun large = own_run(AchievedModel(machine, enabled), Collective::kAllReduce, 1 << 30, 1 << 30);
  large.rows.push_back(large.rows[0]);
  large.rows[1].op = ReduceOp::kAvg;
  const Comparison ops = compare_with_model(large, "ops.log", Collective::kAllReduce, machine, enabled, {}, 0);
  EXPECT_EQ(ops.rows[0].choice.algorithm, Algorithm::kNvls);
  EXPECT_EQ(ops.rows[1].choice.algorithm, Algorithm::kRing);
}

TEST(NcclMeasuredSweep, ARowTheMachineCannotHaveRunIsAnError) {
  const Machine machine = dgx();
  const auto error_of_compare = [&](const MeasuredRun& run, Collective c, const Machine& m) {
    try {
      compare_with_model(run, "run.log", c, m, Enabled::all(), {}, 0);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  MeasuredRun run;
  MeasuredRow row;
  row.size = 480;  // an all-gather of 6 ranks' 80-byte shards: 8 ranks' shards are 16-byte multiples
  row.out_of_place_us = 20;
  row.line = 7;
  run.rows.push_back(row);
  EXPECT_THAT(error_of_compare(run, Collective::kAllGather, machine), HasSubstr("run.log:7: 480 bytes of float, which "
                                                                                "nccl-tests prints only on other "
                                                                                "numbers of ranks (on the "
                                                                                "machine's 8 it prints 384)"));
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

TEST(NcclMeasuredSweep, EachTypesRowsHaveTheirShapeBesideTheModels) {
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
  const Comparison c = compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, 0);
  ASSERT_EQ(c.shapes.size(), 2u);
  EXPECT_EQ(c.shapes[0].type, DataType::kFloat);
  EXPECT_EQ(c.shapes[1].type, DataType::kDouble);
  const SweepShape& measured = c.shapes[0].measured;
  const SweepShape& model = c.shapes[0].model;
  EXPECT_EQ(measured.peak_size, model.peak_size);
  EXPECT_DOUBLE_EQ(measured.peak_algbw_gb_per_s, model.peak_algbw_gb_per_s);
  EXPECT_DOUBLE_EQ(measured.floor_us, model.floor_us);
  ASSERT_TRUE(measured.half_peak_size.has_value());
  EXPECT_DOUBLE_EQ(*measured.half_peak_size, *model.half_peak_size);
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
  const Comparison slow = compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, 0);
  EXPECT_NEAR(slow.shapes[0].model.floor_us / slow.shapes[0].measured.floor_us, 1 / 1.1, 1e-12);
  EXPECT_NEAR(*slow.shapes[0].model.half_peak_size / *slow.shapes[0].measured.half_peak_size, 1, 1e-9);
  const std::string table = comparison_table(slow, Collective::kAllReduce, machine, "own.log");
  EXPECT_THAT(table, HasSubstr("# shape of the float sum rows, out of place, measured / model:\n"));
  EXPECT_THAT(table, HasSubstr(fmt::format("#   latency floor (the least time, at {} B): {:.2f} / {:.2f} us (-9.1%)\n",
                                           slow.shapes[0].measured.floor_size, 1.1 * least, least)));
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

TEST(NcclMeasuredSweep, SpikesLeftOutAreRowsOverBothNeighbours) {
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
  const Comparison kept = compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, 0);
  EXPECT_EQ(kept.spikes, 0u);
  EXPECT_NEAR(kept.out_of_place_error, std::exp((2 * std::log(3.0) + std::log(1.1)) / static_cast<double>(rows)) - 1,
              1e-12);
  // Left out: two spikes, the means over the other rows.
  const Comparison left =
      compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, 0, true);
  EXPECT_EQ(left.spikes, 2u);
  ASSERT_EQ(left.rows.size(), rows);
  for (const ComparedRow& r : left.rows) {
    EXPECT_EQ(r.spike, r.measured.size == 8 || r.measured.size == (16u << 20)) << r.measured.size;
  }
  EXPECT_NEAR(left.out_of_place_error, std::exp(std::log(1.1) / static_cast<double>(rows - 2)) - 1, 1e-12);
  EXPECT_NEAR(left.mean_signed_error, std::exp(-std::log(1.1) / static_cast<double>(rows - 2)) - 1, 1e-12);
  // The shape without them: the half point where the model has it (both sides leave the row out);
  // with 16 MiB in, the measured half moves past it.
  ASSERT_TRUE(left.shapes[0].measured.half_peak_size.has_value());
  EXPECT_DOUBLE_EQ(*left.shapes[0].measured.half_peak_size, *left.shapes[0].model.half_peak_size);
  EXPECT_GT(*kept.shapes[0].measured.half_peak_size, 16u << 20);
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
      compare_with_model(run, "own.log", Collective::kAllReduce, machine, Enabled::all(), {}, 0, true);
  EXPECT_EQ(last.spikes, 2u);
  EXPECT_FALSE(last.rows.back().spike);
}

TEST(NcclMeasuredSweep, TheTableShowsEachRowAndTheMeans) {
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
  const Comparison c = compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, 0);
  const std::string table = comparison_table(c, Collective::kAllReduce, machine, "run.log");
  EXPECT_THAT(table, HasSubstr("--compare run.log: all_reduce on 1 node(s) x 8 H100"));
  EXPECT_THAT(table, HasSubstr("        1024     float     sum    -1       40.00"));
  EXPECT_THAT(table, HasSubstr("        2048     float     sum    -1       40.00"));
  EXPECT_THAT(table, ::testing::ContainsRegex("40.00 +[0-9.]+ +-[0-9.]+%           -  "));
  EXPECT_THAT(table, HasSubstr("Ring/LL\n"));
  EXPECT_THAT(table, HasSubstr("out of place over 2 rows, "));
  EXPECT_THAT(table, HasSubstr("in place over 1\n"));
  EXPECT_THAT(table, HasSubstr("under the measured ones"));
  // The smallest size's gap, what the option would be given the latency already set.
  const double gap = 40 - c.rows[1].model_out_of_place_us;
  EXPECT_THAT(table, HasSubstr(fmt::format("--platform-latency-us {:.2f} would add it", 2 + gap)));
  // Where the host's launches set the model's time there, they are what to look at.
  const Comparison launched =
      compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, 36);
  const std::string launched_table = comparison_table(launched, Collective::kAllReduce, machine, "run.log");
  EXPECT_THAT(launched_table, HasSubstr("the host's launches (36.00 us); --host-launch-us sets a GPU's launch\n"));
  EXPECT_THAT(launched_table, Not(HasSubstr("--platform-latency-us")));
  // A log that names its -g: the launch that would give the measured time, 40 us over 8.
  run.gpus_per_thread = 8;
  const Comparison named = compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, 36);
  EXPECT_THAT(comparison_table(named, Collective::kAllReduce, machine, "run.log"), HasSubstr("--host-launch-us sets a "
                                                                                             "GPU's launch: 5.00 would "
                                                                                             "make them the measured "
                                                                                             "40.00 (nGpus 8)\n"));
  run.gpus_per_thread.reset();
  // From 1 MiB the bytes, not a latency, set the smallest size's time; and a model slower than
  // the run there says nothing either.
  run.rows = {small};
  run.rows[0].size = 1 << 20;
  run.rows[0].out_of_place_us = 1000;
  const Comparison large = compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, 0);
  EXPECT_THAT(comparison_table(large, Collective::kAllReduce, machine, "run.log"), Not(HasSubstr("--platform")));
  run.rows[0].size = 1024;
  run.rows[0].out_of_place_us = 1;
  const Comparison fast = compare_with_model(run, "run.log", Collective::kAllReduce, machine, Enabled::all(), {}, 0);
  const std::string fast_table = comparison_table(fast, Collective::kAllReduce, machine, "run.log");
  EXPECT_THAT(fast_table, Not(HasSubstr("--platform")));
  EXPECT_THAT(fast_table, HasSubstr("over the measured ones"));
  // A send/receive names NCCL's point-to-point path.
  const Comparison p2p = compare_with_model(run, "run.log", Collective::kSendRecv, machine, Enabled::all(), {}, 0);
  EXPECT_THAT(comparison_table(p2p, Collective::kSendRecv, machine, "run.log"), HasSubstr("  P2P/LL\n"));
}

}  // namespace
}  // namespace chakrasim::system::nccl
