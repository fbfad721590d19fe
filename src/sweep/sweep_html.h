// A sweep's results as a page a person reads (docs/sweep.md): the iteration time against each
// axis, the Pareto front of time against the spec's cost axis, and the table, sortable by any
// column. One self-contained file: inline SVG and a few lines of script, nothing fetched.
#pragma once

#include <string>

#include "sweep/sweep_spec.h"
#include "sweep/sweep_table.h"

namespace chakrasim::sweep {

std::string html_page(const SweepSpec& spec, const Table& table);

// The rows on the Pareto front of (cost, time), both minimised, by ascending cost: a row is on it
// when no other row is at most as costly and faster, or cheaper and as fast.
std::vector<std::size_t> pareto_front(const std::vector<double>& cost, const std::vector<double>& time);

}  // namespace chakrasim::sweep
