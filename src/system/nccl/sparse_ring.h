// nccl-tests times each size's calls back to back, and a ring all-reduce too small to fill every
// rank's chunk runs faster so than a lone call does.
//
// NCCL's ring all-reduce cuts a loop into one chunk a rank, alignUp(ceil(count / ranks), 16 bytes)
// of elements each (its last loop's rule, and at these sizes the call has one loop on one channel;
// all_reduce.h, 2.29), so below ranks x 16 bytes only the first chunks hold data. A step whose
// chunk is empty sends no line and waits for none (its LL loop runs no element). A lone call
// still takes the ring's 2(ranks - 1) steps: each filled chunk goes round twice. Back to back,
// though, a rank past its last filled chunk starts the next call while others finish this one, so
// the calls overlap, and the period is the ring's longest chain of waits from one call to the
// next: 8 steps of 14 with one or two filled chunks of 8, 12 with three or four. An empty step is
// not free: it costs kEmptyStepShare of a step (its loop and barrier), measured on an 8x H100
// node's sweep and checked on an 8x B200 node's (docs/nccl.md).
//
// The period comes from playing the ring's steps over enough calls to settle; it is cheap at the
// ring sizes it applies to (one node), and nothing else runs it.
#pragma once

#include <cstdint>

namespace chakrasim::system::nccl {

inline constexpr double kEmptyStepShare = 0.27;

// How many of a ring all-reduce's `ranks` chunks hold data for `count` elements of
// `element_bytes` each.
std::uint32_t filled_chunks(std::uint64_t count, std::uint32_t element_bytes, std::uint32_t ranks);

// The steps back-to-back ring all-reduces of `ranks` ranks with `filled` filled chunks take a call,
// a step being a filled step's cost: 2(ranks - 1) when every chunk holds data, fewer otherwise.
double back_to_back_ring_steps(std::uint32_t ranks, std::uint32_t filled, double empty_step_share = kEmptyStepShare);

}  // namespace chakrasim::system::nccl
