// A real nccl-tests run read back (measured_sweep.h).
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
  // A time too small for its bytes to have a rate, in either column.
  EXPECT_THAT(error_of(" 1024 256 float sum -1 1e-320 1 1 0 12 1 1 0\n"), HasSubstr("1024 bytes in 1e-320 us; expected "
                                                                                    "a measured time"));
  EXPECT_THAT(error_of(" 1024 256 float sum -1 12 1 1 0 1e-320 1 1 0\n"), HasSubstr("1024 bytes in 1e-320 us in place; "
                                                                                    "expected a measured time"));
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
  // A row that cannot be read is an error, not a row left out of the comparison.
  EXPECT_THAT(error_of(row + " 2048 512 quux sum -1 12 1 1 0 12 1 1 0\n"), HasSubstr("bad.log:2: type \"quux\"; "
                                                                                     "expected one of nccl-tests' "
                                                                                     "types (int8,"));
  EXPECT_THAT(error_of(row + " 2O48 512 float sum -1 12 1 1 0 12 1 1 0\n"), HasSubstr("bad.log:2: size \"2O48\""));
  // A log's control bytes are not echoed into the message.
  EXPECT_THAT(error_of(std::string(" 1024 256 fl\0at sum -1 12 1 1 0 12 1 1 0\n", 42)), HasSubstr("type \"fl?at\""));
  // Nor is a size or a time past what a run measures read as one.
  EXPECT_THAT(error_of(" 9223372036854775808 256 float sum -1 12 1 1 0 12 1 1 0\n"), HasSubstr("expected bytes, at "
                                                                                               "most 2^62"));
  EXPECT_THAT(error_of(" 1024 256 float sum -1 1e308 1 1 0 12 1 1 0\n"), HasSubstr("out-of-place time \"1e308\"; "
                                                                                   "expected microseconds, 0 or more "
                                                                                   "and under 10^12"));
}

}  // namespace
}  // namespace chakrasim::system::nccl
