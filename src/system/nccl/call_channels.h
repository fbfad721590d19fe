// How many channels NCCL runs one call on, and what that costs LL. A channel is one thread block,
// on one SM, and NCCL gives a small call fewer of them than the communicator holds (its enqueue
// code, 2.30): a ring or a tree drops a channel for every `threads x threshold` bytes the call
// lacks, down to one; LL's threshold is 8 bytes a thread (times the ranks for a ring), with 512
// threads a channel, so an 8-GPU ring all-reduce runs on one channel up to 32 KiB and on all 24
// of an H100 node's from 768 KiB.
//
// An SM moves LL's lines at a rate of its own, well below what the links carry: every 8 bytes of
// data travel with an 8-byte flag, and the receiving threads poll for it. So an LL call takes at
// least its bus bytes (what each GPU sends, bus_factor x bytes; a tree's chain carries its share
// up and down, twice) over its channels x an LL channel's rate. On 8 H100s this is what the
// measured ring LL sizes show: one channel at 1-32 KiB, the time rising with the bytes; then
// flat to 256 KiB while the channels grow with the call (nccl-tests sweeps, docs/nccl.md).
// LL128 and Simple calls large enough to be chosen run on all channels, at rates the links bound.
#pragma once

#include <cstdint>

#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

struct Machine;

// The channels NCCL's communicator runs collectives on, from its ring graph's: twice the graph's,
// twice again on Hopper and later across nodes when the graph runs over 45 GB/s a channel and
// holds fewer than 8. Where the GPU's library lists its rings for one full node (RCCL's MI300X),
// twice those; and at least the library's least for 2 and 4 ranks (RCCL's MI300X: 32 and 24).
std::uint32_t comm_channels(const Machine& machine, std::uint32_t ring_graph_channels, double ring_graph_gb_per_s);

// The channels NCCL runs a ring or tree call of `bytes` on (NCCL's nBytes: an all-gather's
// output), of the communicator's.
std::uint32_t call_channels(Algorithm a, Protocol p, std::uint32_t ranks, std::uint32_t communicator_channels,
                            std::uint64_t bytes);

// The least time, us, an LL ring or tree call's channels need to carry it at `channel_gb_per_s`
// each; 0 for other protocols and algorithms, whose channels the links bound.
double ll_channels_us(Collective c, Algorithm a, Protocol p, std::uint32_t ranks, std::uint32_t communicator_channels,
                      std::uint64_t bytes, double channel_gb_per_s);

}  // namespace chakrasim::system::nccl
