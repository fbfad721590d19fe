#include "system/nccl/call_channels.h"

#include <algorithm>

#include "system/nccl/achieved.h"
#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {

namespace {

constexpr std::uint32_t kMaxChannels = 64;  // NCCL's MAXCHANNELS

// NCCL's threads a channel and bytes a thread below which it drops a channel, per protocol
// (NCCL_LL_MAX_NTHREADS 512 at NCCL_LL_THREAD_THRESHOLD 8, LL128's 640 at 8, Simple's 512 at 64).
std::uint64_t channel_threshold_bytes(Algorithm a, Protocol p, std::uint32_t ranks) {
  switch (p) {
    case Protocol::kLL: return std::uint64_t{512} * 8 * (a == Algorithm::kRing ? ranks : 1);
    case Protocol::kLL128: return 640 * 8;
    case Protocol::kSimple: return 512 * 64;
  }
  return 1;
}

}  // namespace

std::uint32_t comm_channels(const Machine& machine, std::uint32_t ring_graph_channels, double ring_graph_gb_per_s) {
  const GpuPreset& gpu = *machine.gpu;
  const bool table = gpu.table_ring_channels > 0 && machine.nodes == 1 && machine.gpus_per_node == gpu.domain;
  const std::uint32_t rings = table ? gpu.table_ring_channels : ring_graph_channels;
  std::uint32_t channels = std::min(kMaxChannels, 2 * std::max(rings, 1u));
  const std::uint32_t ranks = machine.ranks();
  if (ranks == 2) channels = std::max(channels, gpu.min_channels_two_ranks);
  if (ranks == 4) channels = std::max(channels, gpu.min_channels_four_ranks);
  if (machine.gpu->compute_capability >= 90 && machine.nodes > 1 && ring_graph_gb_per_s > 45.0 && channels < 16) {
    channels *= 2;
  }
  return channels;
}

std::uint32_t call_channels(Algorithm a, Protocol p, std::uint32_t ranks, std::uint32_t communicator_channels,
                            std::uint64_t bytes) {
  std::uint32_t channels = std::max(communicator_channels, 1u);
  const std::uint64_t per_channel = channel_threshold_bytes(a, p, ranks);
  while (channels >= 2 && bytes < channels * per_channel) --channels;
  return channels;
}

double ll_channels_us(Collective c, Algorithm a, Protocol p, std::uint32_t ranks, std::uint32_t communicator_channels,
                      std::uint64_t bytes, double channel_gb_per_s) {
  if (p != Protocol::kLL || (a != Algorithm::kRing && a != Algorithm::kTree) || !(channel_gb_per_s > 0)) return 0;
  const double sent = static_cast<double>(bytes) * (a == Algorithm::kRing ? bus_factor(c, ranks) : 2.0);
  return sent / (1000 * call_channels(a, p, ranks, communicator_channels, bytes) * channel_gb_per_s);
}

}  // namespace chakrasim::system::nccl
