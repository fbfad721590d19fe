// `chakrasim generate fabric`: the fabric it writes reads back as it was built, the network YAML
// it writes names it, and a run routes through it with --backend flow.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "network/fabric/fabric_text.h"
#include "network/fabric/routing.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

TEST(GenerateFabric, FatTreeFileAndYamlRunUnderTheFlowBackend) {
  const auto dir = temp_dir("generate_fabric_fat_tree");
  const CommandResult g = run_binary({"generate", "fabric", "--kind", "fat-tree", "--radix", "4", "--out",
                                      (dir / "ft.txt").string(), "--network-out", (dir / "net.yml").string()});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  // k = 4: 16 hosts, 8 edge, 8 aggregation, 4 core switches; 16 + 16 + 16 cables.
  EXPECT_THAT(g.out, HasSubstr("16 NPUs, 20 switches, 48 cables"));
  const network::Fabric f = network::load_fabric_text((dir / "ft.txt").string());
  EXPECT_EQ(f.npu_count(), 16u);
  EXPECT_EQ(network::EcmpRouter(f, 1).hops(0, 15), 6u);
  EXPECT_EQ(file_bytes(dir / "net.yml"), "# 16 NPUs drawn as a graph; run with --backend flow\ntopology: [ Custom ]\n"
                                         "topology_file: \"ft.txt\"\n");

  // A 1 MiB all-reduce on the 16 NPUs runs to the end through the fabric.
  for (int r = 0; r < 16; ++r) {
    chakra::TraceBuilder b;
    b.collective("ar", chakra::CommType::kAllReduce, 1 << 20);
    chakra::write_trace(chakra::rank_path((dir / "ar").string(), static_cast<std::size_t>(r)), b.trace());
  }
  write_bytes(dir / "sys.json", R"({"preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"], "local-mem-bw": 50})");
  const std::vector<std::string> run = {"run",
                                        "--workload",
                                        (dir / "ar").string(),
                                        "--system",
                                        (dir / "sys.json").string(),
                                        "--network",
                                        (dir / "net.yml").string()};
  std::vector<std::string> flow = run;
  flow.insert(flow.end(), {"--backend", "flow"});
  const CommandResult r = run_binary(flow);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sys[15] finished"));
  // The analytical backends model dimensions only, and say which backend routes a graph.
  const CommandResult refused = run_binary(run);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("the network is drawn as a graph (topology: [ Custom ]), but the "
                                     "congestion-unaware backend models dimensions only; expected --backend flow"));
}

TEST(GenerateFabric, TorusRailsAndErrors) {
  const auto dir = temp_dir("generate_fabric_kinds");
  ASSERT_EQ(run_binary({"generate", "fabric", "--kind", "torus", "--dims", "4x4", "--out", (dir / "t.txt").string()})
                .exit_code,
            0);
  // A file without switches: its NPUs forward, so it reads back connected.
  const network::Fabric torus = network::load_fabric_text((dir / "t.txt").string());
  EXPECT_TRUE(torus.npus_forward());
  EXPECT_EQ(network::EcmpRouter(torus, 1).hops(0, 10), 4u);
  const CommandResult rails =
      run_binary({"generate", "fabric", "--kind", "fat-tree", "--radix", "8", "--tiers", "2", "--npus-per-server", "4",
                  "--rail-optimised", "--out", (dir / "r.txt").string()});
  ASSERT_EQ(rails.exit_code, 0) << rails.err;
  // k = 8, 2 tiers: 32 NICs, 8 leaves, 4 spines, and 8 NVSwitches of 4 NPUs. SimAI's head keeps
  // their role; NIC r of every server hangs under rail r's leaf (NPUs 0, 4, 8, 12 under one).
  const std::string text = file_bytes(dir / "r.txt");
  EXPECT_THAT(text, ::testing::StartsWith("52 4 8 12 96 GPU\n"));
  EXPECT_THAT(text, HasSubstr("0 40 400Gbps 500ns 0\n4 40 400Gbps 500ns 0\n8 40 400Gbps 500ns 0\n"));
  for (const auto& [args, needle] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{{{"--kind", "fat-tree", "--radix", "5"},
                                                                      "--radix 5: expected an even number"},
                                                                     {{"--kind", "mesh"},
                                                                      "--kind \"mesh\": expected fat-tree, leaf-spine, "
                                                                      "xgft, dragonfly or torus"},
                                                                     {{"--kind", "torus", "--dims", "4x0"},
                                                                      "--dims: \"4x0\" is not a list of whole numbers"},
                                                                     {{"--kind", "xgft", "--children", "4,4",
                                                                       "--parents", "1"},
                                                                      "2 tiers of children, 1 of parents"},
                                                                     {{"--kind", "fat-tree", "--radix", "4",
                                                                       "--bandwidth", "fast"},
                                                                      "--bandwidth: bandwidth \"fast\""}}) {
    std::vector<std::string> cmd = {"generate", "fabric", "--out", (dir / "x.txt").string()};
    cmd.insert(cmd.end(), args.begin(), args.end());
    const CommandResult e = run_binary(cmd);
    EXPECT_EQ(e.exit_code, 1) << needle;
    EXPECT_THAT(e.err, HasSubstr(needle));
  }
}

}  // namespace
}  // namespace chakrasim::test
