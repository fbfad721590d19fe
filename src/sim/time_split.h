// Where each NPU's time went, split the way a researcher reasons about a training step rather
// than the way the reference prints it (finish - compute): compute, exposed collective
// communication per group kind (TP, DP, ... or the group's shape), point-to-point waits (the
// pipeline bubble is a receive waiting for the previous stage), exposed memory, and idle.
//
// An instant counts once, for the first of these that has a node running on the NPU: compute,
// then collectives (of the kind listed first when collectives of several kinds overlap), then
// sends and receives, then memory; an instant with none of them before the NPU finishes is idle.
// So the parts are disjoint and add up to the NPU's finish time. Kept as running counts per NPU,
// updated at each node start and end: O(1) per node, on in every run.
#pragma once

#include <vector>

#include "core/types.h"

namespace chakrasim::sim {

struct TimeSplit {
  Tick compute_ns = 0;                 // a compute node (GPU or CPU) running
  Tick collective_ns = 0;              // a collective running and no compute: the sum of by_group_kind_ns
  Tick p2p_wait_ns = 0;                // a send or receive running and nothing above: p2p and pipeline bubbles
  Tick memory_ns = 0;                  // a memory load or store running and nothing above
  Tick idle_ns = 0;                    // nothing running, before the NPU finishes
  std::vector<Tick> by_group_kind_ns;  // exposed collective time per Result::group_kinds entry
  double model_flops = 0;              // the num_ops of the GPU compute nodes that ran
};

}  // namespace chakrasim::sim
