// Symmetric runs: when every rank runs the same trace, and the network and the algorithms look
// the same from every NPU, every NPU's timeline is the same. Then simulating NPU 0 alone, with
// each message it sends mirrored back as the one it receives, gives every NPU's exact figures
// at 1/N of the cost. This checks, conservatively, that a run is such a run.
#pragma once

#include "sim/simulation.h"

namespace chakrasim::sim {

// True when `inputs` may run as NPU 0 alone: one shared trace for all ranks; a backend whose row
// is shift_invariant (network/network.h: translation-invariant routes and delays); only compute,
// collectives and zero-time nodes (no point-to-point, remote memory or communicator groups);
// and ring or direct algorithms on network dimensions (no halving-doubling or tree, whose roles
// differ between NPUs; no custom algorithms; flat one* rings only on a 1-D network).
bool is_symmetric(const Inputs& inputs);

}  // namespace chakrasim::sim
