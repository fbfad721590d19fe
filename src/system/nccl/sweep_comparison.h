// A real nccl-tests run beside the model: each row of its table (measured_sweep.h) timed by the
// model at the same size, type, operation and root; the error in time that docs/nccl.md reports
// for each published sweep (exp of the mean |ln(model / measured)| over the rows, less 1); and
// each sweep's shape beside the model's (sweep_shape.h), so a user can check the model on their
// own machine, and set its options from what they see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "system/nccl/achieved.h"
#include "system/nccl/measured_sweep.h"
#include "system/nccl/share_hint.h"
#include "system/nccl/sweep_shape.h"

namespace chakrasim::system::nccl {

struct CompareOptions {
  // One host thread launches its GPUs' calls one after another (nccl-tests' -g and a GPU's launch,
  // us), so no call is shorter than their sum (SweepOptions::host_issue_us).
  std::uint32_t gpus_per_thread = 1;
  double host_launch_us = 0;
  // Leave noise spikes out of the means and the shape: a row whose out-of-place time is over 1.2
  // times that of each of its neighbours in size (the smallest size: its one neighbour; never the
  // largest size, whose one neighbour is smaller and so always faster). A sweep's time only grows
  // with its size, so a row that rises and falls back is another job's or the host's doing, not
  // the collective's.
  bool leave_out_spikes = false;
  double host_issue_us() const { return gpus_per_thread * host_launch_us; }
};

struct ComparedRow {
  MeasuredRow measured;
  double model_out_of_place_us = 0, model_in_place_us = 0;
  TuningModel::Choice choice;  // the model's, out of place
  bool spike = false;          // left out of the means and the shape (CompareOptions)
};

// One sweep of the log: the rows of one type, operation and root (a log may hold several:
// nccl-tests' -d all, -o all, -r -1), and of one table where the log repeats its sizes (two runs
// in one file); its out-of-place column's shape, measured and modelled, over the rows not left out.
struct ComparedShape {
  DataType type = DataType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  std::uint32_t root = 0;
  std::uint32_t repeat = 0;  // 0 for the first rows of these, 1 for a second table of them, ...
  SweepShape measured, model;
  double model_at_measured_floor_us = 0;  // the model's time at the size of the measured floor
  // The model's choice at the smallest size and at each size where it changes.
  std::vector<std::pair<std::uint64_t, TuningModel::Choice>> model_choices;
};

struct Comparison {
  std::vector<ComparedRow> rows;      // sizes of no element left out: NCCL runs nothing for them
  std::vector<ComparedShape> shapes;  // in the order the log first has each sweep
  // exp(mean |ln(model / measured)|) - 1 over the rows (in place: those that print it).
  double out_of_place_error = 0, in_place_error = 0;
  std::size_t in_place_rows = 0;
  std::size_t spikes = 0;        // rows left out as noise spikes
  double mean_signed_error = 0;  // exp(mean ln(model / measured)) - 1, out of place
  CompareOptions options;        // what the rows were timed and read with
  // Where the first sweep's peak is at a size the bytes set (64 MiB or more): the share that
  // binds the model there, and the value of it that gives the measured time (share_hint.h).
  std::optional<ShareHint> peak_hint;
};

// The model's time for each of `run`'s rows, on `machine` with `enabled` and `efficiencies` (less
// the algorithms each row's type and operation rule out, restrict_to_call), no call shorter than
// the host's launches (`options`); spikes marked and left out where `options` says. Throws Error
// naming the file and line of a row NCCL would refuse (check_call), whose size nccl-tests would
// not print on the machine's ranks (its log came from other ranks), or whose root is not one of
// them; and where no row is left to compare.
Comparison compare_with_model(const MeasuredRun& run, const std::string& file, Collective collective,
                              const Machine& machine, const Enabled& enabled, const Efficiencies& efficiencies,
                              const CompareOptions& options);

// The comparison as a table: each row's measured and modelled time and their error, the
// geometric means, and each shape beside the model's, with the sizes at which the model's choice
// changes; headed with the file and the machine. Where the first sweep's floor (its least time)
// is under 1 MiB and above the model's time there, it says what --platform-latency-us would make
// of it, or, where the host's launches set the model's time there, the --host-launch-us that
// would give the measured floor; and where the comparison has a peak hint, the share to set.
std::string comparison_table(const Comparison& comparison, Collective collective, const Machine& machine,
                             const std::string& file);

}  // namespace chakrasim::system::nccl
