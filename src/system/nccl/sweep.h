// A sweep of message sizes as nccl-tests runs it, and its table as nccl-tests prints it (size,
// count, type, redop, root, then time, algbw, busbw and #wrong out of place and in place), so a
// simulated sweep sits beside a real one line by line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "system/nccl/achieved.h"
#include "system/nccl/call_types.h"

namespace chakrasim::system::nccl {

// The largest size a sweep's row takes, bytes: -b and -e with nccl-tests' K, M, G, and a
// measured row read back (measured_sweep.h).
inline constexpr std::uint64_t kLargestSweepBytes = std::uint64_t{1} << 62;

struct SweepOptions {
  Collective collective = Collective::kAllReduce;
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 128 << 20;
  std::uint64_t factor = 2;          // -f: each size this many times the last (0: use step_bytes)
  std::uint64_t step_bytes = 0;      // -i: each size this much more than the last
  DataType type = DataType::kFloat;  // -d
  ReduceOp op = ReduceOp::kSum;      // -o
  std::uint32_t root = 0;            // -r: broadcast's and reduce's root
  // The host's time to issue one iteration's calls, us: nccl-tests times calls back to back, so
  // a call that the GPUs finish sooner still takes this (one thread launching -g GPUs' kernels).
  double host_issue_us = 0;
  // nccl-tests from 2.13.12 (December 2024) trims a rank's share of a gather, scatter or
  // all-to-all to a multiple of 16 bytes; older ones to whole elements (a log of either reads back).
  bool share_in_16_bytes = true;
};

// One column of a row: the call out of place or in place (the same but where the library has
// schedules apart for in-place calls: RCCL's MSCCL, msccl.h).
struct SweepTiming {
  double time_us = 0, algbw = 0, busbw = 0;
  TuningModel::Choice choice;
};

struct SweepRow {
  std::uint64_t size = 0;   // bytes, as nccl-tests prints it (its per-rank pieces made whole)
  std::uint64_t count = 0;  // elements of the call's parameter
  SweepTiming out_of_place, in_place;
  bool empty = false;  // a collective of no element: NCCL returns at once and runs nothing
  DataType type = DataType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  std::uint32_t root = 0;
};

// `model` is the machine's, with the algorithms the options' type and reduction leave
// (restrict_to_call). Throws Error for sizes out of order, a factor of 1 or a zero step (a sweep
// that never ends).
std::vector<SweepRow> run_sweep(const AchievedModel& model, const SweepOptions& options);

// The models of a row's two columns: `model` out of place and in place, built once for the rows
// of one type and reduction.
struct ColumnModels {
  explicit ColumnModels(const AchievedModel& model);
  AchievedModel out_of_place, in_place;
};
// One row of a sweep: nccl-tests' size and count for `size` requested, and each column's time.
SweepRow sweep_row(const ColumnModels& models, const SweepOptions& options, std::uint64_t size);

// "1 node(s) x 8 H100" and, across nodes, its NICs: how the tables' heads name the machine.
std::string machine_summary(const Machine& machine);
// "Ring/LL", "P2P/Simple": how the tables name NCCL's choice.
std::string choice_name(const TuningModel::Choice& choice);
// The table, headed as nccl-tests heads it with the machine and the model named above it, and
// its footer (the average bus bandwidth over both columns of every row: several sweeps' rows, of
// several types, operations or roots, print one after another, as nccl-tests' "all" does).
// `algorithms` adds a column naming each row's choice (and the in-place one where it differs).
std::string sweep_table(const AchievedModel& model, const SweepOptions& options, const std::vector<SweepRow>& rows,
                        bool algorithms);

}  // namespace chakrasim::system::nccl
