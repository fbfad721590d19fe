// What `chakrasim run`, a sweep's points and chakrasim.run all do with a system file: its parts
// of the run's inputs, and the run flags that change them. One place, so that the three agree.
#pragma once

#include <string>

#include "config/system_config.h"
#include "sim/simulation.h"

namespace chakrasim::cli {

// Sets the system, compute and replay-only parts of `inputs` from `system` (read from
// `source`), then the run flags: `rendezvous` (--rendezvous-protocol) and `collectives`
// (--collectives: astra-sim, nccl or nccl-traffic; "" keeps the file's). Throws Error naming
// another collective model.
void apply_system(sim::Inputs& inputs, const config::SystemConfig& system, const std::string& source, bool rendezvous,
                  const std::string& collectives);

}  // namespace chakrasim::cli
