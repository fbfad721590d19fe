#include "generate/llm/llm_gpu.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "compute/systolic/systolic_presets.h"
#include "config/config_writers.h"
#include "core/error.h"
#include "system/nccl/hardware.h"

namespace chakrasim::tools::llm {
namespace {

// Peaks and capacities from the vendors' data sheets (SXM / OAM parts, dense BF16). The
// efficiencies are assumptions: what large BF16 GEMMs and streaming kernels commonly reach (about
// 70-80% of peak on NVIDIA parts, lower on MI300X with today's libraries). The scale-up domain
// and bandwidth, and the NIC, are the hardware presets NCCL's model uses (system/nccl/hardware.h):
// one table for both, and so is the memory bandwidth. Latencies are per link; a switch path has
// two.
struct Compute {
  const char* name;
  double peak_tflops, hbm_gib, flops_efficiency, memory_efficiency;
};
constexpr Compute kCompute[] = {
    {"A100", 312, 80, 0.75, 0.80},   {"H100", 989, 80, 0.70, 0.80},    {"H200", 989, 141, 0.70, 0.80},
    {"B200", 2250, 180, 0.70, 0.80}, {"GB200", 2500, 186, 0.70, 0.80}, {"MI300X", 1307, 192, 0.55, 0.75},
};

std::vector<GpuSpec> presets() {
  std::vector<GpuSpec> out;
  for (const Compute& c : kCompute) {
    const system::nccl::GpuPreset& gpu = system::nccl::gpu_preset(c.name);
    const system::nccl::NicPreset& nic = system::nccl::nic_preset(gpu.default_nic);
    out.push_back({c.name, c.peak_tflops, gpu.hbm_gb_per_s, c.hbm_gib, c.flops_efficiency, c.memory_efficiency,
                   gpu.domain, gpu.scale_up_gb_per_s(), 250, nic.line_gb_per_s, 1500});
  }
  return out;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// The network YAML's bandwidth unit is 2^30 B/s (docs/astra-sim-model.md §1.2).
double yaml_bandwidth(double gbps) { return gbps * 1e9 / 1073741824.0; }

}  // namespace

std::vector<std::string> gpu_names() {
  std::vector<std::string> names;
  for (const GpuSpec& g : presets()) names.push_back(g.name);
  return names;
}

GpuSpec gpu_preset(const std::string& name) {
  std::string valid;
  for (const GpuSpec& g : presets()) {
    if (g.name == upper(name)) return g;
    valid += (valid.empty() ? "" : ", ") + g.name;
  }
  fail("--gpu: unknown GPU \"{}\"; expected one of {}", name, valid);
}

double op_time_ns(const GpuSpec& gpu, double flops, double bytes) {
  const double compute_ns = flops / (gpu.peak_tflops * gpu.flops_efficiency * 1e3);
  const double memory_ns = bytes / (gpu.hbm_gb_per_s * gpu.memory_efficiency);
  return std::max(compute_ns, memory_ns);
}

// The network file states bandwidths to 3 decimals of its unit and the system file to 1: the
// figures a reader can check against a data sheet, and what the simulator then reads.
namespace {
// `value` to `decimals` places, as the nearest double to a decimal with that many places.
double rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}
}  // namespace

std::string network_yaml(const GpuSpec& gpu, std::uint64_t ranks) {
  const std::uint64_t node = gpu.gpus_per_node;
  const std::string comment = fmt::format("{} cluster for {} GPUs: {} GPUs per scale-up domain ({} GB/s per GPU and "
                                          "direction), then a\n"
                                          "scale-out network ({} GB/s per GPU and direction). Bandwidths are in the "
                                          "file's unit, 2^30 B/s.",
                                          gpu.name, ranks, node, gpu.scaleup_gb_per_s, gpu.scaleout_gb_per_s);
  network::TopologySpec spec;
  const network::DimensionSpec scale_up{network::DimensionKind::kSwitch, static_cast<std::uint32_t>(ranks),
                                        rounded(yaml_bandwidth(gpu.scaleup_gb_per_s), 3),
                                        rounded(gpu.scaleup_latency_ns, 1)};
  if (ranks <= node) {
    spec.dims.push_back(scale_up);
    return config::network_yaml(spec, comment);
  }
  if (ranks % node != 0) {
    fail("--network-out: {} ranks do not fill whole {}-GPU {} nodes; expected a multiple of {}", ranks, node, gpu.name,
         node);
  }
  spec.dims.push_back(scale_up);
  spec.dims.front().npus = static_cast<std::uint32_t>(node);
  spec.dims.push_back({network::DimensionKind::kSwitch, static_cast<std::uint32_t>(ranks / node),
                       rounded(yaml_bandwidth(gpu.scaleout_gb_per_s), 3), rounded(gpu.scaleout_latency_ns, 1)});
  return config::network_yaml(spec, comment);
}

std::string system_json(const GpuSpec& gpu, std::uint64_t ranks, const std::vector<std::uint64_t>& group_sizes,
                        bool nccl, const std::string& systolic) {
  auto power_of_two = [](std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; };
  const std::uint64_t node = gpu.gpus_per_node;
  const std::size_t dims = ranks <= node ? 1 : 2;
  bool world = false, halving = true;
  for (std::uint64_t n : group_sizes) {
    world = world || n == ranks;
    halving = halving && power_of_two(n);
  }
  // Collectives over every rank run per network dimension and need a token each; then group
  // collectives are forced onto rings anyway, and rings keep a run of identical ranks eligible
  // for the simulator's one-NPU symmetric run. Otherwise one token serves every group.
  halving = halving && !world;
  const std::size_t tokens = world ? dims : 1;
  config::SystemConfig c;
  system::SystemSpec& s = c.system;
  s.scheduling_policy = system::SchedulingPolicy::kLifo;
  s.collective_optimization = system::CollectiveOptimization::kLocalBwAware;
  s.endpoint_delay_ns = 10;
  s.active_chunks_per_dimension = 1;
  s.preferred_dataset_splits = 1;
  system::AlgorithmChoice reduce;
  reduce.kind = halving ? system::AlgorithmKind::kHalvingDoubling : system::AlgorithmKind::kRing;
  system::AlgorithmChoice direct;
  direct.kind = system::AlgorithmKind::kDirect;
  for (const auto kind : {system::CollectiveKind::kAllReduce, system::CollectiveKind::kReduceScatter,
                          system::CollectiveKind::kAllGather}) {
    s.implementations[static_cast<std::size_t>(kind)].assign(tokens, reduce);
  }
  s.implementations[static_cast<std::size_t>(system::CollectiveKind::kAllToAll)].assign(tokens, direct);
  s.local_mem_bw_gb_per_s = rounded(gpu.hbm_gb_per_s * gpu.memory_efficiency, 1);
  c.compute.local_mem_bw_gb_per_s = s.local_mem_bw_gb_per_s;
  c.compute.peak_perf_tflops = rounded(gpu.peak_tflops * gpu.flops_efficiency, 1);
  c.compute.mfu_peak_tflops = gpu.peak_tflops;
  if (!systolic.empty()) {  // the chip's arrays and DRAM replace the GPU's roofline
    c.compute.model = "systolic";
    c.compute.systolic = compute::systolic::preset(systolic).spec;
    s.local_mem_bw_gb_per_s = c.compute.systolic.dram_gb_per_s;
    c.compute.local_mem_bw_gb_per_s = s.local_mem_bw_gb_per_s;
    c.compute.peak_perf_tflops = 0;  // the fallback roofline takes the arrays' peak
    c.compute.mfu_peak_tflops = 0;
  }
  if (nccl) {  // collectives timed as NCCL runs them on this GPU's preset (docs/nccl.md)
    s.collectives = system::CollectiveModel::kNccl;
    s.nccl.gpu = gpu.name;
    s.nccl.gpus_per_node = static_cast<std::uint32_t>(gpu.gpus_per_node);
  }
  return config::system_json(c);
}

}  // namespace chakrasim::tools::llm
