#include "cli/run_output.h"

#include <iostream>

#include "report/summary.h"

namespace chakrasim::cli {

int print_run(const sim::Result& result, const std::string& json_path, bool quiet) {
  report::print_finish_lines(std::cout, result);
  if (!quiet) report::print_summary(std::cout, result);
  std::cout.flush();
  if (!json_path.empty()) report::write_results_json(json_path, result);
  if (!result.all_finished()) {
    report::print_deadlock(std::cerr, result);
    return 2;
  }
  return 0;
}

}  // namespace chakrasim::cli
