// The reference's per-NPU statistics block (docs/astra-sim-model.md §8), computed from the
// node log: wall time, the union of busy intervals per operator type, compute-communication
// overlap and, with the roofline, its utilisation figures. Unlike the reference it never
// aborts on METADATA, CPU, INVALID or memory nodes, and its type lines come in a fixed order.
#pragma once

#include <string>

#include "report/node_log.h"
#include "sim/simulation.h"

namespace chakrasim::report {

struct NpuStatistics {
  Tick wall = 0;
  Tick cpu = 0, gpu = 0, comm = 0, remote_mem = 0, replay = 0, invalid = 0;
  bool has_cpu = false, has_gpu = false, has_comm = false, has_remote_mem = false, has_replay = false,
       has_invalid = false;
  Tick overlap = 0;  // GPU + Comm - Wall when both ran, else 0
  // Utilisation figures of a compute model that reports them (the roofline), as fractions
  // (time-weighted over compute nodes; +1 ns guard).
  bool has_utilization = false;
  double compute_bound = 0, compute_utilization = 0, memory_utilization = 0, operation_intensity = 0;
};

NpuStatistics npu_statistics(const sim::Inputs& inputs, const NodeLog& log, NpuId npu);

// The lines `sys[<i>]. Post statistics processing start.` ... for one NPU.
std::string statistics_lines(const sim::Inputs& inputs, const NodeLog& log, NpuId npu);

}  // namespace chakrasim::report
