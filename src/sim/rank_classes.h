// Folding by classes of ranks: when ranks' traces differ (pipeline stages, peers, groups) but
// fall into classes whose members' traces are the same up to a relabelling of ranks that the
// network maps onto itself, every member of a class runs its representative's timeline, and a
// run simulates one representative per class (network/folding.h says how messages and links
// are folded).
//
// The relabellings tried are the network's own moves, one dimension at a time: rotations by a
// divisor of the dimension's size (smallest first) and, in a switch of 2^k NPUs, flips of one
// coordinate bit. A move is kept when, applied to every rank r at once (r -> s(r)):
//   - every collective's algorithm on the network dimension keeps its roles: a ring or direct
//     phase needs positions shifted (p -> p + c), halving-doubling flipped (p -> p ^ c), any
//     other algorithm (trees, custom) positions unchanged;
//   - every communicator group a trace names maps onto a group of the file, with its ring
//     positions moved so too (a one-member move of an eight-member ring is no move of it);
//   - the trace of s(r) is the trace of r relabelled: the same nodes, dependencies, durations
//     and attributes, peers p of r being s(p) in s(r), groups G being s(G).
// The kept moves generate the classes. A dimension keeps rotations or flips, whichever joins
// more ranks. Runs this does not cover fold nowhere: NCCL's collectives, custom algorithms,
// remote memory, groups defined by process-group nodes, backends whose row is not
// shift_invariant or that charge links (has_links: ties between messages on a link are broken
// by the order of events, which is not symmetric even in the full run), or no two ranks alike.
//
// Exactness: every member of a class runs its representative's timeline as long as the order
// in which an NPU handles events of the same tick is the same in both; the tests compare folded
// and full runs of pipelines with contended groups, rendezvous and generated LLM traces.
#pragma once

#include <optional>
#include <string>

#include "network/folding.h"
#include "network/topology.h"
#include "sim/simulation.h"

namespace chakrasim::sim {

// The folding of `inputs` on `topology` with fewer classes than NPUs, or nullopt.
std::optional<network::Folding> find_rank_classes(const Inputs& inputs, const network::Topology& topology);

}  // namespace chakrasim::sim
