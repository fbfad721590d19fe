// Printing a finished run the same way for `run` and `demo`.
#pragma once

#include <string>

#include "sim/simulation.h"

namespace chakrasim::cli {

// Prints the per-NPU lines, the summary (unless quiet) and any deadlock report; writes the
// JSON results if `json_path` is set. Returns the exit code: 0, or 2 on a deadlock.
int print_run(const sim::Result& result, const std::string& json_path, bool quiet);

}  // namespace chakrasim::cli
