// How many channels NCCL gives a send or receive to one peer, and what that costs a call. A
// channel is one thread block, and NCCL spreads a peer's bytes over a few of them only (its
// topology and enqueue code, 2.30): each peer starts with as many as the communicator's p2p
// channels hold for every rank at once (4 on a node of 8 GPUs), and doubles them, up to the
// peer's own maximum, only while a channel's part is over 32 chunks (512 KiB each over NVLink:
// 16 MiB; 128 KiB each across nodes). One channel moves about 21 GB/s, so a send/receive on
// 8 H100s runs at 80 GB/s up to 64 MiB, 160 at 128 MiB and reaches the links only from 512
// MiB, as nccl-tests measures on H100 and B200 nodes alike; one to a peer across the network
// moves NCCL's own 14 GB/s (docs/nccl.md).
#pragma once

#include <cstdint>

#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

struct Machine;

// The channels one send (or receive) of `peer_bytes` to one peer runs on.
std::uint32_t p2p_op_channels(const Machine& machine, std::uint32_t communicator_channels, std::uint64_t peer_bytes);

// The least time, us, a send/receive or all-to-all of `bytes` (nccl-tests' size) takes through the
// channels its members' sends run on, at `channel_gb_per_s` each (the protocol's: LL's p2p channel
// is slower than Simple's); 0 for LL128, which NCCL's p2p does not run, and for other collectives.
double p2p_channels_us(const Machine& machine, Collective c, Protocol p, std::uint32_t communicator_channels,
                       std::uint64_t bytes, double channel_gb_per_s);

// What an all-to-all's first step costs with Simple, us: one chunk of a channel's part (512 KiB
// over NVLink, 128 KiB across nodes), or the part if smaller, at `channel_gb_per_s`. Measured,
// not derived: on two 8x H100 clusters and an 8x B200 node an all-to-all takes 25 us more than
// its bytes once a channel's part reaches a chunk, on links or channels alike, where a
// send/receive of the same parts does not (docs/nccl.md). 0 for LL and LL128.
double all_to_all_first_step_us(const Machine& machine, Protocol p, std::uint32_t communicator_channels,
                                std::uint64_t bytes, double channel_gb_per_s);

}  // namespace chakrasim::system::nccl
