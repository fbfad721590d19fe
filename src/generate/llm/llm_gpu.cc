#include "generate/llm/llm_gpu.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/error.h"

namespace chakrasim::tools::llm {
namespace {

// Peaks, bandwidths and capacities from the vendors' data sheets (SXM / OAM parts, dense BF16).
// The efficiencies are assumptions: what large BF16 GEMMs and streaming kernels commonly reach
// (about 70-80% of peak on NVIDIA parts, lower on MI300X with today's libraries). Scale-up: NVLink
// 3 (A100) and 4 (H100, H200) per direction, Infinity Fabric's 7 x 64 GB/s (MI300X). Scale-out:
// one 200 Gb/s (A100) or 400 Gb/s NIC per GPU. Latencies are per link; a switch path has two.
std::vector<GpuSpec> presets() {
  return {
      {"A100", 312, 2039, 80, 0.75, 0.80, 8, 300, 250, 25, 1500},
      {"H100", 989, 3350, 80, 0.70, 0.80, 8, 450, 250, 50, 1500},
      {"H200", 989, 4800, 141, 0.70, 0.80, 8, 450, 250, 50, 1500},
      {"MI300X", 1307, 5300, 192, 0.55, 0.75, 8, 448, 250, 50, 1500},
  };
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// The network YAML's bandwidth unit is 2^30 B/s (ASTRA-SIM-BEHAVIOUR.md §1.2).
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

std::string network_yaml(const GpuSpec& gpu, std::uint64_t ranks) {
  const std::uint64_t node = gpu.gpus_per_node;
  if (ranks < 2) fail("--network-out: {} rank needs no network; expected at least 2 ranks", ranks);
  std::string out = fmt::format(
      "# {} cluster for {} GPUs: {} GPUs per scale-up domain ({} GB/s per GPU and direction), then a\n"
      "# scale-out network ({} GB/s per GPU and direction). Bandwidths are in the file's unit, 2^30 B/s.\n",
      gpu.name, ranks, node, gpu.scaleup_gb_per_s, gpu.scaleout_gb_per_s);
  if (ranks <= node) {
    out += fmt::format("topology: [ Switch ]\nnpus_count: [ {} ]\nbandwidth: [ {:.3f} ]\nlatency: [ {:.1f} ]\n",
                       ranks, yaml_bandwidth(gpu.scaleup_gb_per_s), gpu.scaleup_latency_ns);
    return out;
  }
  if (ranks % node != 0) {
    fail("--network-out: {} ranks do not fill whole {}-GPU {} nodes; expected a multiple of {}", ranks, node,
         gpu.name, node);
  }
  out += fmt::format(
      "topology: [ Switch, Switch ]\nnpus_count: [ {}, {} ]\nbandwidth: [ {:.3f}, {:.3f} ]\n"
      "latency: [ {:.1f}, {:.1f} ]\n",
      node, ranks / node, yaml_bandwidth(gpu.scaleup_gb_per_s), yaml_bandwidth(gpu.scaleout_gb_per_s),
      gpu.scaleup_latency_ns, gpu.scaleout_latency_ns);
  return out;
}

std::string system_json(const GpuSpec& gpu, std::uint64_t ranks, const std::vector<std::uint64_t>& group_sizes) {
  auto power_of_two = [](std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; };
  const std::uint64_t node = gpu.gpus_per_node;
  const std::vector<std::uint64_t> dims =
      ranks <= node ? std::vector<std::uint64_t>{ranks} : std::vector<std::uint64_t>{node, ranks / node};
  bool world = false, halving = true;
  for (std::uint64_t n : group_sizes) {
    world = world || n == ranks;
    halving = halving && power_of_two(n);
  }
  // Collectives over every rank run per network dimension and need a token each; then group
  // collectives are forced onto rings anyway, and rings keep a run of identical ranks eligible
  // for the simulator's one-NPU symmetric run. Otherwise one token serves every group.
  halving = halving && !world;
  const std::size_t tokens = world ? dims.size() : 1;
  auto list = [&](const char* token) {
    std::string out = "[";
    for (std::size_t i = 0; i < tokens; ++i) out += fmt::format("{}\"{}\"", i == 0 ? "" : ", ", token);
    return out + "]";
  };
  const std::string reduce = list(halving ? "halvingDoubling" : "ring");
  return fmt::format(
      "{{\n"
      "  \"scheduling-policy\": \"LIFO\",\n"
      "  \"collective-optimization\": \"localBWAware\",\n"
      "  \"endpoint-delay\": 10,\n"
      "  \"active-chunks-per-dimension\": 1,\n"
      "  \"preferred-dataset-splits\": 1,\n"
      "  \"all-reduce-implementation\": {0},\n"
      "  \"reduce-scatter-implementation\": {0},\n"
      "  \"all-gather-implementation\": {0},\n"
      "  \"all-to-all-implementation\": {1},\n"
      "  \"local-mem-bw\": {2:.1f},\n"
      "  \"peak-perf\": {3:.1f},\n"
      "  \"roofline-enabled\": 0\n"
      "}}\n",
      reduce, list("direct"), gpu.hbm_gb_per_s * gpu.memory_efficiency, gpu.peak_tflops * gpu.flops_efficiency);
}

}  // namespace chakrasim::tools::llm
