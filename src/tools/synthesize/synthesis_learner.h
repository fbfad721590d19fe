// `chakrasim chakra synthesize learn`: a SynthesisModel from per-rank traces (docs/chakra-tools.md).
//
// Each rank's trace is first reduced as `chakra obfuscate` reduces it (only what the simulator
// reads; runs of compute fused; ids in dependency order). Its nodes become symbols: the kind,
// the collective type and the shape of its group, the peer's offset, the dependencies as
// distances back, which values it has. Ranks with one symbol sequence form a class; the
// sequence becomes loops (loop_finder.h); each slot of a loop body pools its values over the
// body's repetitions and the class's ranks into a distribution, and each loop keeps the rank
// correlations of its body's values with each other and with the repetition index.
#pragma once

#include <string>

#include "tools/synthesize/synthesis_model.h"

namespace chakrasim::tools {

struct LearnReport {
  std::uint64_t ranks = 0, nodes = 0, classes = 0, slots = 0, loops = 0, groups = 0;
};

// Reads IN_PREFIX.<rank>.et and the communicator groups: `groups_path`, else IN_PREFIX.groups.json
// when it exists, and the process groups METADATA nodes describe. Throws Error naming the file and
// node for what it cannot model (a node type it does not know, a collective of an unknown group,
// a message without its peer).
//
// `resolution` R > 1 also puts each node's main value (a compute node's num_ops, else its
// duration; a message's or collective's size; a memory node's tensor size) into its symbol as
// floor(log_R(value)): loops then repeat only nodes of like size, and more of the step's detail
// is kept exactly (a transformer layer's attention and MLP stay apart). 0 learns the structure
// alone, every value as a distribution over its loop's repetitions.
SynthesisModel learn_model(const std::string& in_prefix, const std::string& groups_path, double resolution,
                           LearnReport& report);

}  // namespace chakrasim::tools
