// The network YAML's keys for graph-routing backends (config/fabric_keys.h): routing, ecmp_seed,
// routes_file, nic_bandwidth.
#include "config/fabric_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/network_config.h"
#include "network/topology.h"
#include "support/test_support.h"

namespace chakrasim::config {
namespace {

using ::testing::HasSubstr;

constexpr const char* kDims = "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n";

// Four NPUs (nodes 0-3) on two switches (4, 5) joined by a cable; NPUs 0, 1
// on switch 4 and 2, 3 on switch 5.
constexpr const char* kTopology = "6 2 5\n4 5\n0 4 400Gbps 500ns 0\n1 4 400Gbps 500ns 0\n2 5 400Gbps 500ns 0\n"
                                  "3 5 400Gbps 500ns 0\n4 5 400Gbps 500ns 0\n";

// The dimensions above plus `extra` (appended, not concatenated with +: GCC 12 warns falsely).
std::string dims_and(const std::string& extra) {
  std::string text = kDims;
  text.append(extra);
  return text;
}

TEST(FabricKeys, DefaultsAreEcmpSeedOneAndNoNicCap) {
  const network::TopologySpec spec = parse_network(kDims, "net.yml");
  EXPECT_EQ(spec.routing.kind, network::RoutingKind::kEcmp);
  EXPECT_EQ(spec.routing.seed, 1u);
  EXPECT_EQ(spec.routing.fixed, nullptr);
  EXPECT_EQ(spec.nic_bytes_per_ns, 0.0);
}

TEST(FabricKeys, ReadsRoutingSeedAndNicBandwidthInBothUnits) {
  network::TopologySpec spec =
      parse_network(dims_and("routing: d-mod-k\necmp_seed: 18446744073709551615\nnic_bandwidth: 25\n"), "net"
                                                                                                        ".ym"
                                                                                                        "l");
  EXPECT_EQ(spec.routing.kind, network::RoutingKind::kDestinationModK);
  EXPECT_EQ(spec.routing.seed, 18446744073709551615ull);
  // A number is in the bandwidth key's unit, GB/s with GB = 2^30 B.
  EXPECT_DOUBLE_EQ(spec.nic_bytes_per_ns, network::bytes_per_ns(25));
  spec = parse_network(dims_and("nic_bandwidth: \"400Gbps\"\n"), "net.yml");
  EXPECT_DOUBLE_EQ(spec.nic_bytes_per_ns, 50.0);
}

TEST(FabricKeys, ErrorsNameTheKeyAndWhatWasExpected) {
  auto error = [](const std::string& extra) {
    return test::error_of([&] { parse_network(dims_and(extra), "net.yml"); });
  };
  EXPECT_THAT(error("routing: spray\n"), HasSubstr("net.yml: key \"routing\" is \"spray\"; expected ecmp or d-mod-k"));
  EXPECT_THAT(error("routing: [ ecmp ]\n"), HasSubstr("key \"routing\": expected a single value"));
  EXPECT_THAT(error("ecmp_seed: -1\n"), HasSubstr("key \"ecmp_seed\" is \"-1\"; expected a whole number"));
  EXPECT_THAT(error("nic_bandwidth: 0\n"), HasSubstr("key \"nic_bandwidth\" is 0; expected a positive number"));
  EXPECT_THAT(error("nic_bandwidth: fast\n"), HasSubstr("nic_bandwidth"));
  EXPECT_THAT(error("routes_file: r.txt\n"), HasSubstr("key \"routes_file\" needs topology: [ Custom ]"));
}

TEST(FabricKeys, RoutesFileIsReadBesideTheYamlAndChecked) {
  const auto dir = test::temp_dir("fabric_keys_routes");
  test::write_bytes(dir / "topo.txt", kTopology);
  test::write_bytes(dir / "net.yml", "topology: [ Custom ]\ntopology_file: topo.txt\nroutes_file: routes.txt\n");
  // NPU 0 to NPU 3 over the cable between the switches; a comment and a blank line are skipped.
  test::write_bytes(dir / "routes.txt", "# fixed\n\n0 4 5 3\n");
  const network::TopologySpec spec = load_network((dir / "net.yml").string());
  ASSERT_NE(spec.routing.fixed, nullptr);
  const auto& route = spec.routing.fixed->at(network::route_key(0, 3));
  ASSERT_EQ(route.size(), 3u);
  EXPECT_EQ(spec.fabric->link(route[0]).from, 0u);
  EXPECT_EQ(spec.fabric->link(route[1]).from, 4u);
  EXPECT_EQ(spec.fabric->link(route[1]).to, 5u);
  EXPECT_EQ(spec.fabric->link(route[2]).to, 3u);

  auto error = [&](const std::string& routes) {
    test::write_bytes(dir / "routes.txt", routes);
    return test::error_of([&] { load_network((dir / "net.yml").string()); });
  };
  EXPECT_THAT(error("0 5 3\n"), HasSubstr("routes.txt: line 1: no link from node 0 to node 5"));
  EXPECT_THAT(error("0 4 5\n"), HasSubstr("routes.txt: line 1: expected a route from one NPU's node to another's"));
  EXPECT_THAT(error("0 4 9 3\n"), HasSubstr("routes.txt: line 1: \"9\" is not a node of the topology; expected node "
                                            "ids 0 to 5"));
  EXPECT_THAT(error("0 4 1\n0 4 1\n"), HasSubstr("line 2: a second route from NPU 0 to NPU 1"));
  EXPECT_THAT(error("0 4 1 4 5 3\n"), HasSubstr("passes through NPU node 1"));
  test::write_bytes(dir / "routes.txt", "");
  EXPECT_TRUE(load_network((dir / "net.yml").string()).routing.fixed->empty());
  EXPECT_THAT(test::error_of([&] {
                test::write_bytes(dir / "net.yml", "topology: [ Custom ]\ntopology_file: topo.txt\nroutes_file: "
                                                   "no.txt\n");
                load_network((dir / "net.yml").string());
              }),
              HasSubstr("no.txt"));
}

}  // namespace
}  // namespace chakrasim::config
