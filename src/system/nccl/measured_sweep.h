// A real nccl-tests run beside the model: its table read back, each row timed by the model at the
// same size, type, operation and root, and the error in time that docs/nccl.md reports for each
// published sweep (exp of the mean |ln(model / measured)| over the rows, less 1), so a user can
// check the model on their own machine, and set its options from what they see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "system/nccl/achieved.h"
#include "system/nccl/call_types.h"
#include "system/nccl/sweep_shape.h"

namespace chakrasim::system::nccl {

// One row of nccl-tests' table: its size, type, operation and root, and its two times.
struct MeasuredRow {
  std::uint64_t size = 0;  // bytes, as printed
  DataType type = DataType::kFloat;
  ReduceOp op = ReduceOp::kSum;  // "none" (collectives without one) reads as sum
  std::uint32_t root = 0;        // -1 (no root) reads as 0
  double out_of_place_us = 0;
  std::optional<double> in_place_us;  // absent where the run printed one column only
  std::size_t line = 0;               // in the log, from 1
};

// What a log says of the run besides its rows, from nccl-tests' header (where printed).
struct MeasuredRun {
  std::vector<MeasuredRow> rows;
  std::optional<std::uint32_t> gpus_per_thread;  // "nGpus N": nccl-tests' -g
  // Its "# Rank" lines: the ranks, the hosts they name, the most ranks on one host, and the GPU
  // the first names ("NVIDIA H100 80GB HBM3").
  std::optional<std::uint32_t> ranks, hosts, ranks_per_host;
  std::string gpu_name;
};

// The rows of `collective` in nccl-tests' output `text` (`file` names it in errors). A log may
// hold several tables, each after its header ("# nThread ..."), and from nccl-tests 2.16.7 after
// a "# Collective test starting: NAME_perf" line, with other lines between (MPI's, NCCL's INFO);
// a prefix MPI or srun puts on every line ("[1,0]<stdout>:", "[0] ", "0: ") is read through. A
// row is a line whose first field is a size and whose third is a type nccl-tests names. Its
// fields, by count: 13 (size, count, type, redop, root, then time, algbw, busbw, #wrong out of
// place and in place), 15 (and a timestamp, -S 1), 21 and 23 (each half with the iterations'
// spread, -I 1); as nccl-tests printed them before its root column, 12 (redop, or a broadcast's
// root, where the root is now) and 11 (no redop: all-gather, send/receive); and the out-of-place
// half of any. Throws Error naming the file and line for a row that is none of these or does not
// fit `collective` (a redop it has none of, a root it takes none of, as today's rows print them:
// another collective's table), for a second table of `collective` on another -g, for a table
// timed as the model does not (CUDA graphs, aggregated calls), and for a log with no row of
// `collective`.
MeasuredRun read_nccl_tests_log(std::string_view text, const std::string& file, Collective collective);

struct ComparedRow {
  MeasuredRow measured;
  double model_out_of_place_us = 0, model_in_place_us = 0;
  TuningModel::Choice choice;  // the model's, out of place
  // A noise spike, left out of the means and the shape (compare_with_model's leave_out_spikes).
  bool spike = false;
};

// The out-of-place column's shape, measured and modelled, over the rows of one type, operation and
// root (a log may hold several: nccl-tests' -d all, -o all).
struct ComparedShape {
  DataType type = DataType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  std::uint32_t root = 0;
  SweepShape measured, model;
};

struct Comparison {
  std::vector<ComparedRow> rows;      // sizes of no element left out: NCCL runs nothing for them
  std::vector<ComparedShape> shapes;  // in the order the log first has each type, operation and root
  // exp(mean |ln(model / measured)|) - 1 over the rows (in place: those that print it).
  double out_of_place_error = 0, in_place_error = 0;
  std::size_t in_place_rows = 0;
  std::size_t spikes = 0;             // rows left out as noise spikes
  double mean_signed_error = 0;       // exp(mean ln(model / measured)) - 1, out of place
  double host_issue_us = 0;           // the floor the rows were timed with
  std::uint32_t gpus_per_thread = 0;  // the log's nGpus (nccl-tests' -g), 0 where it prints none
};

// The model's time for each of `run`'s rows, on `machine` with `enabled` and `efficiencies` (less
// the algorithms each row's type and operation rule out, restrict_to_call), no call shorter than
// `host_issue_us` (a thread launching several GPUs' calls, SweepOptions). With `leave_out_spikes`,
// a row whose out-of-place time is over 1.2 times that of each of its neighbours in size (of its
// type, operation and root; the smallest size's one neighbour; never the largest size, whose one
// neighbour is smaller and so always faster) is a noise spike: a sweep's time only grows with its
// size, so a row that rises and falls back is another job's or the host's doing, not the
// collective's. It stays in the table, marked, out of the means and the shape. Throws Error
// naming the file and line of a row NCCL would refuse (check_call), whose size nccl-tests would
// not print on the machine's ranks (its log came from other ranks), or whose root is not one of
// them; and where no row is left to compare.
Comparison compare_with_model(const MeasuredRun& run, const std::string& file, Collective collective,
                              const Machine& machine, const Enabled& enabled, const Efficiencies& efficiencies,
                              double host_issue_us, bool leave_out_spikes = false);

// The comparison as a table: each row's measured and modelled time and their error, the
// geometric means, and each shape beside the model's, with the sizes at which the model's choice
// changes; headed with the file and the machine. Where the smallest size, under 1 MiB,
// takes longer than the model, it says what --platform-latency-us would make of it (or, where
// the host's launches bound the model's time there, --host-launch-us, and with the log's -g the
// launch that would give the measured time).
std::string comparison_table(const Comparison& comparison, Collective collective, const Machine& machine,
                             const std::string& file);

}  // namespace chakrasim::system::nccl
