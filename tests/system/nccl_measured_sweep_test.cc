// A real nccl-tests run read back and set beside the model (measured_sweep.h).
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

// A log as nccl-tests prints it with MPI (mpirun -np 8, -g 1): two collectives' tables, MPI's and
// NCCL's own lines between them.
constexpr const char* kLog = R"(# nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807
# Collective test starting: alltoall_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20
#  Rank  0 Group  0 Pid 100 on node device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid 107 on node device  7 [0000:df:00] NVIDIA H100 80GB HBM3
        1024            32     float    none      -1    20.00    0.05    0.04      0    20.00    0.05    0.04    N/A
# Collective test starting: all_reduce_perf_mpi
# nThread 1 nGpus 2 minBytes 0 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20
#  Rank  0 Group  0 Pid 200 on node device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid 203 on node device  3 [0000:61:00] NVIDIA H100 80GB HBM3
node:200:200 [0] NCCL INFO 1024 Bytes -> Algo 1 proto 0 time 13.5
           0             0     float     sum      -1     0.00    0.00    0.00      0     0.00    0.00    0.00      0
        1024           256     float     sum      -1    14.00    0.07    0.13      0    14.50    0.07    0.12      0
     1048576        262144    double     max      -1    30.25   34.66   65.00      0    0.00    0.00    0.00    N/A
        2048           512  bfloat16     sum    15.00    0.14    0.26  1e-07    15.50    0.13    0.25  1e-07
# Out of bounds values : 0 OK
)";

TEST(NcclMeasuredSweep, ReadsTheCollectivesRowsFromALogOfSeveral) {
  const MeasuredRun run = read_nccl_tests_log(kLog, "run.log", Collective::kAllReduce);
  ASSERT_EQ(run.rows.size(), 4u);
  // Its own section's header: ranks 0 to 3, two GPUs a thread (the all-to-all's said 8 and 1).
  EXPECT_EQ(run.ranks, 4u);
  EXPECT_EQ(run.gpus_per_thread, 2u);
  EXPECT_EQ(run.rows[0].size, 0u);
  EXPECT_EQ(run.rows[1].size, 1024u);
  EXPECT_EQ(run.rows[1].type, DataType::kFloat);
  EXPECT_EQ(run.rows[1].op, ReduceOp::kSum);
  EXPECT_DOUBLE_EQ(run.rows[1].out_of_place_us, 14.0);
  EXPECT_EQ(run.rows[1].in_place_us, 14.5);
  EXPECT_EQ(run.rows[1].line, 13u);
  // A column of 0.00 is no time: in place left out.
  EXPECT_EQ(run.rows[2].type, DataType::kDouble);
  EXPECT_EQ(run.rows[2].op, ReduceOp::kMax);
  EXPECT_FALSE(run.rows[2].in_place_us.has_value());
  // Twelve fields: an older nccl-tests' row, without the root.
  EXPECT_EQ(run.rows[3].type, DataType::kBfloat16);
  EXPECT_DOUBLE_EQ(run.rows[3].out_of_place_us, 15.0);
  EXPECT_EQ(run.rows[3].in_place_us, 15.5);
  // The other section alone.
  const MeasuredRun a2a = read_nccl_tests_log(kLog, "run.log", Collective::kAllToAll);
  ASSERT_EQ(a2a.rows.size(), 1u);
  EXPECT_EQ(a2a.ranks, 8u);
  EXPECT_EQ(a2a.gpus_per_thread, 1u);
}

TEST(NcclMeasuredSweep, ALogWithoutSectionsIsAllOneCollectives) {
  // A table pasted alone, out-of-place half only (9 fields), a broadcast's root read.
  const MeasuredRun run = read_nccl_tests_log("     4096    1024   float   none   3   11.5   0.36   0.36   0\n",
                                              "pasted.txt", Collective::kBroadcast);
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_EQ(run.rows[0].root, 3u);
  EXPECT_FALSE(run.rows[0].in_place_us.has_value());
  EXPECT_FALSE(run.ranks.has_value());
  EXPECT_FALSE(run.gpus_per_thread.has_value());
}

TEST(NcclMeasuredSweep, SaysWhichLineIsNotARowAndWhy) {
  const auto error_of = [](const std::string& text, Collective c = Collective::kAllReduce) {
    try {
      read_nccl_tests_log(text, "bad.log", c);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of("#\n 1024 256 float sum -1 12 1 1 0 12\n"), HasSubstr("bad.log:2: a row of 10 fields; expected "
                                                                             "13"));
  EXPECT_THAT(error_of(" 1024 256 float sum -1 12.x 1 1 0 12 1 1 0\n"), HasSubstr("bad.log:1: out-of-place time "
                                                                                  "\"12.x\""));
  EXPECT_THAT(error_of(" 1024 256 float sum -1 12 1 1 0 inf 1 1 0\n"), HasSubstr("in-place time \"inf\""));
  EXPECT_THAT(error_of(" 1024 256 float plus -1 12 1 1 0 12 1 1 0\n"), HasSubstr("redop \"plus\""));
  EXPECT_THAT(error_of(" 1024 256 float sum -2 12 1 1 0 12 1 1 0\n"), HasSubstr("root \"-2\""));
  EXPECT_THAT(error_of(" 1024 256 float sum -1 0 1 1 0 12 1 1 0\n"), HasSubstr("1024 bytes in 0 us"));
  EXPECT_THAT(error_of("nothing here\n"), HasSubstr("bad.log: no nccl-tests rows of all_reduce"));
  std::string many;
  for (int i = 0; i <= 100000; ++i) many += "8 2 float sum -1 10 0 0 0\n";
  EXPECT_THAT(error_of(many), HasSubstr("bad.log: more than 100000 rows of all_reduce"));
  EXPECT_EQ(read_nccl_tests_log(many.substr(0, many.size() - 26), "ok.log", Collective::kAllReduce).rows.size(),
            100000u);
  EXPECT_THAT(error_of(kLog, Collective::kSendRecv), HasSubstr("bad.log: no sendrecv table; its \"Collective test "
                                                               "starting\" lines name all_reduce, alltoall"));
}

TEST(NcclMeasuredSweep, TheErrorIsTheGeometricMeanOfTheRatios) {
  // The model's own times as the measured ones: no error. Then 10% slower and 10% faster
  // measured times: |ln(1/1.1)| and |ln(1/0.9)| averaged, in place only where printed.
  const Machine machine = dgx();
  const Enabled enabled = Enabled::all();
  const AchievedModel model(machine, enabled);
  SweepOptions sweep;
  sweep.min_bytes = 1024;
  sweep.max_bytes = 2048;
  const std::vector<SweepRow> own = run_sweep(model, sweep);
  MeasuredRun run;
  for (const SweepRow& r : own) {
    MeasuredRow m;
    m.size = r.size;
    m.out_of_place_us = r.out_of_place.time_us;
    m.in_place_us = r.in_place.time_us;
    run.rows.push_back(m);
  }
  const Comparison exact = compare_with_model(run, Collective::kAllReduce, machine, enabled, {}, 0);
  ASSERT_EQ(exact.rows.size(), 2u);
  EXPECT_NEAR(exact.out_of_place_error, 0, 1e-12);
  EXPECT_NEAR(exact.mean_signed_error, 0, 1e-12);
  EXPECT_EQ(exact.rows[0].choice.algorithm, Algorithm::kRing);
  run.rows[0].out_of_place_us *= 1.1;
  run.rows[1].out_of_place_us *= 0.9;
  run.rows[1].in_place_us.reset();
  MeasuredRow empty;  // a size of no element: nothing to compare
  run.rows.push_back(empty);
  const Comparison off = compare_with_model(run, Collective::kAllReduce, machine, enabled, {}, 0);
  ASSERT_EQ(off.rows.size(), 2u);
  EXPECT_NEAR(off.out_of_place_error, std::exp((std::log(1.1) + std::log(1 / 0.9)) / 2) - 1, 1e-12);
  EXPECT_NEAR(off.mean_signed_error, std::exp((std::log(1 / 1.1) + std::log(1 / 0.9)) / 2) - 1, 1e-12);
  EXPECT_EQ(off.in_place_rows, 1u);
  EXPECT_NEAR(off.in_place_error, 0, 1e-12);
  // A send/receive of no bytes still runs in the model, but nccl-tests prints no time for it: left out.
  MeasuredRun nothing;
  nothing.rows.push_back(empty);
  const Comparison none = compare_with_model(nothing, Collective::kSendRecv, machine, enabled, {}, 0);
  EXPECT_TRUE(none.rows.empty());
  EXPECT_EQ(none.out_of_place_error, 0);
  // A thread launching several GPUs' calls: no call under its launches.
  const Comparison launched = compare_with_model(run, Collective::kAllReduce, machine, enabled, {}, 100);
  EXPECT_EQ(launched.rows[0].model_out_of_place_us, 100);
}

TEST(NcclMeasuredSweep, TheTableShowsEachRowAndTheMeans) {
  const Machine machine = dgx();
  MeasuredRun run;
  MeasuredRow small;
  small.size = 1024;
  small.out_of_place_us = 40;  // far above the model's: a platform's latency, named
  small.in_place_us = 40;
  run.rows.push_back(small);
  const Comparison c = compare_with_model(run, Collective::kAllReduce, machine, Enabled::all(), {}, 0);
  const std::string table = comparison_table(c, Collective::kAllReduce, machine, "run.log");
  EXPECT_THAT(table, HasSubstr("--compare run.log: all_reduce on 1 node(s) x 8 H100"));
  EXPECT_THAT(table, HasSubstr("        1024     float     sum    -1      40.00"));
  EXPECT_THAT(table, HasSubstr("Ring/LL\n"));
  EXPECT_THAT(table, HasSubstr("out of place over 1 sizes, "));
  EXPECT_THAT(table, HasSubstr("under the measured ones"));
  EXPECT_THAT(table, HasSubstr("more than the model: a platform's own latency (--platform-latency-us)"));
  // From 1 MiB the bytes, not a latency, set the first size's time: no such hint.
  run.rows[0].size = 1 << 20;
  run.rows[0].out_of_place_us = 1000;
  const Comparison large = compare_with_model(run, Collective::kAllReduce, machine, Enabled::all(), {}, 0);
  EXPECT_THAT(comparison_table(large, Collective::kAllReduce, machine, "run.log"), Not(HasSubstr("--platform")));
}

}  // namespace
}  // namespace chakrasim::system::nccl
