#include "cli/run_inputs.h"

#include "core/error.h"

namespace chakrasim::cli {

void apply_system(sim::Inputs& inputs, const config::SystemConfig& system, const std::string& source, bool rendezvous,
                  const std::string& collectives) {
  inputs.system = system.system;
  inputs.system_source = source;
  inputs.compute = system.compute;
  inputs.replay_only = system.replay_only;
  inputs.system.rendezvous = rendezvous;
  if (collectives == "astra-sim") {
    inputs.system.collectives = system::CollectiveModel::kAstraSim;
  } else if (collectives == "nccl") {
    inputs.system.collectives = system::CollectiveModel::kNccl;
  } else if (collectives == "nccl-traffic") {
    inputs.system.collectives = system::CollectiveModel::kNcclTraffic;
  } else if (!collectives.empty()) {
    fail("collectives: \"{}\": expected astra-sim, nccl or nccl-traffic", collectives);
  }
  // A BROADCAST node's recorded duration is the reference's reading; a run timed as NCCL times
  // it as NCCL's broadcast unless the system file says otherwise.
  if (inputs.system.collectives != system::CollectiveModel::kAstraSim && !inputs.system.broadcast_by_duration_given) {
    inputs.system.broadcast_by_duration = false;
  }
}

}  // namespace chakrasim::cli
