#include "config/config_writers.h"

#include <cmath>

#include <fmt/format.h>

#include "config/systolic_config.h"
#include "system/algorithms.h"

namespace chakrasim::config {
namespace {

// A list token as the parser reads it: one<Token> for a flat choice, <token><W> with a window.
std::string token_of(const system::AlgorithmChoice& choice) {
  std::string token = system::algorithm_info(choice.kind).token;
  if (choice.one_flat) token = "one" + std::string(1, static_cast<char>(token[0] - 'a' + 'A')) + token.substr(1);
  if (choice.window != 0) token += std::to_string(choice.window);
  return token;
}

std::string token_list(const std::vector<system::AlgorithmChoice>& choices) {
  std::string out = "[";
  for (std::size_t i = 0; i < choices.size(); ++i)
    out += fmt::format("{}\"{}\"", i == 0 ? "" : ", ", token_of(choices[i]));
  return out + "]";
}

const char* policy_name(system::SchedulingPolicy p) {
  switch (p) {
    case system::SchedulingPolicy::kLifo: return "LIFO";
    case system::SchedulingPolicy::kFifo: return "FIFO";
    case system::SchedulingPolicy::kExplicit: return "EXPLICIT";
  }
  return "LIFO";
}

}  // namespace

std::string number_text(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15)
    return fmt::format("{:.1f}", value);
  return fmt::format("{}", value);
}

std::string system_json(const SystemConfig& config) {
  using system::CollectiveKind;
  const system::SystemSpec& s = config.system;
  std::string out = "{\n";
  auto key = [&out](const char* name, const std::string& value) { out += fmt::format("  \"{}\": {},\n", name, value); };
  key("scheduling-policy", fmt::format("\"{}\"", policy_name(s.scheduling_policy)));
  key("collective-optimization",
      s.collective_optimization == system::CollectiveOptimization::kLocalBwAware ? "\"localBWAware\"" : "\"baseline\"");
  key("endpoint-delay", std::to_string(s.endpoint_delay_ns));
  key("active-chunks-per-dimension", std::to_string(s.active_chunks_per_dimension));
  key("preferred-dataset-splits", std::to_string(s.preferred_dataset_splits));
  const std::pair<CollectiveKind, const char*> kinds[] = {{CollectiveKind::kAllReduce, "all-reduce"},
                                                          {CollectiveKind::kReduceScatter, "reduce-scatter"},
                                                          {CollectiveKind::kAllGather, "all-gather"},
                                                          {CollectiveKind::kAllToAll, "all-to-all"}};
  for (const auto& [kind, name] : kinds) {
    const auto& list = s.implementations[static_cast<std::size_t>(kind)];
    if (!list.empty()) key(fmt::format("{}-implementation", name).c_str(), token_list(list));
  }
  for (const auto& [kind, name] : kinds) {
    const std::string& prefix = s.custom_prefixes[static_cast<std::size_t>(kind)];
    if (!prefix.empty()) key(fmt::format("{}-implementation-custom", name).c_str(), fmt::format("[\"{}\"]", prefix));
  }
  key("local-mem-bw", number_text(s.local_mem_bw_gb_per_s));
  key("peak-perf", number_text(config.compute.peak_perf_tflops));
  if (config.compute.mfu_peak_tflops > 0) key("mfu-peak-perf", number_text(config.compute.mfu_peak_tflops));
  key("roofline-enabled", config.compute.model == "roofline" ? "1" : "0");
  if (config.compute.model == "systolic") key("systolic", systolic_json(config.compute.systolic));
  if (config.replay_only) key("replay-only", "1");
  if (s.collectives != system::CollectiveModel::kAstraSim) {
    const system::NcclSpec& n = s.nccl;
    key("collectives", s.collectives == system::CollectiveModel::kNccl ? "\"nccl\"" : "\"nccl-traffic\"");
    key("nccl-gpu", fmt::format("\"{}\"", n.gpu));
    if (n.gpus_per_node != 0) key("nccl-gpus-per-node", std::to_string(n.gpus_per_node));
    if (!n.nic.empty()) key("nccl-nic", fmt::format("\"{}\"", n.nic));
    if (n.nics_per_node != 0) key("nccl-nics-per-node", std::to_string(n.nics_per_node));
    if (!n.algo.empty()) key("nccl-algo", fmt::format("\"{}\"", n.algo));
    if (!n.proto.empty()) key("nccl-proto", fmt::format("\"{}\"", n.proto));
    if (!n.nvls) key("nccl-nvls", "0");
    if (n.collnet) key("nccl-collnet", "1");
    if (!n.pxn) key("nccl-pxn", "0");
    if (n.platform_latency_us != 0) key("nccl-platform-latency-us", fmt::format("{}", n.platform_latency_us));
    if (n.ring_efficiency) key("nccl-ring-efficiency", fmt::format("{}", *n.ring_efficiency));
    if (n.nvls_efficiency) key("nccl-nvls-efficiency", fmt::format("{}", *n.nvls_efficiency));
    if (n.nvls_tree_efficiency) key("nccl-nvls-tree-efficiency", fmt::format("{}", *n.nvls_tree_efficiency));
    if (n.nvls_chunk_us) key("nccl-nvls-chunk-us", fmt::format("{}", *n.nvls_chunk_us));
    if (n.tree_message_us) key("nccl-tree-message-us", fmt::format("{}", *n.tree_message_us));
    if (n.ll_channel_efficiency) key("nccl-ll-channel-efficiency", fmt::format("{}", *n.ll_channel_efficiency));
    if (n.ll_proxy_scan_ns) key("nccl-ll-proxy-scan-ns", fmt::format("{}", *n.ll_proxy_scan_ns));
    if (n.nic_efficiency) key("nccl-nic-efficiency", fmt::format("{}", *n.nic_efficiency));
    if (n.nic_p2p_efficiency) key("nccl-nic-p2p-efficiency", fmt::format("{}", *n.nic_p2p_efficiency));
    if (n.p2p_channel_gb_per_s) key("nccl-p2p-channel-gb-per-s", fmt::format("{}", *n.p2p_channel_gb_per_s));
    if (n.all_to_all_efficiency) key("nccl-all-to-all-efficiency", fmt::format("{}", *n.all_to_all_efficiency));
  }
  out.erase(out.size() - 2, 1);  // the last key's comma
  return out + "}\n";
}

std::string network_yaml(const network::TopologySpec& spec, const std::string& comment) {
  std::string out;
  std::size_t from = 0;
  while (from < comment.size()) {
    std::size_t end = comment.find('\n', from);
    if (end == std::string::npos) end = comment.size();
    out += "# " + comment.substr(from, end - from) + "\n";
    from = end + 1;
  }
  auto list = [&spec](auto&& item) {
    std::string text = "[ ";
    for (std::size_t d = 0; d < spec.dims.size(); ++d) text += (d == 0 ? "" : ", ") + item(spec.dims[d]);
    return text + " ]";
  };
  out += "topology: " +
         list([](const network::DimensionSpec& d) { return std::string(network::dimension_kind_name(d.kind)); }) + "\n";
  out += "npus_count: " + list([](const network::DimensionSpec& d) { return std::to_string(d.npus); }) + "\n";
  out +=
      "bandwidth: " + list([](const network::DimensionSpec& d) { return number_text(d.bandwidth_gib_per_s); }) + "\n";
  out += "latency: " + list([](const network::DimensionSpec& d) { return number_text(d.latency_ns); }) + "\n";
  return out;
}

}  // namespace chakrasim::config
