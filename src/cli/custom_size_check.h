// A custom collective moves the message sizes of its algorithm ET, not the workload node's
// comm_size (docs/chakra-format.md §7.3), so an algorithm converted for one size and applied to
// another runs at the wrong size without a word. This check says so before the run.
#pragma once

#include <string>
#include <vector>

#include "sim/simulation.h"

namespace chakrasim::cli {

// One warning per custom collective kind whose algorithm ET was converted (chakra msccl) for a
// size other than that of a workload collective of that kind: the first such node, the two
// sizes, and the command that converts it again. Algorithm ETs that do not say what they were
// converted for are not checked.
std::vector<std::string> custom_size_warnings(const sim::Inputs& inputs);

}  // namespace chakrasim::cli
