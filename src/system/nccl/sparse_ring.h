// nccl-tests times each size's calls back to back, and back to back a ring all-reduce too small
// to fill every rank's chunk takes less time a call than it does alone.
//
// NCCL's ring all-reduce cuts a loop into one chunk a rank, alignUp(ceil(count / ranks), 16 bytes)
// of elements each (its last loop's rule; at these sizes the call is one loop on one channel:
// all_reduce.h and enqueue.cc, 2.29), so below ranks x 16 bytes only the first chunks hold data. An
// LL step whose chunk is empty polls no line (its loop runs no element). A lone call still takes
// the ring's 2(ranks - 1) steps: each filled chunk goes round twice. Back to back, though, a rank
// past its last filled chunk starts the next call while others finish this one, so the calls
// overlap, and the period is the ring's longest chain of waits from one call to the next: were an
// empty step free, 8 steps of 14 with one or two filled chunks of 8 ranks, 12 with three or four.
// An empty step is not free: it costs kEmptyStepShare of a step (its loop, its barrier, its send
// credit), measured on an 8x H100 node's sweep and checked on an 8x B200 node's and an AWS p5
// one's (docs/nccl.md). (An LL sender may run at most NCCL's 8 steps ahead of its receiver; with
// that share the credit never binds, so it is not played.)
//
// The period comes from playing the ring's steps over enough calls to settle into their cycle; it
// is cheap at the ring sizes it applies to (one node), and nothing else runs it.
#pragma once

#include <cstdint>

namespace chakrasim::system::nccl {

inline constexpr double kEmptyStepShare = 0.27;

// How many of a ring all-reduce's `ranks` chunks hold data for `count` elements of
// `element_bytes` each.
std::uint32_t filled_chunks(std::uint64_t count, std::uint32_t element_bytes, std::uint32_t ranks);

// The time a call of back-to-back ring all-reduces over `ranks` ranks takes with `filled` filled
// chunks, in steps (a filled step's whole cost: its data's way to the next rank and its share).
// Were empty steps free it would be 2n - n / ceil(filled / 2) (a closed form the tests check).
double back_to_back_ring_steps(std::uint32_t ranks, std::uint32_t filled, double empty_step_share = kEmptyStepShare);

// The steps a call saves against the same calls with every chunk filled (0 when all are).
double back_to_back_saved_steps(std::uint32_t ranks, std::uint32_t filled, double empty_step_share = kEmptyStepShare);

}  // namespace chakrasim::system::nccl
