// One self-contained HTML page about a finished run (inline CSS and SVG, no network access):
// the inputs and totals, per-NPU bars of compute / exposed communication / exposed memory /
// idle, a table of collectives with nccl-tests' algbw and busbw, link utilisation over time
// (backends with links), the flows (flow-level backends) and the critical path.
#pragma once

#include <string>

#include "report/analysis.h"
#include "report/flow_log.h"
#include "report/node_log.h"
#include "sim/simulation.h"

namespace chakrasim::report {

struct ReportSources {
  std::string workload;  // the paths the inputs came from, shown as given
  std::string system;
  std::string network;
};

// The page as a string. `links` may be null (no link figures), and `flows` (no flow section).
std::string html_report(const sim::Inputs& inputs, const sim::Result& result, const NodeLog& log, const LinkLog* links,
                        const ReportSources& sources, const FlowLog* flows = nullptr);

// Writes html_report(...) to DIR/index.html, creating DIR; throws Error naming the path on failure.
std::string write_html_report(const std::string& dir, const sim::Inputs& inputs, const sim::Result& result,
                              const NodeLog& log, const LinkLog* links, const ReportSources& sources,
                              const FlowLog* flows = nullptr);

}  // namespace chakrasim::report
