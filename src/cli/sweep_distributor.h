// How a sweep's points are spread: over the threads of this process, or over the ranks of an MPI
// job (cli/sweep_mpi_main.cc). The rank that writes the table gets every row through `on_row`.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "cli/sweep_runner.h"

namespace chakrasim::cli {

class PointDistributor {
 public:
  virtual ~PointDistributor() = default;
  // Runs the points `todo` (each once, anywhere), `threads` at a time on each process. Returns
  // true on the process that writes the results, whose `on_row` was called once per point.
  virtual bool run(const SweepRunner& runner, const std::vector<std::size_t>& todo, std::size_t threads,
                   const std::function<void(sweep::Row)>& on_row) = 0;
  // Processes taking part (1 for threads alone).
  virtual std::size_t processes() const = 0;
};

// The process's distributor for MPI runs; nullptr (the default) runs on threads alone.
void set_sweep_distributor(PointDistributor* distributor);

}  // namespace chakrasim::cli
