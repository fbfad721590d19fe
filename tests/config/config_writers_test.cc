// The configuration writers (config/config_writers.h) round-trip through the loaders: a
// written file parses to the specs it came from, and writing what was parsed gives the same
// bytes again.
#include <limits>

#include <gtest/gtest.h>

#include "config/config_writers.h"
#include "config/network_config.h"
#include "config/system_config.h"
#include "support/test_support.h"
#include "system/algorithms.h"

namespace chakrasim::test {
namespace {

using system::AlgorithmKind;
using system::CollectiveKind;

void expect_same(const config::SystemConfig& a, const config::SystemConfig& b) {
  EXPECT_EQ(a.system.scheduling_policy, b.system.scheduling_policy);
  EXPECT_EQ(a.system.collective_optimization, b.system.collective_optimization);
  EXPECT_EQ(a.system.endpoint_delay_ns, b.system.endpoint_delay_ns);
  EXPECT_EQ(a.system.active_chunks_per_dimension, b.system.active_chunks_per_dimension);
  EXPECT_EQ(a.system.preferred_dataset_splits, b.system.preferred_dataset_splits);
  EXPECT_EQ(a.system.local_mem_bw_gb_per_s, b.system.local_mem_bw_gb_per_s);
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    ASSERT_EQ(a.system.implementations[k].size(), b.system.implementations[k].size()) << k;
    for (std::size_t i = 0; i < a.system.implementations[k].size(); ++i) {
      EXPECT_EQ(a.system.implementations[k][i].kind, b.system.implementations[k][i].kind);
      EXPECT_EQ(a.system.implementations[k][i].one_flat, b.system.implementations[k][i].one_flat);
      EXPECT_EQ(a.system.implementations[k][i].window, b.system.implementations[k][i].window);
    }
    EXPECT_EQ(a.system.custom_prefixes[k], b.system.custom_prefixes[k]);
  }
  EXPECT_EQ(a.compute.model, b.compute.model);
  EXPECT_EQ(a.compute.peak_perf_tflops, b.compute.peak_perf_tflops);
  EXPECT_EQ(a.compute.local_mem_bw_gb_per_s, b.compute.local_mem_bw_gb_per_s);
  EXPECT_EQ(a.replay_only, b.replay_only);
  EXPECT_EQ(a.system.collectives, b.system.collectives);
  const system::NcclSpec &n = a.system.nccl, &m = b.system.nccl;
  EXPECT_EQ(n.gpu, m.gpu);
  EXPECT_EQ(n.gpus_per_node, m.gpus_per_node);
  EXPECT_EQ(n.nic, m.nic);
  EXPECT_EQ(n.nics_per_node, m.nics_per_node);
  EXPECT_EQ(n.algo, m.algo);
  EXPECT_EQ(n.proto, m.proto);
  EXPECT_EQ(n.nvls, m.nvls);
  EXPECT_EQ(n.collnet, m.collnet);
  EXPECT_EQ(n.pxn, m.pxn);
  EXPECT_EQ(n.platform_latency_us, m.platform_latency_us);
  EXPECT_EQ(n.ring_efficiency, m.ring_efficiency);
  EXPECT_EQ(n.nvls_efficiency, m.nvls_efficiency);
  EXPECT_EQ(n.nvls_tree_efficiency, m.nvls_tree_efficiency);
  EXPECT_EQ(n.nvls_chunk_us, m.nvls_chunk_us);
  EXPECT_EQ(n.tree_message_us, m.tree_message_us);
  EXPECT_EQ(n.ll_channel_efficiency, m.ll_channel_efficiency);
  EXPECT_EQ(n.ll_proxy_scan_ns, m.ll_proxy_scan_ns);
  EXPECT_EQ(n.nic_efficiency, m.nic_efficiency);
  EXPECT_EQ(n.nic_p2p_efficiency, m.nic_p2p_efficiency);
  EXPECT_EQ(n.p2p_channel_gb_per_s, m.p2p_channel_gb_per_s);
  EXPECT_EQ(n.all_to_all_efficiency, m.all_to_all_efficiency);
}

config::SystemConfig every_field_set() {
  config::SystemConfig c;
  system::SystemSpec& s = c.system;
  s.scheduling_policy = system::SchedulingPolicy::kExplicit;
  s.collective_optimization = system::CollectiveOptimization::kLocalBwAware;
  s.endpoint_delay_ns = 17;
  s.active_chunks_per_dimension = 3;
  s.preferred_dataset_splits = 64;
  s.local_mem_bw_gb_per_s = 1600.25;
  s.implementations[static_cast<std::size_t>(CollectiveKind::kAllReduce)] = {algorithm_of("ring"),
                                                                             algorithm_of("halvingDoubling"),
                                                                             algorithm_of("oneDirect4")};
  s.implementations[static_cast<std::size_t>(CollectiveKind::kAllGather)] = {algorithm_of("doubleBinaryTree")};
  s.implementations[static_cast<std::size_t>(CollectiveKind::kReduceScatter)] = {algorithm_of("direct")};
  s.custom_prefixes[static_cast<std::size_t>(CollectiveKind::kAllToAll)] = "algo/custom";
  c.compute.model = "roofline";
  c.compute.peak_perf_tflops = 989.4;
  c.compute.local_mem_bw_gb_per_s = s.local_mem_bw_gb_per_s;
  c.replay_only = true;
  s.collectives = system::CollectiveModel::kNcclTraffic;
  system::NcclSpec& n = s.nccl;
  n.gpu = "B200";
  n.gpus_per_node = 4;
  n.nic = "xdr800";
  n.nics_per_node = 2;
  n.algo = "Ring,Tree";
  n.proto = "^LL128";
  n.nvls = false;
  n.collnet = true;
  n.pxn = false;
  n.platform_latency_us = 12.5;
  n.ring_efficiency = 0.8;
  n.nvls_efficiency = 0.7125;
  n.nvls_tree_efficiency = 0.875;
  n.nvls_chunk_us = 0.55;
  n.tree_message_us = 0.3;
  n.ll_channel_efficiency = 0.25;
  n.ll_proxy_scan_ns = 0.45;
  n.nic_efficiency = 0.875;
  n.nic_p2p_efficiency = 0.8125;
  n.p2p_channel_gb_per_s = 20.5;
  n.all_to_all_efficiency = 0.75;
  return c;
}

TEST(ConfigWriters, SystemJsonRoundTrips) {
  for (const config::SystemConfig& c : {every_field_set(), config::SystemConfig{}}) {
    const std::string text = config::system_json(c);
    const config::SystemConfig back = config::parse_system(text, "<written>", {});
    expect_same(c, back);
    EXPECT_TRUE(back.warnings.empty()) << back.warnings.front();
    EXPECT_EQ(config::system_json(back), text);
  }
}

TEST(ConfigWriters, SystemJsonWritesTheListTokensTheParserReads) {
  const std::string text = config::system_json(every_field_set());
  EXPECT_NE(text.find("\"all-reduce-implementation\": [\"ring\", \"halvingDoubling\", \"oneDirect4\"]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"all-to-all-implementation-custom\": [\"algo/custom\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("\"local-mem-bw\": 1600.25,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"roofline-enabled\": 1,"), std::string::npos) << text;
  EXPECT_EQ(text.find(",\n}"), std::string::npos) << text;  // no comma after the last key
}

TEST(ConfigWriters, NetworkYamlRoundTrips) {
  network::TopologySpec spec;
  spec.dims = {{network::DimensionKind::kRing, 8, 50.0, 500.0},
               {network::DimensionKind::kFullyConnected, 4, 418.193, 0.5},
               {network::DimensionKind::kSwitch, 16, 0.1 + 0.2, 1e-7}};
  const std::string text = config::network_yaml(spec, "two lines\nof comment");
  EXPECT_EQ(text.rfind("# two lines\n# of comment\ntopology: [ Ring, FullyConnected, Switch ]\n", 0), 0u) << text;
  const network::TopologySpec back = config::parse_network(text, "<written>");
  ASSERT_EQ(back.dims.size(), spec.dims.size());
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    EXPECT_EQ(back.dims[d].kind, spec.dims[d].kind);
    EXPECT_EQ(back.dims[d].npus, spec.dims[d].npus);
    EXPECT_EQ(back.dims[d].bandwidth_gib_per_s, spec.dims[d].bandwidth_gib_per_s);  // exactly: shortest form
    EXPECT_EQ(back.dims[d].latency_ns, spec.dims[d].latency_ns);
  }
  EXPECT_EQ(config::network_yaml(back), config::network_yaml(spec));
}

TEST(ConfigWriters, NumbersReadBackExactly) {
  for (const double v : {0.0, 50.0, 418.193, 0.1 + 0.2, 1e-7, 1e300, 123456789.125}) {
    EXPECT_EQ(std::stod(config::number_text(v)), v) << config::number_text(v);
  }
  EXPECT_EQ(config::number_text(50), "50.0");
  EXPECT_EQ(config::number_text(2680.5), "2680.5");
}

}  // namespace
}  // namespace chakrasim::test
