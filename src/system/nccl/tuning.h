// How NCCL chooses an algorithm and protocol: its tuning model, as NCCL 2.30 (src/graph/
// tuning.cc, read to learn it; written here anew) computes it. For every collective, algorithm
// and protocol a latency (us) and a bandwidth (GB/s), from the topology graphs NCCL's search
// finds; a call's predicted time is latency + bytes / bandwidth (with NCCL's corrections for trees
// at middle sizes and rings across nodes), and NCCL runs the pair that predicts least.
//
// This model chooses; it does not time. Its bandwidths are NCCL's (conservative, per channel)
// and its NVLS figures can be well below what NVLS delivers (8 B200s: 720 GB/s busbw rated, 840
// delivered): achieved.h times the chosen pair.
//
// The graphs it rates come from graph_search.h.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "system/nccl/graph_search.h"
#include "system/nccl/hardware.h"
#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

// The machine one communicator spans.
struct Machine {
  const GpuPreset* gpu = nullptr;
  std::uint32_t gpus_per_node = 8;
  std::uint32_t nodes = 1;
  const NicPreset* nic = nullptr;
  std::uint32_t nics_per_node = 8;
  bool amd_cpu = false;  // NCCL's LL ceiling and network post overhead depend on the host CPU
  bool collnet = false;  // in-network reduction (SHARP in the InfiniBand switches) available
  bool pxn = true;       // all-to-all across nodes relayed by the GPU on the destination's rail
  // Added to every call's time, not to what NCCL's choice weighs: what a platform's launch,
  // proxy and network add to NCCL's model constants (an 8-byte call's measured time less the
  // model's). NCCL's constants fit DGX-like nodes; cloud and shared hosts show more.
  double platform_latency_us = 0;
  std::uint32_t ranks() const { return gpus_per_node * nodes; }
  // What one GPU's scale-up links carry to the other GPUs of its node, GB/s: all of them through
  // NVSwitches; in a full mesh (MI300X) only the links to GPUs in the node, one to each (at least
  // one, for a lone GPU whose links carry nothing).
  double scale_up_gb_per_s() const {
    if (gpu->nvswitch) return gpu->scale_up_gb_per_s();
    return gpu->link_gb_per_s * std::max(1u, std::min(gpu->scale_up_links, gpus_per_node - 1));
  }
  // What a call takes beyond NCCL's model: the platform's latency and the GPU generation's; a
  // point-to-point call's grows with the `p2p_ops` sends and receives it enqueues.
  double added_latency_us(bool point_to_point, std::uint32_t p2p_ops = 0) const {
    return platform_latency_us +
           (point_to_point ? gpu->p2p_call_latency_us + p2p_ops * gpu->p2p_op_latency_us : gpu->call_latency_us);
  }
  // The sends and receives an all-to-all (one of each to every rank, itself too) or a
  // send/receive (one of each) enqueues, as nccl-tests calls them.
  std::uint32_t p2p_ops(bool all_to_all) const { return all_to_all ? 2 * ranks() : 2; }
};
// Throws Error naming what does not fit: no GPU, zero GPUs or nodes, more GPUs per node than the
// GPU's scale-up domain holds, several nodes without a NIC.
void check_machine(const Machine& machine);

class TuningModel {
 public:
  TuningModel(const Machine& machine, const Enabled& enabled);

  // Latency in us and algorithm bandwidth in GB/s NCCL gives the pair (0: not available).
  double latency_us(Collective c, Algorithm a, Protocol p) const { return latency_[index(c)][idx(a)][idx(p)]; }
  // The steps inside a node over NVLink that latency counts (a ring's steps less its network
  // ones, a tree's chain up and down, one for NVLS), and what it charges each beyond the link's
  // hop latency: a ring across nodes charges each the network's post overhead where that is more.
  struct IntraSteps {
    double count = 0;
    double slack_us = 0;
  };
  IntraSteps intra_steps(Collective c, Algorithm a, Protocol p) const { return intra_steps_[index(c)][idx(a)][idx(p)]; }
  double bandwidth(Collective c, Algorithm a, Protocol p) const { return bandwidth_[index(c)][idx(a)][idx(p)]; }
  // The bandwidth NCCL's model gives the pair whether or not it is switched off here (by NCCL_ALGO,
  // NCCL_PROTO, or where NCCL would not run it): what a protocol's ratio to another is taken from.
  double unswitched_bandwidth(Collective c, Algorithm a, Protocol p) const {
    return unswitched_bandwidth_[index(c)][idx(a)][idx(p)];
  }
  // NCCL's predicted time of one call of `bytes`, in us; nullopt when the pair is not available.
  std::optional<double> predicted_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes) const;

  struct Choice {
    Algorithm algorithm = Algorithm::kRing;
    Protocol protocol = Protocol::kSimple;
    bool point_to_point = false;  // all-to-all and send/receive: NCCL's p2p path, no algorithm
    bool operator==(const Choice&) const = default;
  };
  // What NCCL runs for a call of `bytes` (the buffer nccl-tests sizes: the all-reduce's, the
  // all-gather's output). Throws Error when NCCL_ALGO / NCCL_PROTO leave nothing available.
  Choice choose(Collective c, std::uint64_t bytes) const;
  // The MSCCL schedule the GPU's library runs for the call (msccl.h), if it has one and NCCL_ALGO
  // (MSCCL among the algorithms) leaves it on; else nullptr. NCCL_PROTO does not reach it.
  const MscclSchedule* msccl_schedule(Collective c, std::uint64_t bytes) const;

  // NCCL's point-to-point path (all-to-all, send/receive) has no tuning table: its latency here is
  // a ring's fixed cost plus one step over the network, and LL's within a node, Simple's 1 us
  // more there (its fence and separate flag: an 8x B200 node's send/receive and all-to-all both
  // start 0.9-1.0 us higher with Simple than with LL, beside the bytes they carry).
  double p2p_latency_us(Protocol p) const;

  // The part of NVLS-tree's latency NCCL gives the tree's levels across nodes, us: a network hop
  // up and one down each level, 2 x log2 nodes x its hop latency for the protocol.
  double nvls_tree_levels_latency_us(Protocol p) const;

  // NCCL's latency for one step of the pair over the node's own links (its hwLat for NVLink, or
  // PCI where the graph has no NVLink), us: 0.6 for a ring's LL step over NVLink.
  double link_step_us(Algorithm a, Protocol p) const;

  // NCCL's ceiling on one channel of a ring's LL128, GB/s, for the generation (its
  // perChMaxRingLL128Bws): what its own model lets one SM's thread block carry.
  double ring_ll128_channel_gb_per_s() const;

  const Graph& graph(Algorithm a) const { return graphs_[idx(a)]; }
  const Machine& machine() const { return machine_; }
  const Enabled& enabled() const { return enabled_; }

 private:
  static std::size_t index(Collective c) { return static_cast<std::size_t>(c); }
  static std::size_t idx(Algorithm a) { return static_cast<std::size_t>(a); }
  static std::size_t idx(Protocol p) { return static_cast<std::size_t>(p); }
  void tune(Collective c);
  // The column of NCCL's per-generation ceilings for this many nodes: 1, 2, more.
  std::size_t node_column() const;

  Machine machine_;
  Enabled enabled_;
  int generation_ = 2;  // NCCL's index: 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell
  std::array<Graph, kAlgorithms> graphs_{};
  std::array<std::array<std::array<double, kProtocols>, kAlgorithms>, kCollectives> latency_{}, bandwidth_{},
      unswitched_bandwidth_{};
  std::array<std::array<std::array<IntraSteps, kProtocols>, kAlgorithms>, kCollectives> intra_steps_{};
};

}  // namespace chakrasim::system::nccl
