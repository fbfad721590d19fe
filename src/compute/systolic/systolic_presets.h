// The chips a user can name instead of writing a systolic array's numbers (system JSON
// "systolic": {"preset": ...}); docs/systolic.md lists where each figure comes from.
#pragma once

#include <string>
#include <vector>

#include "compute/compute_spec.h"

namespace chakrasim::compute::systolic {

struct Preset {
  const char* name;
  const char* description;
  SystolicSpec spec;
};
const std::vector<Preset>& presets();
// The preset called `name`; throws Error listing the valid names for an unknown one.
const Preset& preset(const std::string& name);

}  // namespace chakrasim::compute::systolic
