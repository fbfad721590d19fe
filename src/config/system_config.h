// Reading the system-layer JSON (docs/astra-sim-model.md §1.3). Every key is listed once in a
// table (system_config.cc) with its type, unit, default and meaning; that table drives parsing,
// the error messages and `chakrasim run --help-system`.
#pragma once

#include <string>
#include <vector>

#include "compute/compute_spec.h"
#include "system/system_spec.h"

namespace chakrasim::config {

// Command-line settings the reference applies to the system JSON.
struct SystemFlags {
  std::uint32_t num_queues_per_dim = 1;
  double injection_scale = 1;
};

struct SystemConfig {
  system::SystemSpec system;
  compute::ComputeSpec compute;
  bool replay_only = false;
  std::vector<std::string> warnings;  // keys ignored, defaults a user may not expect
};

SystemConfig load_system(const std::string& path, const SystemFlags& flags);
SystemConfig parse_system(const std::string& text, const std::string& source, const SystemFlags& flags);

// A table of every key: name, type, default and meaning.
std::string describe_system_keys();

}  // namespace chakrasim::config
