#include "cli/run_output.h"

#include <iostream>

#include <fmt/format.h>

#include "report/astra_statistics.h"
#include "report/summary.h"

namespace chakrasim::cli {

int print_run(const sim::Result& result, const OutputOptions& options) {
  if (options.inputs != nullptr && options.log != nullptr) {
    std::string text;
    for (std::size_t r = 0; r < result.npus.size(); ++r) {
      if (!result.npus[r].finished) continue;
      text += report::finish_line(r, result.npus[r]);
      text += report::statistics_lines(*options.inputs, *options.log, static_cast<NpuId>(r));
    }
    std::cout << text;
  } else {
    report::print_finish_lines(std::cout, result);
  }
  if (!options.quiet) report::print_summary(std::cout, result);
  std::cout.flush();
  report::print_bandwidth_warnings(std::cerr, options.collectives, options.backend);
  if (!options.json_path.empty()) report::write_results_json(options.json_path, result, &options.collectives);
  if (!result.all_finished()) {
    report::print_deadlock(std::cerr, result);
    return 2;
  }
  return 0;
}

// How far the simulation is, for the progress line.
std::string progress_text(const sim::Progress& p) {
  const double rate = p.wall_s > 0 ? static_cast<double>(p.events) / p.wall_s : 0;
  return fmt::format("simulated {} · {} of {} nodes done · {:.1f} M events/s", report::format_duration(p.now),
                     p.nodes_done, p.nodes, rate / 1e6);
}

}  // namespace chakrasim::cli
