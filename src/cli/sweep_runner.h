// Runs the points of a sweep (docs/sweep.md): each point's inputs built from the spec's base and
// the point's values, simulated, and its figures taken as one table row. What points share is
// built once and shared between them, on every thread: trace files read and parsed, generated
// iterations (by generator flags), the base system and network files' text, group files.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"
#include "sweep/sweep_table.h"

namespace chakrasim::cli {

class SweepRunner {
 public:
  explicit SweepRunner(sweep::SweepSpec spec);
  ~SweepRunner();

  // The row of one point. Never throws for a point's own problem: the row records its error.
  sweep::Row run(std::size_t point) const;

  const sweep::SweepSpec& spec() const { return spec_; }
  const std::vector<std::string>& header() const { return header_; }
  std::size_t points() const { return points_; }

  // The point's axis cells of a row, to tell whether a stored row is still this point's.
  std::vector<std::string> axis_cells(std::size_t point) const;

 private:
  struct Caches;
  sweep::SweepSpec spec_;
  std::vector<std::string> header_;
  std::size_t points_ = 0;
  std::unique_ptr<Caches> caches_;
};

// Runs the points `todo` on `threads` threads, each taking the next point when it finishes one;
// `on_row` is called once per point, one call at a time.
void run_points_on_threads(const SweepRunner& runner, const std::vector<std::size_t>& todo, std::size_t threads,
                           const std::function<void(sweep::Row)>& on_row);

}  // namespace chakrasim::cli
