#include "system/nccl/tuning.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "system/nccl/call_channels.h"
#include "system/nccl/graph_search.h"

namespace chakrasim::system::nccl {
namespace {

// ---- NCCL's constants (2.30), by algorithm in NCCL's order and protocol LL, LL128, Simple -------

using PerAlgorithm = std::array<std::array<double, kProtocols>, kAlgorithms>;
// Fixed cost of a call, us.
constexpr PerAlgorithm kBaseLatency = {
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}}};
// Cost of a step over NVLink, PCI and the network, us.
constexpr std::array<PerAlgorithm, 3> kHopLatency = {{
    {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}}},
    {{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}}},
    {{{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}},
}};
enum Hop { kNvlinkHop, kPciHop, kNetHop };
// Ceilings by GPU generation (Volta, Ampere, Hopper, Blackwell) and nodes (1, 2, more), GB/s.
using PerGeneration = std::array<std::array<double, 3>, 4>;
constexpr PerGeneration kLLMax = {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}}};
constexpr PerGeneration kRingLL128PerChannel = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
constexpr PerGeneration kTreeLL128PerChannel = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
constexpr PerGeneration kTreePerChannel = {
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
constexpr PerGeneration kNvlsTreePerChannel = {
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};
constexpr std::array<double, 4> kNvlsEfficiency = {0.0, 0.0, 0.85, 0.74};
// Trees at middle sizes do worse than their model: NCCL scales their bandwidth by these, per
// power of two of the size from 64 B.
constexpr std::array<std::array<double, 24>, kProtocols> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};
constexpr std::uint64_t kP2pLLThresholdBytes = 16384;
constexpr std::uint64_t kMaxRanks = 1 << 20;  // GPUs in one communicator: far beyond any machine built
// Enabled::ring_last's factor: NCCL's, large enough to put the ring behind every other choice.
constexpr double kRingLastFactor = 1024;

int log2_floor(std::uint64_t n) {  // -1 for 0, as NCCL's log2i
  int out = -1;
  for (; n != 0; n >>= 1) ++out;
  return out;
}

}  // namespace

void check_machine(const Machine& m) {
  if (m.gpu == nullptr) throw Error("no GPU given; expected one of " + gpu_preset_names());
  if (m.gpus_per_node == 0) throw Error("--gpus-per-node is 0; expected 1 or more");
  if (m.nodes == 0) throw Error("--nodes is 0; expected 1 or more");
  if (m.gpus_per_node * std::uint64_t{m.nodes} < 2) {
    throw Error("one GPU in all: NCCL's collectives need 2 or more; expected more --gpus-per-node or --nodes");
  }
  if (m.gpus_per_node * std::uint64_t{m.nodes} > kMaxRanks) {
    throw Error(fmt::format("{} nodes of {} GPUs: more than {} ranks; expected fewer --nodes", m.nodes, m.gpus_per_node,
                            kMaxRanks));
  }
  if (m.gpus_per_node > m.gpu->domain) {
    throw Error(fmt::format("{} GPUs per node, but a {} scale-up domain holds {}; expected at most {}", m.gpus_per_node,
                            m.gpu->name, m.gpu->domain, m.gpu->domain));
  }
  if (!(m.platform_latency_us >= 0) || !std::isfinite(m.platform_latency_us)) {
    throw Error(fmt::format("platform latency {} us; expected a number of us, 0 or more", m.platform_latency_us));
  }
  if (m.nodes > 1 && (m.nic == nullptr || m.nics_per_node == 0)) {
    throw Error("several nodes need a NIC; expected --nic with one of " + nic_preset_names());
  }
}

TuningModel::TuningModel(const Machine& machine, const Enabled& enabled)
    : machine_(machine), enabled_(enabled), graphs_(nccl_graphs(machine)) {
  generation_ = gpu_generation(machine.gpu->compute_capability);
  for (std::size_t c = 0; c < 5; ++c) tune(static_cast<Collective>(c));
}

std::size_t TuningModel::node_column() const { return machine_.nodes <= 2 ? machine_.nodes - 1 : 2; }

double TuningModel::ring_ll128_channel_gb_per_s() const {
  return kRingLL128PerChannel[static_cast<std::size_t>(generation_)][node_column()];
}

double TuningModel::link_step_us(Algorithm a, Protocol p) const {
  return kHopLatency[graphs_[idx(a)].nvlink ? kNvlinkHop : kPciHop][idx(a)][idx(p)];
}

double TuningModel::nvls_tree_levels_latency_us(Protocol p) const {
  // NVLS needs several GPUs a node, so the hop is NVLS-tree's own (not the tree's, as with one).
  return 2 * log2_floor(machine_.nodes) * kHopLatency[kNetHop][idx(Algorithm::kNvlsTree)][idx(p)];
}

void TuningModel::tune(Collective coll) {
  const double ranks = machine_.ranks(), nodes = machine_.nodes;
  const double per_node = ranks / nodes;
  const bool all_reduce = coll == Collective::kAllReduce;
  const bool gather_scatter = coll == Collective::kAllGather || coll == Collective::kReduceScatter;
  const double steps = all_reduce ? 2 * (ranks - 1) : gather_scatter ? ranks - 1 : ranks;
  const std::size_t by_nodes = node_column();
  const std::size_t gen = static_cast<std::size_t>(generation_);
  const double ll_max = kLLMax[nodes == 1 ? gen : machine_.amd_cpu ? 1 : 0][by_nodes];
  const int log_nodes = log2_floor(static_cast<std::uint64_t>(nodes));
  // PAT: all-gather and reduce-scatter with one GPU per node.
  const bool pat = machine_.nodes == machine_.ranks();
  for (std::size_t ai = 0; ai < kAlgorithms; ++ai) {
    const auto a = static_cast<Algorithm>(ai);
    if ((coll == Collective::kBroadcast || coll == Collective::kReduce) && a != Algorithm::kRing) continue;
    if (gather_scatter && a != Algorithm::kPat && a != Algorithm::kRing && a != Algorithm::kNvls &&
        a != Algorithm::kCollNetDirect)
      continue;
    if (all_reduce && a == Algorithm::kPat) continue;
    const Graph& g = graphs_[ai];
    if (g.channels == 0) continue;
    const double channels = g.channels;
    const bool nvls = a == Algorithm::kNvls || a == Algorithm::kNvlsTree;
    const bool collnet = a == Algorithm::kCollNetDirect || a == Algorithm::kCollNetChain;
    for (std::size_t pi = 0; pi < kProtocols; ++pi) {
      const auto p = static_cast<Protocol>(pi);
      const bool simple = p == Protocol::kSimple;
      if (nvls && !simple) continue;
      if (a == Algorithm::kPat && (!simple || !pat)) continue;
      double bw = nodes <= 2 || collnet ? g.bw_intra : g.bw_inter;
      if (nvls) {
        if (g.channels < 2) continue;
        double intra = g.bw_intra * kNvlsEfficiency[gen] * (channels - 1) / channels;
        intra *= all_reduce ? 2.0 : (per_node - 1) / per_node;  // an all-reduce pipelines its two halves
        const double inter = g.bw_inter * (nodes <= 2 && a == Algorithm::kNvlsTree ? 2 : 1);
        bw = std::min(intra, inter);
        if (a == Algorithm::kNvlsTree) bw = std::min(bw, kNvlsTreePerChannel[gen][by_nodes]);
      }
      double bus = channels * bw;
      if (a == Algorithm::kRing && p == Protocol::kLL) bus = std::min(ll_max, bus * .5);
      if (a == Algorithm::kRing && p == Protocol::kLL128) {
        bus = std::min(bus * .92, channels * kRingLL128PerChannel[gen][by_nodes]);
      }
      if (a == Algorithm::kTree && all_reduce) bus = std::min(bus * .92, channels * kTreePerChannel[gen][by_nodes]);
      if (a == Algorithm::kTree && p == Protocol::kLL) bus = std::min(bus / 3.8, ll_max);
      if (a == Algorithm::kTree && p == Protocol::kLL128) {
        bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), channels * kTreeLL128PerChannel[gen][by_nodes]);
      }
      // One GPU a node: NCCL's tree search takes its plain tree pattern, which it rates lower.
      if (a == Algorithm::kTree && per_node == 1) bus *= .85;
      if (a == Algorithm::kPat) bus *= .75;
      if (collnet && !simple) bus = 0;
      if (a == Algorithm::kCollNetDirect && simple) {
        if (gather_scatter) {
          bus = per_node * std::min(g.bw_intra, g.bw_inter * 0.9);
        } else {
          double gpus_per_nic = per_node / channels;  // full speed needs a NIC per GPU
          gpus_per_nic -= (gpus_per_nic - 1) / 2;
          bus /= gpus_per_nic;
          if (generation_ >= 2) bus *= .85;
        }
      }
      // Across nodes, all-gather and reduce-scatter by NVLS or CollNet need the network's own
      // collectives (a CollNet plugin with them), which this model does not assume.
      if ((a == Algorithm::kNvls || a == Algorithm::kCollNetDirect) && gather_scatter && nodes > 1) bus = 0;
      if (!(a != Algorithm::kRing && gather_scatter)) {
        bus *= a == Algorithm::kRing || nvls ? ranks / steps : .5;  // bus bandwidth to algorithm bandwidth
      }
      // Latency.
      const Hop intra_hop = g.nvlink ? kNvlinkHop : kPciHop;
      double latency = kBaseLatency[ai][pi];
      double intra_lat = kHopLatency[intra_hop][ai][pi];
      const double inter_lat = per_node == 1 ? kHopLatency[kNetHop][static_cast<std::size_t>(Algorithm::kTree)][pi]
                                             : kHopLatency[kNetHop][ai][pi];
      double intra_steps = 0, intra_slack = 0;
      switch (a) {
        case Algorithm::kRing: {
          if (coll == Collective::kBroadcast || coll == Collective::kReduce) {
            // Channels that replay one order pipeline a chunk down the ring behind the last: one
            // step's latency. Different channels pay a chunk's latency at every step.
            const Hop hop = nodes == 1 ? intra_hop : kNetHop;
            if (g.same_channels) {
              latency += kHopLatency[hop][ai][pi];
            } else {
              const double step =
                  simple ? kHopLatency[hop][static_cast<std::size_t>(Algorithm::kTree)][pi] : kHopLatency[hop][ai][pi];
              latency += steps * step;
            }
            if (nodes == 1) intra_steps = g.same_channels ? 1 : steps;
          } else {
            double net_overhead = 0;  // posting each network send, us
            if (nodes > 1) net_overhead = (machine_.amd_cpu ? 2.0 : 1.0) * (simple ? 3 : 1);
            intra_slack = std::max(0.0, net_overhead - intra_lat);
            intra_lat = std::max(intra_lat, net_overhead);
            const double inter_steps = nodes == 1 ? 0 : all_reduce ? 2 * (nodes - 1) : nodes - 1;
            latency += (steps - inter_steps) * intra_lat + inter_steps * inter_lat;
            intra_steps = steps - inter_steps;
          }
          break;
        }
        case Algorithm::kTree:
          if (all_reduce) {
            latency += 2 * ((per_node - 1) * intra_lat + log_nodes * inter_lat);
            intra_steps = 2 * (per_node - 1);
          }
          break;
        case Algorithm::kCollNetDirect:
          latency += 2 * (std::min(1.0, per_node - 1) * intra_lat + (per_node - 1) * 0.4) + inter_lat;
          intra_steps = 2 * std::min(1.0, per_node - 1);
          break;
        case Algorithm::kCollNetChain:
          latency += 2 * (per_node - 1) * intra_lat + inter_lat;
          intra_steps = 2 * (per_node - 1);
          break;
        case Algorithm::kNvls:
          latency = intra_lat + (nodes > 1 ? inter_lat : 0);
          intra_steps = 1;
          break;
        case Algorithm::kNvlsTree:
          latency += intra_lat + nvls_tree_levels_latency_us(p);
          intra_steps = 1;
          break;
        case Algorithm::kPat:
          if (gather_scatter) latency += log_nodes * (inter_lat / 3.5) + ranks * 2.8;
          break;
        case Algorithm::kMsccl: break;  // no graph: never reached (RCCL's schedules, msccl.h)
      }
      // What is switched off: by the user, or by NCCL where it does not apply.
      bool on = enabled_.algorithms[index(coll)][ai] && enabled_.protocols[index(coll)][pi];
      if (machine_.nodes == 1 && a == Algorithm::kNvlsTree) on = false;
      if (!machine_.collnet && (collnet || (a == Algorithm::kNvls && machine_.nodes > 1))) on = false;
      if (!machine_.gpu->nvswitch && a == Algorithm::kCollNetDirect) on = false;
      // CollNet runs up to 8 GPUs a node; NVLS other than an all-reduce up to NCCL's 32.
      if (collnet && machine_.gpus_per_node > kMaxDirectArity + 1) on = false;
      if (nvls && !all_reduce && machine_.gpus_per_node > kMaxNvlsArity) on = false;
      // LL128 only over NVLink (NCCL enables it by default on Ampere and later).
      if (p == Protocol::kLL128 && (!g.nvlink || generation_ < 1)) on = false;
      // RCCL keeps LL128 off by default on MI300X (it enables it only on MI250X).
      if (p == Protocol::kLL128 && !machine_.gpu->ll128_by_default && !enabled_.protocols_set) on = false;
      bandwidth_[index(coll)][ai][pi] = on ? bus : 0;
      unswitched_bandwidth_[index(coll)][ai][pi] = bus;
      latency_[index(coll)][ai][pi] = latency;
      if (g.nvlink) intra_steps_[index(coll)][ai][pi] = {intra_steps, intra_slack};
    }
  }
}

std::optional<double> TuningModel::predicted_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes) const {
  double bw = bandwidth(c, a, p);
  if (bw <= 0) return std::nullopt;
  double latency = latency_us(c, a, p);
  const int log_size = log2_floor(bytes >> 6);
  const bool all_reduce = c == Collective::kAllReduce;
  if (a == Algorithm::kTree && all_reduce && log_size >= 0 && log_size < 23) bw *= kTreeCorrection[idx(p)][log_size];
  // NCCL corrects Blackwell's NVLS-tree on x86 hosts (Intel or AMD), not on Grace.
  if (a == Algorithm::kNvlsTree && all_reduce && log_size >= 0 && log_size < 24 && generation_ >= 3 &&
      !machine_.gpu->arm_host) {
    bw *= kTreeCorrection[idx(p)][log_size];
  }
  // The communicator's channels (the ring graph's, doubled: call_channels.h), as NCCL counts them.
  const Graph& ring = graphs_[idx(Algorithm::kRing)];
  const double channels = comm_channels(machine_, ring.channels, ring.bw_intra);
  if (a == Algorithm::kRing && p == Protocol::kSimple && machine_.nodes > 1 && all_reduce &&
      static_cast<double>(bytes) / (channels * machine_.ranks()) >= 64) {
    latency *= generation_ < 1 ? 1.9 : 1.4;  // NCCL's plateau of rings across nodes
  }
  return latency + static_cast<double>(bytes) / (1000 * bw);
}

const MscclSchedule* TuningModel::msccl_schedule(Collective c, std::uint64_t bytes) const {
  if (!enabled_.algorithms[index(c)][idx(Algorithm::kMsccl)]) return nullptr;
  // RCCL's scheduler reads neither NCCL_PROTO nor NCCL_ALGO; here MSCCL is one of the algorithms.
  return find_msccl_schedule(machine_.gpu->msccl_schedules, c, machine_.ranks(), machine_.nodes, bytes,
                             enabled_.element_bytes, enabled_.in_place);
}

double TuningModel::p2p_latency_us(Protocol p) const {
  const std::size_t ring = idx(Algorithm::kRing);
  const Hop hop = machine_.nodes > 1 ? kNetHop : graphs_[ring].nvlink ? kNvlinkHop : kPciHop;
  if (hop == kNetHop || p == Protocol::kLL) return kBaseLatency[ring][idx(p)] + kHopLatency[hop][ring][idx(p)];
  constexpr double kSimpleOverLlUs = 1.0;
  return p2p_latency_us(Protocol::kLL) + kSimpleOverLlUs;
}

TuningModel::Choice TuningModel::choose(Collective c, std::uint64_t bytes) const {
  if (c == Collective::kAllToAll || c == Collective::kSendRecv) {
    // NCCL's p2p path: LL for small pieces, Simple above 16 KiB per peer.
    const std::uint64_t per_peer = c == Collective::kAllToAll ? bytes / machine_.ranks() : bytes;
    return {Algorithm::kRing, per_peer <= kP2pLLThresholdBytes ? Protocol::kLL : Protocol::kSimple, true};
  }
  // RCCL runs an MSCCL schedule that takes the call before its own model is asked.
  if (const MscclSchedule* s = msccl_schedule(c, bytes)) return {Algorithm::kMsccl, s->protocol, false};
  std::optional<Choice> best;
  double best_us = std::numeric_limits<double>::infinity();
  bool any = false;  // an algorithm and protocol left, whatever its time
  for (std::size_t ai = 0; ai < kAlgorithms; ++ai) {
    for (std::size_t pi = 0; pi < kProtocols; ++pi) {
      auto t = predicted_us(c, static_cast<Algorithm>(ai), static_cast<Protocol>(pi), bytes);
      any = any || t.has_value();
      if (t && enabled_.ring_last && static_cast<Algorithm>(ai) == Algorithm::kRing) *t *= kRingLastFactor;
      if (t && *t < best_us) {
        best_us = *t;
        best = Choice{static_cast<Algorithm>(ai), static_cast<Protocol>(pi), false};
      }
    }
  }
  // NCCL always has a ring: where even its Simple has no rate, the links gave none, whatever is enabled.
  const double ring_rate = unswitched_bandwidth_[index(c)][idx(Algorithm::kRing)][idx(Protocol::kSimple)];
  if (!best && (any || !(ring_rate > 0) || !std::isfinite(static_cast<double>(bytes) / ring_rate))) {
    throw Error(fmt::format("{} of {} bytes on {} x {} {}: NCCL's model gives every algorithm no finite time; check "
                            "the links' bandwidths (a network file's, or a preset scaled by one): a rate next to 0 "
                            "leaves none",
                            collective_name(c), bytes, machine_.nodes, machine_.gpus_per_node, machine_.gpu->name));
  }
  if (!best) {
    throw Error(fmt::format("no algorithm and protocol left for {} on {} x {} {}; check the algorithms and protocols "
                            "enabled (--algo, --proto)",
                            collective_name(c), machine_.nodes, machine_.gpus_per_node, machine_.gpu->name));
  }
  return *best;
}

}  // namespace chakrasim::system::nccl
