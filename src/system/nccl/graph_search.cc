#include "system/nccl/graph_search.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint32_t kMaxRingChannels = 32;  // half of NCCL's 64 channels

// NCCL's ladders of per-channel speeds, GB/s, inside a node and across nodes, by generation.
constexpr std::array<double, 13> kIntraSpeeds = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr std::array<double, 11> kIntraSpeedsHopper = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr std::array<double, 12> kIntraSpeedsBlackwell = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
constexpr std::array<double, 19> kInterSpeeds = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                                 7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
constexpr std::array<double, 17> kInterSpeedsHopper = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                                       15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
constexpr std::array<double, 20> kInterSpeedsBlackwell = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                                          20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};

std::span<const double> intra_speeds(int generation) {
  if (generation >= 3) return kIntraSpeedsBlackwell;
  if (generation == 2) return kIntraSpeedsHopper;
  return kIntraSpeeds;
}
std::span<const double> inter_speeds(int generation) {
  if (generation >= 3) return kInterSpeedsBlackwell;
  if (generation == 2) return kInterSpeedsHopper;
  return kInterSpeeds;
}

// Where NCCL's search starts on `speeds`: the fastest no more than `max_bw` of which
// `min_channels` fit `total_bw` (else the slowest).
std::size_t start_index(std::span<const double> speeds, double max_bw, std::uint32_t min_channels, double total_bw) {
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (speeds[i] > max_bw || speeds[i] * min_channels > total_bw)) ++i;
  return i;
}

// NCCL's search, reduced to what decides its outcome on a DGX-like node: from the fastest speed
// a channel may take, the speed that packs the most channels x speed within the links (it stops
// going slower once a speed is under half the best), then doubling the channels at half speed
// when they are fast and few, then as fast as the doubled count allows.
Graph search(std::span<const double> speeds, std::uint32_t min_channels, std::uint32_t max_channels, double max_bw,
             double total_bw, std::uint32_t (*fit)(double speed, const void* context), const void* context,
             int generation, bool may_duplicate) {
  std::size_t i = start_index(speeds, max_bw, min_channels, total_bw);
  std::uint32_t best_channels = 0;
  double best_speed = 0;
  for (;;) {
    const std::uint32_t channels = std::min(max_channels, fit(speeds[i], context));
    if (channels >= min_channels && channels * speeds[i] > best_channels * best_speed) {
      best_channels = channels;
      best_speed = speeds[i];
    }
    if (best_channels > 0 && best_channels * best_speed >= total_bw) break;
    if (i + 1 < speeds.size() && (best_channels == 0 || speeds[i + 1] / best_speed > .49)) {
      ++i;
      continue;
    }
    break;
  }
  if (best_channels == 0) return {};
  Graph g{best_channels, best_speed, best_speed, true};
  const bool fast_and_few = !(generation >= 2 && best_speed < 50.0 && best_channels > 4);
  if (may_duplicate && best_speed >= 25.0 && fast_and_few) {
    const std::uint32_t doubled = std::min(2 * best_channels, max_channels);
    const double divisor = std::ceil(static_cast<double>(doubled) / best_channels);
    g = Graph{doubled, best_speed / divisor, best_speed / divisor, true};
    // Then faster per channel while the doubled count still fits.
    std::size_t k = 0;
    while (k + 1 < speeds.size() && speeds[k] > g.bw_intra) ++k;
    while (k > 0 && fit(speeds[k - 1], context) >= g.channels && speeds[k - 1] <= max_bw) {
      --k;
      g.bw_intra = g.bw_inter = speeds[k];
    }
  }
  return g;
}

struct Links {
  double scale_up = 0;  // NCCL's figure for one GPU's NVLinks, GB/s
  double nic = 0;       // one NIC, GB/s
  std::uint32_t nics = 0;
};

std::uint32_t fit_intra(double speed, const void* context) {
  const auto& l = *static_cast<const Links*>(context);
  return static_cast<std::uint32_t>(std::floor(l.scale_up / speed + 1e-9));
}
std::uint32_t fit_inter(double speed, const void* context) {
  const auto& l = *static_cast<const Links*>(context);
  const auto by_nics = static_cast<std::uint32_t>(l.nics * std::floor(l.nic / speed + 1e-9));
  return std::min(by_nics, fit_intra(speed, context));
}

// NCCL's NVLS search (search.cc, 2.30): one channel per head, every GPU pulling each head's
// share through its links to the switches and a head twice its own, so (heads + 1) x the intra
// speed must fit one GPU's links; across nodes each head also sends through its own NIC at the
// inter speed. Pass 1 starts at the fastest speed within the links x G/(G-1) for its least
// channels (every head in one node, one across nodes; the inter ladder there, at most the NIC's
// rate) and goes slower until the heads fit; if none does, NVLS has no graph. Pass 2 raises the
// inter speed a step at a time while it is under twice the intra one and the search still
// succeeds; then NCCL tries the next intra speed, which never fits here (pass 1 took the fastest
// that does), and stops. In one node nothing carries the inter speed, so it ends at the first
// speed of at least twice the intra one or the ladder's top (8 H100s: 40 / 60 GB/s), and NCCL's
// tuning takes that as NVLS's ceiling. Needs gpus >= 2.
Graph nvls_search(const Links& links, std::uint32_t heads, std::uint32_t gpus, int generation, bool across_nodes) {
  const auto speeds = across_nodes ? inter_speeds(generation) : intra_speeds(generation);
  const double max_bw = across_nodes ? std::min(links.scale_up, links.nic) : links.scale_up;
  const double total_bw = links.scale_up * gpus / (gpus - 1.0);  // not a ring: no way back to close
  const std::uint32_t min_channels = across_nodes ? 1 : heads;
  const auto fits = [&](double intra, double inter) {
    return (heads + 1) * intra <= links.scale_up + 1e-9 && (!across_nodes || inter <= links.nic + 1e-9);
  };
  std::size_t i = start_index(speeds, max_bw, min_channels, total_bw);
  while (i + 1 < speeds.size() && !fits(speeds[i], speeds[i])) ++i;
  if (!fits(speeds[i], speeds[i])) return {};
  double intra = speeds[i], inter = speeds[i];  // the graph kept
  double try_intra = intra, try_inter = inter;  // the one searched next
  for (std::size_t k = i; k > 0;) {
    if (try_inter == inter && try_inter < 2 * try_intra) {
      try_inter = speeds[--k];
    } else if (try_intra == intra && try_intra < 2 * try_inter) {
      try_intra = speeds[--k];
    } else {
      break;
    }
    // NCCL keeps a found graph when its channels x inter speed grow.
    if (fits(try_intra, try_inter) && try_inter > inter) {
      intra = try_intra;
      inter = try_inter;
    }
  }
  return Graph{heads, intra, inter, true};
}
}  // namespace

int gpu_generation(int compute_capability) {
  return compute_capability >= 100 ? 3 : compute_capability >= 90 ? 2 : compute_capability >= 80 ? 1 : 0;
}

std::array<Graph, kAlgorithms> nccl_graphs(const Machine& m) {
  check_machine(m);
  const int generation = gpu_generation(m.gpu->compute_capability);
  const std::uint32_t gpus = m.gpus_per_node;
  // NCCL's own figure for a GPU's links (a lone GPU: its local bandwidth, never the limit).
  constexpr double kLocalBw = 5000;
  Links links{gpus == 1 ? kLocalBw : m.gpu->nccl_link_gb_per_s * (m.gpu->nvswitch ? m.gpu->scale_up_links : 1), 0, 0};
  if (m.nodes > 1) links = {links.scale_up, m.nic->line_gb_per_s, m.nics_per_node};
  std::array<Graph, kAlgorithms> graphs{};
  const auto at = [](Algorithm a) { return static_cast<std::size_t>(a); };
  Graph ring;
  if (m.nodes == 1) {
    ring = gpus == 1 ? Graph{1, links.scale_up, links.scale_up, true}
                     : search(intra_speeds(generation), 1, kMaxRingChannels, links.scale_up, links.scale_up, fit_intra,
                              &links, generation, true);
  } else {
    const double max_bw = std::min(links.scale_up, links.nic);
    ring = search(inter_speeds(generation), 1, kMaxRingChannels, max_bw, links.nics * links.nic, fit_inter, &links,
                  generation, true);
  }
  ring.same_channels = m.nodes == 1 && m.gpu->nvswitch;
  graphs[at(Algorithm::kRing)] = ring;
  graphs[at(Algorithm::kTree)] = ring;  // the same count of channels as the ring, as NCCL asks
  graphs[at(Algorithm::kPat)] = ring;
  graphs[at(Algorithm::kCollNetChain)] = ring;
  // Across nodes NCCL finds NVLS's and CollNet direct's heads as NICs with a GPU of their own:
  // no more heads than NICs.
  const std::uint32_t head_gpus = m.nodes > 1 ? std::min(gpus, m.nics_per_node) : gpus;
  if (m.nodes > 1) {
    Graph direct = ring;
    direct.channels = std::min(kMaxDirectArity + 1, head_gpus);
    graphs[at(Algorithm::kCollNetDirect)] = direct;
  }
  if (m.gpu->nvswitch && m.gpu->nvls && generation >= 2 && gpus >= 2) {
    const Graph nvls = nvls_search(links, std::min(kMaxNvlsArity, head_gpus), gpus, generation, m.nodes > 1);
    graphs[at(Algorithm::kNvls)] = nvls;
    graphs[at(Algorithm::kNvlsTree)] = nvls;
  }
  return graphs;
}

}  // namespace chakrasim::system::nccl
