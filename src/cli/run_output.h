// Printing a finished run the same way for `run` and `demo`.
#pragma once

#include <string>

#include "report/analysis.h"
#include "sim/simulation.h"

namespace chakrasim::report {
class NodeLog;
}

namespace chakrasim::cli {

struct OutputOptions {
  std::string json_path;  // write the JSON results here when set
  bool quiet = false;     // no summary (warnings are printed regardless)
  // With both set, each NPU's `sys[i] finished` line is followed by the reference's statistics.
  const sim::Inputs* inputs = nullptr;
  const report::NodeLog* log = nullptr;
  // NPU 0's collectives with nccl-tests' figures (run records them): the JSON carries them, and
  // those whose bus bandwidth exceeds their links' get a warning.
  std::vector<report::CollectiveRow> collectives;
  std::string backend;  // named in those warnings
};

// Prints the per-NPU lines, the summary (unless quiet) and any deadlock report; writes the
// JSON results. Returns the exit code: 0, or 2 on a deadlock.
int print_run(const sim::Result& result, const OutputOptions& options);

// How far a running simulation is, for the progress line: "simulated 1.2 s · 300 of 900 nodes
// done · 12.0 M events/s".
std::string progress_text(const sim::Progress& p);

}  // namespace chakrasim::cli
