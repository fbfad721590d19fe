#include "system/nccl/p2p_channels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>

#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {

namespace {

constexpr std::uint32_t kMaxChannels = 64;   // NCCL's MAXCHANNELS
constexpr std::uint32_t kPeersPerBatch = 8;  // NCCL_MAX_DEV_WORK_P2P_PER_BATCH
// NCCL_P2P_PER_CHANNEL_NET_BW's default: what NCCL sizes a network peer's channels by, and what
// one carries. A channel's sends across nodes go chunk by chunk through its proxy and the NIC, so
// one runs below the rate it reaches over NVLink: a send/receive on 1 channel a peer across 10
// nodes of 8 H100s measured 15.1-15.2 GB/s, on 2 channels a peer (10 nodes of 1, 2 and 4 GPUs)
// 24.5-26.3 (docs/nccl.md).
constexpr double kNetChannelGbPerS = 14;
constexpr std::uint64_t kNvlinkChunk = 512 * 1024, kNetChunk = 128 * 1024;  // NCCL_P2P_{NVL,NET}_CHUNKSIZE

std::uint32_t pow2_up(std::uint32_t v) { return std::bit_ceil(std::max(v, 1u)); }
std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// `x`'s low `bits` bits in reverse order (NCCL's reverseBits).
std::uint32_t reverse_low_bits(std::uint32_t x, std::uint32_t bits) {
  std::uint32_t reversed = 0;
  for (std::uint32_t i = 0; i < bits; ++i) reversed |= ((x >> i) & 1u) << (bits - 1 - i);
  return reversed;
}

struct P2pShape {
  std::uint32_t p2p_channels = 1;  // the communicator's, for p2p
  std::uint32_t per_peer = 1;      // the most channels a peer's op may take
  std::uint32_t first = 1;         // what it starts with
  bool network = false;
  std::uint64_t chunk = kNvlinkChunk;
};

P2pShape p2p_shape(const Machine& m, std::uint32_t communicator_channels) {
  P2pShape s;
  const std::uint32_t ranks = m.ranks();
  const std::uint32_t p2p_channels = pow2_up(std::min(communicator_channels, kMaxChannels));
  s.p2p_channels = p2p_channels;
  s.network = m.nodes > 1;
  // A peer over NVLink may take two channels a link to it (every link through NVSwitches, one in a
  // full mesh; in one node of RCCL's MI300X eight); over the network, one for every 14 GB/s of
  // the GPU's NIC (at least 1): the least over the peers, so across nodes two a link.
  const std::uint32_t per_link = m.nodes == 1 ? m.gpu->p2p_channels_per_link : 2;
  std::uint32_t per_peer = per_link * (m.gpu->nvswitch ? m.gpu->scale_up_links : 1);
  if (m.nodes > 1) {
    const auto nic_gb_per_s = static_cast<std::uint32_t>(m.nic->line_gb_per_s);
    per_peer = std::min(per_peer, std::max(1u, (nic_gb_per_s + 13) / static_cast<std::uint32_t>(kNetChannelGbPerS)));
  }
  per_peer = pow2_up(per_peer);
  if (m.nodes > 1) {
    // Across nodes every peer should fit one round of batches.
    while (per_peer * ((ranks + kPeersPerBatch - 1) / kPeersPerBatch) > p2p_channels && per_peer > 1) per_peer /= 2;
    s.chunk = kNetChunk;
  } else {
    per_peer = std::min(per_peer, p2p_channels);
  }
  s.per_peer = per_peer;
  s.first = per_peer;
  while (s.first * ranks > p2p_channels && s.first > 1) s.first /= 2;
  return s;
}

// What the channels that bind a call carry each, GB/s: across nodes, those to the network's peers
// at the network's channel rate where that is slower (LL's is not).
double binding_channel_gb_per_s(const P2pShape& s, double channel_gb_per_s) {
  return s.network ? std::min(channel_gb_per_s, kNetChannelGbPerS) : channel_gb_per_s;
}

std::uint32_t op_channels(const P2pShape& s, std::uint64_t peer_bytes) {
  if (peer_bytes == 0) return 1;
  const std::uint64_t min_part = s.network ? s.chunk / 2 : s.chunk / 8;
  const std::uint64_t max_part = s.network ? s.chunk : s.chunk * 32;
  auto channels = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.first, ceil_div(peer_bytes, min_part)));
  std::uint64_t part = std::max(min_part, ceil_div(peer_bytes, channels));
  while (part > max_part && channels <= s.per_peer / 2) {
    channels *= 2;
    part = ceil_div(peer_bytes, channels);
  }
  return channels;
}

}  // namespace

std::uint32_t p2p_op_channels(const Machine& machine, std::uint32_t communicator_channels, std::uint64_t peer_bytes) {
  return op_channels(p2p_shape(machine, communicator_channels), peer_bytes);
}

double p2p_channels_us(const Machine& machine, Collective c, Protocol p, std::uint32_t communicator_channels,
                       std::uint64_t bytes, double channel_gb_per_s) {
  if (p == Protocol::kLL128 || !(channel_gb_per_s > 0)) return 0;
  const std::uint32_t ranks = machine.ranks();
  const P2pShape shape = p2p_shape(machine, communicator_channels);
  const double rate = binding_channel_gb_per_s(shape, channel_gb_per_s);
  if (c == Collective::kSendRecv) {
    return static_cast<double>(bytes) / (1000 * op_channels(shape, bytes) * rate);
  }
  if (c != Collective::kAllToAll || ranks < 2) return 0;
  // A piece to each other member. NCCL sends them in rounds, round r to rank + r (round 0 is the
  // copy to itself, which no link carries and which costs next to nothing), and puts round r's parts
  // on channels base + part: base the round's number (across nodes, that of its group of peers)
  // with its bits reversed over the p2p channels. A channel runs its parts at its one rate, so the
  // busiest binds: with 4 channels a peer on 8 GPUs, 28 channels carry one part each; with 8 or 16,
  // the rounds overlap and a channel carries 2 or 4; with 32, each carries all 7. Across nodes NCCL
  // sizes a peer's channels so that the groups' channels do not overlap, and a group of another
  // node's peers outlasts the node's own, at the network's rate: that rate times the busiest.
  const std::uint64_t piece = bytes / ranks;
  const std::uint32_t channels = op_channels(shape, piece);
  // Across nodes a group of rounds (8, or what divides the GPUs a node) shares one base.
  const std::uint32_t rounds_a_base = machine.nodes < 2 ? 1
                                      : machine.gpus_per_node % kPeersPerBatch == 0
                                          ? kPeersPerBatch
                                          : std::gcd(kPeersPerBatch, machine.gpus_per_node);
  const auto bits = static_cast<std::uint32_t>(std::countr_zero(shape.p2p_channels));
  std::array<std::uint32_t, kMaxChannels> parts_on{};
  for (std::uint32_t first = 0; first < ranks; first += rounds_a_base) {
    const std::uint32_t rounds = std::min(rounds_a_base, ranks - first) - (first == 0 ? 1 : 0);  // less the copy
    const std::uint32_t base = reverse_low_bits(first / rounds_a_base, bits);
    for (std::uint32_t part = 0; part < channels; ++part) parts_on[(base + part) & (shape.p2p_channels - 1)] += rounds;
  }
  const std::uint32_t busiest = *std::max_element(parts_on.begin(), parts_on.end());
  return static_cast<double>(piece) / channels * busiest / (1000 * rate);
}

double all_to_all_first_step_us(const Machine& machine, Protocol p, std::uint32_t communicator_channels,
                                std::uint64_t bytes, double channel_gb_per_s) {
  const std::uint32_t ranks = machine.ranks();
  if (p != Protocol::kSimple || !(channel_gb_per_s > 0) || ranks < 2) return 0;
  const P2pShape shape = p2p_shape(machine, communicator_channels);
  const std::uint64_t piece = bytes / ranks;
  const std::uint64_t part = ceil_div(piece, op_channels(shape, piece));
  return static_cast<double>(std::min(part, shape.chunk)) / (1000 * binding_channel_gb_per_s(shape, channel_gb_per_s));
}

}  // namespace chakrasim::system::nccl
