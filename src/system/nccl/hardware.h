// Hardware a user names instead of writing bandwidths: GPUs with their scale-up fabric, and NICs
// with the share of their line rate NCCL reaches through them. Figures are per direction, in
// GB/s of 10^9 bytes, as nccl-tests reports them. docs/nccl.md lists them with their sources.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "system/nccl/msccl.h"

namespace chakrasim::system::nccl {

struct GpuPreset {
  const char* name = "";
  const char* description = "";
  int compute_capability = 90;  // 80 Ampere, 90 Hopper, 100 Blackwell (as NCCL buckets them)
  std::uint32_t scale_up_links = 18;
  double link_gb_per_s = 25;  // one scale-up link, one direction
  // What NCCL's topology code counts per link (its SM90_NVLINK_BW etc.): the selection model's
  // bandwidths are built from it, the achieved model's from link_gb_per_s.
  double nccl_link_gb_per_s = 20.6;
  // The GPU's memory bandwidth, GB/s (the vendor's; A100: the 80 GB part's). An out-of-place
  // ring all-gather copies the GPU's own shard at about this rate (achieved.h), and the LLM
  // generator's compute model reads it too.
  double hbm_gb_per_s = 3350;
  bool nvswitch = true;      // all GPUs of a domain on NVSwitches (else a full mesh of direct links)
  bool nvls = true;          // NVLink SHARP: the switches reduce and multicast (NVLS algorithms)
  std::uint32_t domain = 8;  // GPUs one scale-up domain can hold (NVL72: 72)
  const char* default_nic = "ndr400";
  bool arm_host = false;  // its host CPU is Arm (Grace), not x86: NCCL tunes some things by it
  // The shares of the scale-up rate NCCL's kernels reach: a ring's, and NVLS's before each loop's
  // fixed cost (achieved.h's Efficiencies, where a system file may set its own).
  double ring_efficiency = 0.816;
  double nvls_efficiency = 0.744;
  // NVLS's fixed cost per chunk a channel takes in a loop, us (its fences and the switch's
  // barrier: nvls_pipeline.h).
  double nvls_chunk_us = 0.6;
  // A tree's fixed cost per network message across nodes, us (tree_messages.h): from 2- and
  // 4-node H100 sweeps; Blackwell's is Hopper's times its ratio of steps (hardware.cc).
  double tree_message_us = 0.27;
  // What each call costs this generation beyond NCCL's latency constants, which NCCL keeps the
  // same for Hopper and Blackwell: a collective's; an LL step's between two GPUs of a node, beyond
  // NCCL's 0.6 us (each step NCCL's latency counts there, TuningModel::intra_steps, less what it
  // already charges a step beyond that); and an all-to-all's or send/receive's, which grows with
  // the sends and receives the call enqueues (nccl-tests' all-to-all: one of each to every rank,
  // itself too; its send/receive: one of each).
  double call_latency_us = 0;
  double ll_step_latency_us = 0;
  double p2p_call_latency_us = 0;
  double p2p_op_latency_us = 0;
  // The share of the scale-up rate an all-to-all through the NVSwitches reaches with many channels
  // a peer: every GPU sends to every other at once, and that reaches less of the links than a
  // ring's one peer each (achieved.h's Efficiencies::all_to_all has the curve).
  double all_to_all_efficiency = 0.776;
  // The rings its library runs on one full node where the library takes them from a table of its
  // own rather than NCCL's search (0: the search's); the communicator holds twice as many
  // channels. RCCL's topology model for one node of 8 MI300X lists 28.
  std::uint32_t table_ring_channels = 0;
  // The least channels its library gives a communicator of 2 and of 4 ranks (0: none). RCCL's
  // MI300X: 32 and 24, as its start-up code sets them.
  std::uint32_t min_channels_two_ranks = 0, min_channels_four_ranks = 0;
  // The p2p channels a peer on a scale-up link may take a link in one node (NCCL 2; RCCL's MI300X
  // 8: 4, doubled in one node). Across nodes a network peer's 2 are the least.
  std::uint32_t p2p_channels_per_link = 2;
  // Its library runs LL128 unless NCCL_PROTO is set (NCCL from Ampere on; RCCL only on MI250X).
  bool ll128_by_default = true;
  // The MSCCL schedules its collective library runs by default (RCCL's on MI300X; none in NCCL).
  std::span<const MscclSchedule> msccl_schedules{};
  double scale_up_gb_per_s() const { return link_gb_per_s * scale_up_links; }
};

struct NicPreset {
  const char* name = "";
  const char* description = "";
  double line_gb_per_s = 50;  // 400 Gb/s
  // The share of the line rate NCCL's collectives reach through it (rings, trees, NVLS-tree:
  // headers, ACKs, the PCIe hop), and the share its point-to-point transfers reach (all-to-all,
  // send/receive), which is less: NCCL sends those in 128 KiB chunks (NCCL_P2P_NET_CHUNKSIZE),
  // a quarter of a collective's 512 KiB step, so each message's own cost weighs more.
  double efficiency = 0.96;
  double p2p_efficiency = 0.92;
  bool infiniband = true;
  // Its switches reduce bfloat16 and 8-bit integers in the network (SHARP v3: Quantum-2, NDR, and
  // later), where CollNet runs (call_types.h).
  bool sharp_v3 = false;
};

// By name, case-insensitive ("H100", "h100-sxm", "ndr400"); throws Error listing the names.
const GpuPreset& gpu_preset(std::string_view name);
const NicPreset& nic_preset(std::string_view name);
// "H100, H200, ..." for help texts.
std::string gpu_preset_names();
// The preset a device's printed name names ("NVIDIA H100 80GB HBM3", "AMD Instinct MI300X", as
// nccl-tests' "# Rank" lines print it): the longest preset name it holds (GB200 over B200), or
// none.
const GpuPreset* gpu_preset_in(std::string_view device_name);
std::string nic_preset_names();

}  // namespace chakrasim::system::nccl
