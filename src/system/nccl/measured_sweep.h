// A real nccl-tests run beside the model: its table read back, each row timed by the model at the
// same size, type, operation and root, and the error in time that docs/nccl.md reports for each
// published sweep (the geometric mean of |model / measured - 1| over the sizes), so a user can
// check the model on their own machine, and set its options from what they see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "system/nccl/achieved.h"
#include "system/nccl/call_types.h"

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

// What a log says of the run besides its rows.
struct MeasuredRun {
  std::vector<MeasuredRow> rows;
  std::optional<std::uint32_t> ranks;            // its "# Rank N ..." lines, where printed
  std::optional<std::uint32_t> gpus_per_thread;  // its "nGpus N" (nccl-tests' -g)
};

// The rows of `collective` in nccl-tests' output `text` (`file` names it in errors). A log may
// hold several collectives' tables ("# Collective test starting: NAME_perf"), and other lines
// (MPI's, NCCL's INFO): a row is a line whose first field is a size and whose third is a type
// nccl-tests names; it must then hold 13 fields (size, count, type, redop, root, then time,
// algbw, busbw, #wrong out of place and in place), 12 (older nccl-tests, without the root), or the
// out-of-place half of either. Throws Error naming the file and line for a row that is not one,
// a log with no row of `collective`, and a log of another collective only.
MeasuredRun read_nccl_tests_log(std::string_view text, const std::string& file, Collective collective);

struct ComparedRow {
  MeasuredRow measured;
  double model_out_of_place_us = 0, model_in_place_us = 0;
  TuningModel::Choice choice;  // the model's, out of place
};

struct Comparison {
  std::vector<ComparedRow> rows;  // sizes of no element left out: NCCL runs nothing for them
  // exp(mean |ln(model / measured)|) - 1, over the rows (in place: those that print it); 0 with none.
  double out_of_place_error = 0, in_place_error = 0;
  std::size_t in_place_rows = 0;
  double mean_signed_error = 0;  // exp(mean ln(model / measured)) - 1, out of place
};

// The model's time for each of `run`'s rows, on `machine` with `enabled` and `efficiencies` (less
// the algorithms each row's type and operation rule out, restrict_to_call), no call shorter than
// `host_issue_us` (a thread launching several GPUs' calls, SweepOptions). Throws Error where NCCL
// would refuse a row's type (check_call).
Comparison compare_with_model(const MeasuredRun& run, Collective collective, const Machine& machine,
                              const Enabled& enabled, const Efficiencies& efficiencies, double host_issue_us);

// The comparison as a table: each row's measured and modelled time and their error, and the
// geometric means; headed with the file and the machine.
std::string comparison_table(const Comparison& comparison, Collective collective, const Machine& machine,
                             const std::string& file);

}  // namespace chakrasim::system::nccl
