// What NCCL delivers: the time of one call, as nccl-tests measures it, of the algorithm and
// protocol NCCL's tuning model chooses (tuning.h). NCCL's model chooses well but does not time
// well (its NVLS figures are a fifth below what NVLS reaches, its per-channel ceilings are
// conservative), so the time comes from the traffic each algorithm puts on each link:
//
//   time = NCCL's latency for the pair + bytes / algorithm bandwidth,
//
// the bandwidth being what the busiest link of the algorithm allows: a GPU's scale-up links (the
// vendor's per-direction rate, times what NCCL's kernels reach of it) or a node's NICs (their
// line rate, times what a ring reaches through them); LL and LL128 keep NCCL's own ratios to
// Simple. NVLS and NVLS-tree add to this how NCCL cuts a call into loops, trees across nodes
// the fixed cost of each network message, and LL the few channels NCCL gives a small call, each
// one SM at LL's low rate: what shapes their middle and small sizes (nvls_pipeline.h,
// tree_messages.h, call_channels.h). The constants, their anchors and the error against
// them are in docs/nccl.md.
#pragma once

#include <cstdint>
#include <optional>

#include "system/nccl/nvls_pipeline.h"
#include "system/nccl/tree_messages.h"
#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {

// Shares of a link's rate NCCL's kernels reach, and their fixed costs, from public anchors
// (docs/nccl.md); a system file may set its own (nccl-ring-efficiency, ...).
struct Efficiencies {
  // The share of the scale-up rate rings reach; unset, the GPU preset's (hardware.h: 0.816 on
  // H100, from 8x H100 ring all-reduce busbw 367 GB/s of 450).
  std::optional<double> ring;
  // NVLS: the NVLink side's share before each loop's fixed cost, and that cost per chunk a
  // channel takes in a loop (one per head, a head per GPU up to NCCL's 32); unset, the GPU
  // preset's, from 8x H100 all-reduce sweeps (docs/nccl.md): at 8 GPUs, 128 KiB chunks, 450 x
  // 0.744 x 8 / 9 = 297.6 GB/s a loop of 16 MiB, 56.4 us, + 8 x 0.6 us: 480 GB/s busbw.
  std::optional<double> nvls;
  std::optional<double> nvls_chunk_us;
  // NVLS-tree's NVLink side (a node's NVLS reduce-scatter and all-gather, across nodes) as a
  // share of NVLS's in one node: three 2 x 8 H100 all-reduce sweeps, where the NICs have room,
  // peak at 0.91 of one node's NVLS rate (busbw 469, not 512). NCCL's NVLS-tree kernel gives
  // some of the block's warps to the network's sends and receives, out of those feeding the switch.
  double nvls_tree = 0.91;
  // A tree across nodes: what each network message costs a node's proxies (tree_messages.h);
  // unset, the GPU preset's (0.27 us on H100, from 2- and 4-node sweeps: docs/nccl.md).
  std::optional<double> tree_message_us;
  // LL across nodes: NCCL keeps LL's network buffers in host memory, and a send proxy reads every
  // line's flags before it posts a step (net.cc), ns per byte of lines (16 for 8 of data); from
  // the tree LL sizes (512 B-128 KB) of 2- and 4-node sweeps (docs/nccl.md).
  double ll_proxy_scan_ns = 0.3;
  // An LL channel's data rate as a share of NCCL's per-channel ceiling for LL128 on the GPU's
  // generation (call_channels.h): 0.327 x 36.7 = 12 GB/s on Hopper, from the ring LL sizes of
  // two 8x H100 all-reduce sweeps (docs/nccl.md); other generations scale with NCCL's ceiling.
  double ll_channel = 0.327;
  // A send or receive's channel (p2p_channels.h), GB/s: a send/receive between two GPUs of a node
  // runs on 4, 8 and 16 of them at 80-82, 160-170 and 300-335 GB/s on H100 and B200 nodes
  // (20.2-21.4 a channel, docs/nccl.md). A channel to a peer across the network carries NCCL's
  // own 14 GB/s where that is less (p2p_channels.h).
  double p2p_channel_gb_per_s = 21.0;
  // An all-to-all through the NVSwitches (more than one peer there): the share of the scale-up
  // rate it reaches with many channels a peer (unset, the GPU preset's: 0.776 on H100), and less
  // by this over the channels a peer has: 1 - 0.311 / channels, 0.922 at 4, 0.990 at 32. Two 8x
  // H100 clusters reach busbw 316-322 GB/s at 4 channels a peer (32-512 MiB), 336 at 8, 344 at
  // 16 and 345-348 at 32 (docs/nccl.md), where a send/receive reaches a ring's 367. Why is not
  // established; the curve is what the two clusters measured.
  std::optional<double> all_to_all;
  double all_to_all_channel_loss = 0.311;
  // The share of its line rate NCCL's collectives reach through a NIC, and its point-to-point
  // transfers (all-to-all, send/receive); unset, the NIC preset's (hardware.h). With only `nic`
  // set, point to point keeps the preset's ratio to it.
  std::optional<double> nic;
  std::optional<double> nic_p2p;
};

struct Timing {
  double us = 0;
  TuningModel::Choice choice;
};

class AchievedModel {
 public:
  AchievedModel(const Machine& machine, const Enabled& enabled, Efficiencies efficiencies = {});

  // NCCL's choice for a call of `bytes` (nccl-tests' size), and its time.
  Timing time(Collective c, std::uint64_t bytes) const;
  // The fixed part of a pair's time, us: NCCL's latency, less for NVLS-tree its levels across
  // nodes, which the pipeline times as loops instead (nvls_pipeline.h); without the platform's.
  double latency_us(Collective c, Algorithm a, Protocol p) const;
  // The time of a given pair; nullopt where NCCL could not run it here.
  std::optional<double> time_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes) const;
  // The algorithm bandwidth (GB/s) the pair reaches on large calls, and its p2p counterpart.
  double algorithm_gb_per_s(Collective c, Algorithm a, Protocol p) const;
  double p2p_gb_per_s(Collective c, Protocol p, std::uint64_t bytes) const;
  // The share of a NIC's line rate NCCL's collectives reach, and its point-to-point transfers:
  // the calibration's, else the preset's.
  double nic_share() const;
  double nic_p2p_share() const;
  // An NVLS or NVLS-tree call of `bytes` as a pipeline of NCCL's loops (nvls_pipeline.h).
  NvlsTime nvls_time(Collective c, Algorithm a, std::uint64_t bytes) const;
  // What a tree's network messages cost its proxies, us: 0 within one node. With LL, the lines a
  // channel sends up the tree and again down, each read by a send proxy.
  double tree_messages_us(Protocol p, std::uint64_t bytes) const;
  // The least time an LL call's channels take to carry it, us (call_channels.h); 0 for others.
  double ll_channels_us(Collective c, Algorithm a, Protocol p, std::uint64_t bytes) const;
  // The least time an all-to-all's or send/receive's channels take to carry it, us
  // (p2p_channels.h); 0 for other collectives.
  double p2p_channels_us(Collective c, Protocol p, std::uint64_t bytes) const;
  // An LL channel's data rate here, GB/s.
  double ll_channel_gb_per_s() const;
  // The share of a GPU's scale-up rate a ring reaches: the calibration's, else the GPU preset's.
  double ring_share() const;
  // The share of it an all-to-all of `bytes` reaches: through the NVSwitches, to more than one
  // peer, the all-to-all's (Efficiencies::all_to_all) for the channels each peer's piece takes;
  // else a ring's.
  double all_to_all_share(std::uint64_t bytes) const;
  // What an all-to-all's first step costs beyond its bytes, us (p2p_channels.h): Simple only.
  double all_to_all_first_step_us(Protocol p, std::uint64_t bytes) const;
  // What an out-of-place ring all-gather's copy of the GPU's own shard adds, us; 0 for other
  // calls. NCCL's ring all-gather kernel copies each chunk of the shard from the input to the
  // output in the chunk's first step, alongside its send (directCopySend; in place it only
  // sends), and on H100 and B200 nodes the out-of-place column trails the in-place one by about
  // the shard at the GPU's memory bandwidth (docs/nccl.md). (With one rank a node and registered
  // buffers NCCL copies on spare warps instead; nccl-tests registers none.) A run's calls are
  // in place (nccl_collectives.cc): this is for nccl-tests' out-of-place column.
  double own_shard_copy_us(Collective c, Algorithm a, std::uint64_t bytes) const;
  // The share of a GPU's scale-up rate an NVLS or NVLS-tree call's NVLink side reaches before
  // its per-loop cost.
  double nvls_link_share(Algorithm a) const;

  const TuningModel& tuning() const { return tuning_; }
  const Efficiencies& efficiencies() const { return efficiencies_; }

 private:
  // An NVLS call's two sides as algorithm bandwidths, GB/s: the NVLink side before its per-loop
  // cost, and the node's NICs (infinite within one node).
  double nvls_nvlink_gb_per_s(Collective c, Algorithm a) const;
  double nvls_network_gb_per_s(Algorithm a) const;
  // What a node's NICs carry out (and in) together, GB/s (a machine of several nodes), at `share`
  // of their line rate: nic_share() for collectives, nic_p2p_share() for point to point.
  double nics_gb_per_s(double share) const;
  // The channels NCCL's communicator runs collectives on (call_channels.h).
  std::uint32_t comm_channels() const;

  TuningModel tuning_;
  Efficiencies efficiencies_;
};

// nccl-tests' bus bandwidth factor: busbw = algbw x this (2(n-1)/n for an all-reduce, ...).
double bus_factor(Collective c, std::uint32_t ranks);

}  // namespace chakrasim::system::nccl
