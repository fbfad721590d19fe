// `chakrasim run --backend ns3` end to end: a network drawn as a graph (topology: [ Custom ]),
// four NPUs on one switch of 100 Gb/s links, a 64 MiB ring all-reduce in one chunk (6 steps of
// 16 MiB messages, 1.34 ms each at line rate, and the reductions between the first four). The
// packet-level figure comes within 1 % of the flow backend's (11.183 ms against 11.079); with
// the YAML's routing keys and a NIC cap of 5 GB/s (5.37 B/ns, below the links' 12.5), which both
// backends read, within 1.2 % (22.036 against 21.776 ms). Checked within 10 %.
#include <string>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/trace_builder.h"
#include "chakra/workload_files.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

// The figure of "exposed collectives by group kind: all NPUs 117.780 µs.".
double exposed(const CommandResult& r) {
  const std::string label = "exposed collectives by group kind: all NPUs ";
  const std::size_t at = r.out.find(label);
  if (at == std::string::npos) return -1;
  return std::stod(r.out.substr(at + label.size()));
}

// The exposed collective time of NPU 0 with the flow backend and with ns3, on the star, with
// `keys` added to the network YAML. Each test names its own folder: ctest runs them at once.
std::pair<double, double> flow_and_ns3(const std::string& keys, const std::string& folder) {
  const auto dir = temp_dir(folder);
  write_bytes(dir / "star.txt", "5 1 4\n4\n0 4 100Gbps 0.0005ms 0\n1 4 100Gbps 0.0005ms 0\n2 4 100Gbps 0.0005ms 0\n"
                                "3 4 100Gbps 0.0005ms 0\n");
  write_bytes(dir / "net.yml", "topology: [ Custom ]\ntopology_file: \"star.txt\"\n" + keys);
  for (int r = 0; r < 4; ++r) {
    chakra::TraceBuilder b;
    b.collective("ar", chakra::CommType::kAllReduce, 64 << 20);
    chakra::write_trace(chakra::rank_path((dir / "ar").string(), static_cast<std::size_t>(r)), b.trace());
  }
  write_bytes(dir / "sys.json", R"({"preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"], "local-mem-bw": 50})");
  std::vector<std::string> args = {"run",
                                   "--workload",
                                   (dir / "ar").string(),
                                   "--system",
                                   (dir / "sys.json").string(),
                                   "--network",
                                   (dir / "net.yml").string(),
                                   "--backend",
                                   "flow"};
  const CommandResult flow = run_binary(args);
  args.back() = "ns3";
  const CommandResult ns3 = run_binary(args);
  EXPECT_EQ(flow.exit_code, 0) << flow.err;
  EXPECT_EQ(ns3.exit_code, 0) << ns3.err;
  EXPECT_THAT(ns3.out, ::testing::HasSubstr("sys[3] finished"));
  EXPECT_GT(exposed(flow), 0) << flow.out;
  EXPECT_GT(exposed(ns3), 0) << ns3.out;
  return {exposed(flow), exposed(ns3)};
}

TEST(Ns3Backend, RunsACustomTopologyNearTheFlowBackend) {
  const auto [flow, ns3] = flow_and_ns3("", "ns3_backend_cli_custom");
  EXPECT_NEAR(ns3, flow, 0.10 * flow);
}

TEST(Ns3Backend, ReadsTheRoutingKeysAndTheNicCap) {
  const auto [flow, ns3] = flow_and_ns3("routing: d-mod-k\necmp_seed: 7\nnic_bandwidth: 5\n", "ns3_backend_cli_keys");
  EXPECT_GT(flow, 21.0);  // the NIC cap, not the links, sets the pace
  EXPECT_NEAR(ns3, flow, 0.10 * flow);
}

}  // namespace
}  // namespace chakrasim::test
