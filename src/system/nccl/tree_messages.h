// What a tree across nodes costs the network proxies: NCCL sends a tree's data across nodes as
// one network message per chunk a channel holds, and a node's proxy threads post every one of
// them. At middle sizes NCCL's chunks are small (its LL128 tree chunk shrinks with the call, its
// LL chunk is 32 KiB), the messages many, and their fixed cost is what the measured sweeps show
// over latency + bytes / bandwidth: 20-45% of a 2- or 4-node all-reduce at 64 KB-8 MB.
//
// The channels and chunks are NCCL's own (its enqueue code, 2.30): a call runs on
// call_channels.h's channels; LL carries 32 KiB a chunk, LL128 576,000 bytes halved while the
// call holds too few chunks for the tree's depth, Simple 512 KiB. A channel's chunk is no more than its share
// of the call. The fixed cost per message is achieved.h's constant; docs/nccl.md says how it was
// measured.
#pragma once

#include <cstdint>

#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

struct Machine;

struct TreeMessages {
  std::uint32_t channels = 0;     // the channels the call runs on
  std::uint64_t chunk_bytes = 0;  // a channel's chunk
  double messages = 0;            // the call's bytes over the chunk
};

// `comm_channels`: the communicator's channels (comm_channels, call_channels.h).
TreeMessages tree_messages(const Machine& machine, Protocol p, std::uint32_t comm_channels, std::uint64_t bytes);

}  // namespace chakrasim::system::nccl
