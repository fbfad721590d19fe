#include "system/nccl/hardware.h"

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {
namespace {

// Scale-up figures are the vendors' per-direction link rates; NCCL's per-link figures are the
// constants its topology code uses for the generation. The kernels' shares of the rate: Hopper's
// from 8x H100 anchors and sweeps (a ring's 0.816: busbw 367 of 450; NVLS's 0.744: 480 at 8 GiB);
// Ampere's ring from two 8x A100 SXM nodes' all-reduce sweeps (busbw 233 and 235 of 300 at 4-8
// GiB: 0.78); Blackwell's ring from an 8x B200 node's sweeps (all-gather busbw 664 of
// 900 at 8 GiB: 0.738; reduce-scatter, all-to-all and send/receive within 2% of it), its NVLS
// Hopper's share once its loops pay Blackwell's slower step (below). The 664 is the out-of-place
// column, which includes the GPU's own shard's copy (achieved.h; in place the node measured 677);
// the share is kept, as a larger one fits the node's whole all-gather and reduce-scatter sweeps
// worse (2.6 -> 3.2% and 4.0 -> 4.4% at 0.765). docs/nccl.md.
constexpr double kAmpereRing = 0.78;
constexpr double kBlackwellRing = 0.738;
// MI300X's rings (RCCL's, on the xGMI mesh) from AMD's own 8x MI300X all-reduce sweep: busbw 319.0
// of 448 at 16 GB (0.712). Its links carry 45.1-47.2 GB/s each of 64 all at once, and AMD reads
// the slowest as setting a ring's pace (7 x 45.2 = 316). docs/nccl.md.
constexpr double kMi300xRing = 0.712;
// Blackwell's steps between GPUs of a node take twice NCCL's constant, where Hopper's DGX-like
// nodes take what it says. The 8x B200 node's all-gather and reduce-scatter (7 LL steps) start
// 5.3 us above NCCL's floor, its all-reduce (14) 9.6: 0.617 us more a step, 1.0 a call. The
// same ratio of steps, 1.217 / 0.6, scales NVLS's cost per chunk (its fences and the switch's
// barrier): with Hopper's share, the node's NVLS all-reduce sizes (4 MB-16 GB) fit within 10%.
// A 2 x 8 B200 cluster's tree, 14 steps in its nodes, starts where this puts it (35.1 us, measured
// 35.5-36.5). Its send/receive starts 2.12 us above NCCL's floor (the mean of 8-512 B) and its
// all-to-all 3.92 (128 B-2 KiB): 1.86 a call and 0.129 for each of the 2 and 16 sends and
// receives the two enqueue. docs/nccl.md.
constexpr double kNcclLlStepUs = 0.6, kBlackwellCallUs = 1.0, kBlackwellLlStepUs = 0.617;
constexpr double kBlackwellNvlsChunkUs =
    GpuPreset{}.nvls_chunk_us * (kNcclLlStepUs + kBlackwellLlStepUs) / kNcclLlStepUs;
// So does a tree's cost per network message across nodes, each a step the GPU hands its proxy
// and waits on: 0.27 x 1.217 / 0.6 = 0.548 us. Three Blackwell multi-node sweeps, none used for
// it, come closer: their trees' 256 KiB-1 MiB, 10-40% fast with Hopper's 0.27, are 8-26% fast;
// their 64 KiB and B200's 2 MiB turn slow (docs/nccl.md).
constexpr double kBlackwellTreeMessageUs =
    GpuPreset{}.tree_message_us * (kNcclLlStepUs + kBlackwellLlStepUs) / kNcclLlStepUs;
constexpr double kBlackwellP2pCallUs = 1.86, kBlackwellP2pOpUs = 0.129;
// An all-to-all through the NVSwitches: 0.776 of the links with many channels a peer, from two
// 8x H100 clusters (busbw 345-348 GB/s of 450 at 4-16 GiB, 32 channels a peer; 0.951 of a
// ring's). Ampere's keeps Hopper's ratio to its ring (0.78 x 0.951); Blackwell's is Hopper's:
// its ring is bound by its 32 channels (21 GB/s each: 672 GB/s of 900), not by its links, and
// so is its all-to-all, whose largest sizes reach those 672.
constexpr double kAmpereAllToAll = kAmpereRing * 0.776 / 0.816;
constexpr GpuPreset kB200 = {.name = "B200",
                             .description = "B200: 18 NVLink5 links of 50 GB/s to NVSwitch gen4 with NVLink SHARP, 8 "
                                            "per node",
                             .compute_capability = 100,
                             .link_gb_per_s = 50.0,
                             .nccl_link_gb_per_s = 40.1,
                             .hbm_gb_per_s = 8000,
                             .ring_efficiency = kBlackwellRing,
                             .nvls_chunk_us = kBlackwellNvlsChunkUs,
                             .tree_message_us = kBlackwellTreeMessageUs,
                             .call_latency_us = kBlackwellCallUs,
                             .ll_step_latency_us = kBlackwellLlStepUs,
                             .p2p_call_latency_us = kBlackwellP2pCallUs,
                             .p2p_op_latency_us = kBlackwellP2pOpUs};
// GB200 NVL72: the B200 in a domain of 72.
constexpr GpuPreset nvl72(GpuPreset b200) {
  b200.name = "GB200";
  b200.description = "GB200 NVL72: the B200's NVLink5, 72 GPUs in one NVSwitch domain";
  b200.domain = 72;
  b200.arm_host = true;  // Grace
  return b200;
}
const std::array<GpuPreset, 6> kGpus = {{
    {.name = "H100",
     .description = "H100 SXM: 18 NVLink4 links of 25 GB/s to NVSwitch gen3 with NVLink SHARP, 8 per node"},
    {.name = "H200", .description = "H200 SXM: the H100's NVLink4 and NVSwitch gen3 (more HBM)", .hbm_gb_per_s = 4800},
    {.name = "A100",
     .description = "A100 SXM: 12 NVLink3 links of 25 GB/s to NVSwitch gen2 (no SHARP), 8 per node",
     .compute_capability = 80,
     .scale_up_links = 12,
     .nccl_link_gb_per_s = 20.0,
     .hbm_gb_per_s = 2039,
     .nvls = false,
     .default_nic = "hdr200",
     .ring_efficiency = kAmpereRing,
     .all_to_all_efficiency = kAmpereAllToAll},
    kB200,
    nvl72(kB200),
    {.name = "MI300X",
     .description = "MI300X: 7 Infinity Fabric links of 64 GB/s, one to each other GPU of 8 (no switch); RCCL's "
                    "channels, LL128 default and MSCCL all-reduce schedules; rings calibrated to AMD's RCCL sweeps",
     .scale_up_links = 7,
     .link_gb_per_s = 64.0,
     .nccl_link_gb_per_s = 40.0,
     .hbm_gb_per_s = 5300,
     .nvswitch = false,
     .nvls = false,
     .default_nic = "roce400",
     .ring_efficiency = kMi300xRing,
     .table_ring_channels = 28,
     .min_channels_two_ranks = 32,
     .min_channels_four_ranks = 24,
     .p2p_channels_per_link = 8,
     .ll128_by_default = false,
     .msccl_schedules = kRcclMi300xSchedules},
}};

const std::array<NicPreset, 5> kNics = {{
    // NDR: collectives 48 GB/s a NIC, the top of the 46-48 NVIDIA quotes, where two 2 x 8 B200
    // clusters' all-reduces reach 47.9-48.1 and one cluster's rings across 10 nodes 48.7-49.2;
    // all-to-all and send/receive 46, where that cluster's all-to-alls reach 44.8-46.2 and its
    // send/receives between two nodes 40-46 (docs/nccl.md).
    {"ndr400", "ConnectX-7 InfiniBand NDR, 400 Gb/s", 50.0, 0.96, 0.92, true, true},
    // HDR: NVIDIA measures ring all-reduce busbw 192 GB/s across two DGX A100s' 8 HDR NICs (24 a
    // NIC, 0.96; nccl#812); a 2 x 8 A100 cluster's sweep reaches 192-194 at 1-2 GB (docs/nccl.md).
    // Its point-to-point share is assumed NDR's, less by the same ratio.
    {"hdr200", "ConnectX-6 InfiniBand HDR, 200 Gb/s", 25.0, 0.96, 0.92, true},
    {"xdr800", "ConnectX-8 InfiniBand XDR, 800 Gb/s (efficiency assumed as NDR's)", 100.0, 0.96, 0.92, true, true},
    // RoCE: GCP's 400G RoCE reaches 0.82 of line rate on A3 Ultra (three 2 x 8 H200 all-gather
    // sweeps) and 0.92 on A4 (a 2 x 8 B200 one); 0.85 fits those and A4's all-reduce best
    // (docs/nccl.md). Point to point: NDR's ratio of the two shares (0.92 / 0.96), assumed.
    {"roce400", "400 GbE RoCEv2 (efficiency from GCP's A3 Ultra and A4 sweeps)", 50.0, 0.85, 0.815, false},
    {"roce200", "200 GbE RoCEv2 (efficiency assumed as 400G RoCE's)", 25.0, 0.85, 0.815, false},
}};

}  // namespace

const GpuPreset& gpu_preset(std::string_view name) {
  std::string wanted = lowercase(name);
  if (wanted.size() > 4 && wanted.ends_with("-sxm")) wanted.resize(wanted.size() - 4);
  for (const GpuPreset& g : kGpus) {
    if (lowercase(g.name) == wanted) return g;
  }
  throw Error(fmt::format("unknown GPU \"{}\"; expected one of {}", name, gpu_preset_names()));
}

const NicPreset& nic_preset(std::string_view name) {
  const std::string wanted = lowercase(name);
  for (const NicPreset& n : kNics) {
    if (n.name == wanted) return n;
  }
  throw Error(fmt::format("unknown NIC \"{}\"; expected one of {}", name, nic_preset_names()));
}

std::string gpu_preset_names() {
  std::string out;
  for (const GpuPreset& g : kGpus) out.append(out.empty() ? "" : ", ").append(g.name);
  return out;
}

const GpuPreset* gpu_preset_in(std::string_view device_name) {
  const GpuPreset* found = nullptr;
  for (const GpuPreset& g : kGpus) {
    const std::string_view name = g.name;
    if (device_name.find(name) != std::string_view::npos &&
        (found == nullptr || name.size() > std::strlen(found->name))) {
      found = &g;
    }
  }
  return found;
}

std::string nic_preset_names() {
  std::string out;
  for (const NicPreset& n : kNics) out.append(out.empty() ? "" : ", ").append(n.name);
  return out;
}

}  // namespace chakrasim::system::nccl
