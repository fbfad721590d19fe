#include "system/nccl/tree_messages.h"

#include <algorithm>
#include <bit>

#include "system/nccl/call_channels.h"
#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {

namespace {

// NCCL's per-protocol buffers over its 8 steps: LL's lines hold 8 bytes of data in 16, LL128's
// 120 in 128; a tree takes one step a chunk.
constexpr std::uint64_t kLLChunkBytes = 8 * 512 * 16 / 2;                           // 32 KiB
constexpr std::uint64_t kLL128ChunkBytes = std::uint64_t{120} * 640 * 8 / 16 * 15;  // 576,000
constexpr std::uint64_t kSimpleChunkBytes = 4 * 1024 * 1024 / 8;                    // 512 KiB

}  // namespace

TreeMessages tree_messages(const Machine& machine, Protocol p, std::uint32_t comm_channels, std::uint64_t bytes) {
  TreeMessages m;
  m.channels = call_channels(Algorithm::kTree, p, machine.ranks(), comm_channels, bytes);
  std::uint64_t chunk = p == Protocol::kLL       ? kLLChunkBytes
                        : p == Protocol::kSimple ? kSimpleChunkBytes
                                                 : kLL128ChunkBytes;
  if (p == Protocol::kLL128) {
    // NCCL halves the chunk while the call holds fewer chunks a channel than the tree's depth
    // wants: (1 + log2 nodes + ppn / 10) x 64 / ppn above 128 KiB, x 16 / ppn above 32 KiB.
    const double per_node = machine.gpus_per_node;
    const double depth = std::bit_width(machine.nodes) + 0.1 * per_node;  // 1 + floor(log2 nodes) + ...
    const auto chunks = [&] { return static_cast<double>(bytes / (std::uint64_t{m.channels} * chunk)); };
    while (chunks() < depth * 64 / per_node && chunk > 131072) chunk /= 2;
    while (chunks() < depth * 16 / per_node && chunk > 32768) chunk /= 2;
  }
  const std::uint64_t share = (bytes + m.channels - 1) / m.channels;
  m.chunk_bytes = std::max<std::uint64_t>(1, std::min(chunk, share));
  m.messages = static_cast<double>(bytes) / static_cast<double>(m.chunk_bytes);
  return m;
}

}  // namespace chakrasim::system::nccl
