// The accelerators `chakrasim generate llm` times compute for, and the cluster around them: a
// scale-up domain (NVLink / Infinity Fabric) of a few GPUs and a scale-out network between
// domains. A compute op takes max(FLOPs / (peak x efficiency), bytes / (HBM x efficiency)): the
// roofline, derated by what large kernels reach in practice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chakrasim::tools::llm {

struct GpuSpec {
  std::string name;
  double peak_tflops = 0;           // dense 16-bit tensor-core peak, 10^12 FLOP/s
  double hbm_gb_per_s = 0;          // 10^9 B/s
  double hbm_gib = 0;               // memory capacity, 2^30 B
  double flops_efficiency = 0;      // fraction of the peak large GEMMs reach
  double memory_efficiency = 0;     // fraction of HBM bandwidth streaming kernels reach
  std::uint64_t gpus_per_node = 0;  // the scale-up domain
  double scaleup_gb_per_s = 0;      // per GPU and direction, 10^9 B/s
  double scaleup_latency_ns = 0;    // per link (a switch path is two links)
  double scaleout_gb_per_s = 0;     // per GPU (one NIC each) and direction, 10^9 B/s
  double scaleout_latency_ns = 0;
};

// A100, H100, H200, B200, GB200, MI300X (case does not matter).
std::vector<std::string> gpu_names();
// Throws Error naming --gpu and the valid names when `name` is not a preset.
GpuSpec gpu_preset(const std::string& name);

// Nanoseconds an op of `flops` and `bytes` of memory traffic takes on `gpu` (not rounded).
double op_time_ns(const GpuSpec& gpu, double flops, double bytes);

// The analytical network YAML for `ranks` GPUs: dimension 0 the scale-up domain (a Switch of
// gpus_per_node), dimension 1 the scale-out network (a Switch of the domains); one dimension
// when everything fits in one domain. Throws Error naming --network-out when the ranks do not
// fill whole domains.
std::string network_yaml(const GpuSpec& gpu, std::uint64_t ranks);

// A system JSON to run the traces of `ranks` GPUs on network_yaml's network, whose collectives
// run on groups of `group_sizes` ranks. One chunk per collective: NCCL pipelines its chunks, so
// one chunk's latency is what a real collective pays. Halving-doubling when every group size is
// a power of two and no group spans every rank, else rings: both move the bandwidth-optimal bytes, and
// halving-doubling takes log2(n) steps (NCCL's trees and NVLS also pay log-depth latency)
// instead of n - 1, which is 2.3 times fewer simulated messages on 8 GPUs. All-to-all: direct.
// Reductions cost the GPU's effective HBM bandwidth; the roofline settings (effective peak and
// bandwidth) are there with the roofline off, so that each node's own duration is replayed.
// `systolic`: a systolic preset (compute/systolic/systolic_presets.h) that times every shaped
// compute node instead, its DRAM bandwidth the reductions' and the roofline fallback's ("": none).
std::string system_json(const GpuSpec& gpu, std::uint64_t ranks, const std::vector<std::uint64_t>& group_sizes,
                        bool nccl = false, const std::string& systolic = "");

}  // namespace chakrasim::tools::llm
