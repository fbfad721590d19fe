// A real nccl-tests run's output read back: its rows (size, type, operation, root and the two
// times) and what its header says of the run, for sweep_comparison.h to set beside the model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace chakrasim::system::nccl
