// The workload layer's options that a run's inputs set: for the run itself and for checking
// its traces beforehand (sim/inputs_check.cc).
#pragma once

#include "sim/simulation.h"
#include "workload/executor.h"

namespace chakrasim::sim {

inline workload::WorkloadOptions workload_options(const Inputs& inputs) {
  workload::WorkloadOptions options;
  options.compute = inputs.compute;
  options.replay_only = inputs.replay_only;
  options.broadcast_by_duration = inputs.system.broadcast_by_duration;
  options.remote_memory = inputs.memory.kind != memory::RemoteMemoryKind::kNone;
  return options;
}

}  // namespace chakrasim::sim
