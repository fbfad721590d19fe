// Covers the analytical network YAML reader (config/network_config.h): the §1.2 example and the
// reference configs to exact values, ignored extra keys and their warnings, every error with its
// message, and the key table behind --help-network.
#include "config/network_config.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "network/network.h"
#include "support/test_support.h"

namespace chakrasim::config {
namespace {

using network::DimensionKind;
using ::testing::HasSubstr;

using ::chakrasim::test::error_of;

std::string parse_error(const std::string& text) {
  return error_of([&] { parse_network(text, "net.yml"); });
}

// docs/astra-sim-model.md §1.2.
const char* const kExample = "topology:   [ Ring, FullyConnected, Switch ]   # one entry per dimension, dim 0 first\n"
                             "npus_count: [ 2, 8, 4 ]                        # NPUs per dimension (total = product)\n"
                             "bandwidth:  [ 200.0, 100.0, 50.0 ]             # GB/s per link, per direction\n"
                             "latency:    [ 50.0, 500.0, 2000.0 ]            # ns per link (per hop)\n";

// A one-dimensional network with the given values substituted as raw YAML.
std::string one_dim(const std::string& topology, const std::string& npus, const std::string& bw,
                    const std::string& lat) {
  return "topology: [ " + topology + " ]\nnpus_count: [ " + npus + " ]\nbandwidth: [ " + bw + " ]\nlatency: [ " + lat +
         " ]\n";
}

TEST(NetworkConfig, DocumentedExampleParsesToThreeDimensions) {
  const network::TopologySpec spec = parse_network(kExample, "example.yml");
  ASSERT_EQ(spec.dims.size(), 3u);
  EXPECT_EQ(spec.dims[0].kind, DimensionKind::kRing);
  EXPECT_EQ(spec.dims[0].npus, 2u);
  EXPECT_EQ(spec.dims[0].bandwidth_gib_per_s, 200.0);
  EXPECT_EQ(spec.dims[0].latency_ns, 50.0);
  EXPECT_EQ(spec.dims[1].kind, DimensionKind::kFullyConnected);
  EXPECT_EQ(spec.dims[1].npus, 8u);
  EXPECT_EQ(spec.dims[1].bandwidth_gib_per_s, 100.0);
  EXPECT_EQ(spec.dims[1].latency_ns, 500.0);
  EXPECT_EQ(spec.dims[2].kind, DimensionKind::kSwitch);
  EXPECT_EQ(spec.dims[2].npus, 4u);
  EXPECT_EQ(spec.dims[2].bandwidth_gib_per_s, 50.0);
  EXPECT_EQ(spec.dims[2].latency_ns, 2000.0);
}

TEST(NetworkConfig, BlockListsIntegersAndFractionsAreAccepted) {
  const network::TopologySpec spec =
      parse_network("topology:\n  - Switch\nnpus_count:\n  - 16\nbandwidth:\n  - 400\nlatency:\n  - 936.25\n", "b.yml");
  ASSERT_EQ(spec.dims.size(), 1u);
  EXPECT_EQ(spec.dims[0].kind, DimensionKind::kSwitch);
  EXPECT_EQ(spec.dims[0].npus, 16u);
  EXPECT_EQ(spec.dims[0].bandwidth_gib_per_s, 400.0);
  EXPECT_EQ(spec.dims[0].latency_ns, 936.25);
}

TEST(NetworkConfig, ZeroLatencyAndTwoNpusAreTheLimits) {
  const network::TopologySpec spec = parse_network(one_dim("Ring", "2", "0.5", "0"), "z.yml");
  ASSERT_EQ(spec.dims.size(), 1u);
  EXPECT_EQ(spec.dims[0].npus, 2u);
  EXPECT_EQ(spec.dims[0].bandwidth_gib_per_s, 0.5);
  EXPECT_EQ(spec.dims[0].latency_ns, 0.0);
}

TEST(NetworkConfig, ExtraKeysAreIgnored) {
  const std::string text = std::string(kExample) + "units-count: [ 1, 2 ]\n"
                                                   "topology-name: Hierarchical\n"
                                                   "nested: { a: 1 }\n";
  const network::TopologySpec spec = parse_network(text, "extra.yml");
  ASSERT_EQ(spec.dims.size(), 3u);
  EXPECT_EQ(spec.dims[2].latency_ns, 2000.0);
}

TEST(NetworkConfigErrors, InvalidYamlNamesTheLine) {
  // An unclosed flow sequence: yaml-cpp reports where the list should have ended.
  const std::string msg = parse_error("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50\nlatency: [ 5 ]\n");
  EXPECT_THAT(msg, HasSubstr("net.yml: line "));
  EXPECT_THAT(msg, HasSubstr("invalid YAML"));
}

TEST(NetworkConfigErrors, InvalidYamlLineNumberIsOneBased) {
  // A mapping value where none is allowed, on the third line.
  const std::string msg = parse_error("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]: x\nlatency: [ 5 ]\n");
  EXPECT_THAT(msg, HasSubstr("net.yml: line 3, column"));
  EXPECT_THAT(msg, HasSubstr("invalid YAML"));
}

TEST(NetworkConfigErrors, InvalidIndentationNamesItsLine) {
  const std::string msg = parse_error("topology: [ Ring ]\nnpus_count: [ 4 ]\n  bandwidth: [ 50 ]\nlatency: [ 5 ]\n");
  EXPECT_THAT(msg, HasSubstr("net.yml: line 3, column 3: invalid YAML"));
}

TEST(NetworkConfigErrors, NotAMapping) {
  EXPECT_THAT(parse_error("- Ring\n- Switch\n"), HasSubstr("net.yml: expected a YAML mapping with keys topology, "
                                                           "npus_count, bandwidth, latency"));
  EXPECT_THAT(parse_error(""), HasSubstr("net.yml: expected a YAML mapping"));
}

TEST(NetworkConfigErrors, MissingKey) {
  for (const char* key : {"topology", "npus_count", "bandwidth", "latency"}) {
    SCOPED_TRACE(key);
    std::string text;
    for (const auto& [k, v] :
         {std::pair{"topology", "[ Ring ]"}, {"npus_count", "[ 4 ]"}, {"bandwidth", "[ 50 ]"}, {"latency", "[ 5 ]"}}) {
      if (std::string(k) != key) text += std::string(k) + ": " + v + "\n";
    }
    const std::string msg = parse_error(text);
    EXPECT_THAT(msg, HasSubstr("net.yml: missing key \"" + std::string(key) + "\""));
    EXPECT_THAT(msg, HasSubstr("expected a list with one entry per dimension"));
  }
}

TEST(NetworkConfigErrors, NotAList) {
  std::string msg = parse_error("topology: [ Ring ]\nnpus_count: 4\nbandwidth: [ 50 ]\nlatency: [ 5 ]\n");
  EXPECT_THAT(msg, HasSubstr("net.yml: key \"npus_count\": expected a non-empty list with one entry per dimension"));
  msg = parse_error("topology: Ring\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 5 ]\n");
  EXPECT_THAT(msg, HasSubstr("key \"topology\": expected a non-empty list"));
  msg = parse_error("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: { a: 50 }\nlatency: [ 5 ]\n");
  EXPECT_THAT(msg, HasSubstr("key \"bandwidth\": expected a non-empty list"));
  msg = parse_error("topology: []\nnpus_count: []\nbandwidth: []\nlatency: []\n");
  EXPECT_THAT(msg, HasSubstr("key \"topology\": expected a non-empty list"));
}

TEST(NetworkConfigErrors, ListsOfDifferentLengths) {
  std::string msg = parse_error("topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50 ]\nlatency: [ 5, 5 "
                                "]\n");
  EXPECT_THAT(msg, HasSubstr("net.yml: key \"bandwidth\" has 1 entries but \"topology\" has 2"));
  EXPECT_THAT(msg, HasSubstr("expected one entry per dimension"));
  msg = parse_error("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 5, 5, 5 ]\n");
  EXPECT_THAT(msg, HasSubstr("key \"latency\" has 3 entries but \"topology\" has 1"));
}

TEST(NetworkConfigErrors, UnknownTopologyIsCaseSensitive) {
  for (const char* name : {"ring", "RING", "fullyconnected", "switch", "Mesh", "Torus2D"}) {
    SCOPED_TRACE(name);
    const std::string msg = parse_error(one_dim(name, "4", "50", "5"));
    EXPECT_THAT(msg, HasSubstr("net.yml: topology[0]: value \"" + std::string(name) + "\" is not a topology"));
    EXPECT_THAT(msg, HasSubstr("expected Ring, FullyConnected or Switch (case-sensitive)"));
  }
  // The index is the dimension's.
  const std::string msg = parse_error("topology: [ Ring, ring ]\nnpus_count: [ 2, 2 ]\nbandwidth: [ 1, 1 ]\nlatency: [ "
                                      "1, 1 ]\n");
  EXPECT_THAT(msg, HasSubstr("topology[1]: value \"ring\""));
}

TEST(NetworkConfigErrors, NpusCountMustBeAPositiveInteger) {
  EXPECT_THAT(parse_error(one_dim("Ring", "0", "50", "5")), HasSubstr("net.yml: npus_count[0]: value 0 is invalid; "
                                                                      "expected an integer of at least 1"));
  EXPECT_THAT(parse_error(one_dim("Ring", "-4", "50", "5")), HasSubstr("npus_count[0]: value -4 is invalid"));
  EXPECT_THAT(parse_error(one_dim("Ring", "2.5", "50", "5")), HasSubstr("npus_count[0]: value 2.5 is invalid; expected "
                                                                        "an integer of at least 1"));
  EXPECT_THAT(parse_error(one_dim("Ring", "four", "50", "5")), HasSubstr("net.yml: npus_count[0]: value \"four\" is "
                                                                         "not a number"));
}

TEST(NetworkConfigErrors, TooManyNpusInTotal) {
  const std::string msg = parse_error("topology: [ Ring, Ring ]\nnpus_count: [ 65536, 65536 ]\nbandwidth: [ 1, 1 "
                                      "]\nlatency: [ 1, 1 ]\n");
  EXPECT_THAT(msg, HasSubstr("net.yml: npus_count: the network has more than 2^31 NPUs"));
}

TEST(NetworkConfigErrors, BandwidthMustBePositive) {
  EXPECT_THAT(parse_error(one_dim("Switch", "4", "0", "5")), HasSubstr("net.yml: bandwidth[0]: value 0 is invalid; "
                                                                       "expected a positive number in GB/s"));
  EXPECT_THAT(parse_error(one_dim("Switch", "4", "-50", "5")), HasSubstr("bandwidth[0]: value -50 is invalid"));
}

TEST(NetworkConfigErrors, LatencyMustNotBeNegative) {
  EXPECT_THAT(parse_error(one_dim("Switch", "4", "50", "-0.5")), HasSubstr("net.yml: latency[0]: value -0.5 is "
                                                                           "invalid; expected a number of ns, 0 or "
                                                                           "more"));
}

TEST(NetworkConfigErrors, NonNumericEntries) {
  EXPECT_THAT(parse_error(one_dim("Ring", "4", "fast", "5")), HasSubstr("net.yml: bandwidth[0]: value \"fast\" is not "
                                                                        "a number"));
  EXPECT_THAT(parse_error(one_dim("Ring", "4", "50", "5ns")), HasSubstr("latency[0]: value \"5ns\" is not a number"));
  EXPECT_THAT(parse_error(one_dim("Ring", "4", ".nan", "5")), HasSubstr("bandwidth[0]: value \".nan\" is not a "
                                                                        "number"));
  EXPECT_THAT(parse_error(one_dim("Ring", "4", "50", ".inf")), HasSubstr("latency[0]: value \".inf\" is not a number"));
  EXPECT_THAT(parse_error(one_dim("Ring", "4", "50", "[ 1 ]")), HasSubstr("latency[0]: value \"(not a scalar)\" is not "
                                                                          "a number"));
  EXPECT_THAT(parse_error(one_dim("[ Ring ]", "4", "50", "5")), HasSubstr("topology[0]: value \"(not a scalar)\" is "
                                                                          "not a topology"));
}

TEST(NetworkConfigFiles, UnreadablePathIsNamed) {
  const std::string path = (test::temp_dir("network_missing") / "none.yml").string();
  const std::string msg = error_of([&] { load_network(path); });
  EXPECT_THAT(msg, HasSubstr(path));
  EXPECT_THAT(msg, HasSubstr("cannot open the network configuration"));
}

TEST(NetworkConfigFiles, DirectoryIsAnErrorNamingThePath) {
  // A directory opens as a stream but fails to read (EISDIR): expect chakrasim::Error naming
  // the path, not a std::ios_base::failure escaping from the read.
  const std::string path = test::temp_dir("network_dir").string();
  const std::string msg = error_of([&] { load_network(path); });
  EXPECT_THAT(msg, HasSubstr(path + ": is a directory"));
  EXPECT_THAT(msg, HasSubstr("network configuration"));
}

TEST(NetworkConfigFiles, LoadNamesTheFileInErrors) {
  const std::string path = (test::temp_dir("network_file") / "bad.yml").string();
  std::ofstream(path) << one_dim("Ring", "4", "50", "-1");
  const std::string msg = error_of([&] { load_network(path); });
  EXPECT_THAT(msg, HasSubstr(path + ": latency[0]: value -1 is invalid"));
}

TEST(NetworkConfigFiles, LoadReadsAFile) {
  const std::string path = (test::temp_dir("network_ok") / "ok.yml").string();
  std::ofstream(path) << kExample;
  const network::TopologySpec spec = load_network(path);
  ASSERT_EQ(spec.dims.size(), 3u);
  EXPECT_EQ(spec.dims[1].npus, 8u);
}

TEST(NetworkConfigFiles, ReferenceConfigsParse) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto configs = ref / "configs";
  struct Expected {
    const char* file;
    DimensionKind kind;
    std::uint32_t npus;
    double bandwidth;
    double latency;
  };
  for (const Expected& e : {Expected{"HGX-H100-validated.yml", DimensionKind::kSwitch, 8, 400.0, 936.25},
                            Expected{"Ring_4npus.yml", DimensionKind::kRing, 4, 50.0, 500.0},
                            Expected{"Ring_8npus.yml", DimensionKind::kRing, 8, 50.0, 500.0},
                            Expected{"Ring_16npus.yml", DimensionKind::kRing, 16, 50.0, 500.0}}) {
    SCOPED_TRACE(e.file);
    const network::TopologySpec spec = load_network((configs / e.file).string());
    ASSERT_EQ(spec.dims.size(), 1u);
    EXPECT_EQ(spec.dims[0].kind, e.kind);
    EXPECT_EQ(spec.dims[0].npus, e.npus);
    EXPECT_EQ(spec.dims[0].bandwidth_gib_per_s, e.bandwidth);
    EXPECT_EQ(spec.dims[0].latency_ns, e.latency);
  }
  // And every .yml there parses.
  for (const auto& entry : std::filesystem::directory_iterator(configs)) {
    if (entry.path().extension() == ".yml") {
      SCOPED_TRACE(entry.path().string());
      EXPECT_NO_THROW(load_network(entry.path().string()));
    }
  }
}

TEST(NetworkConfigWarnings, AValidFileGivesNone) {
  std::vector<std::string> warnings;
  parse_network(kExample, "example.yml", &warnings);
  EXPECT_THAT(warnings, ::testing::IsEmpty());
}

TEST(NetworkConfigWarnings, AMisspeltKeyNamesTheFileTheKeyAndTheNearestValidOne) {
  // "bandwith" is one edit from "bandwidth"; "Latency" differs from "latency" in case only;
  // "npus-count" in one character. Each is ignored (the real keys are there) with a warning.
  std::vector<std::string> warnings;
  const network::TopologySpec spec = parse_network(std::string(kExample) + "bandwith: [ 1, 2, 3 ]\nLatency: [ 0, 0, 0 "
                                                                           "]\nnpus-count: [ 1 ]\n",
                                                   "net.yml", &warnings);
  EXPECT_EQ(spec.dims[0].bandwidth_gib_per_s, 200.0);
  EXPECT_EQ(spec.dims[0].latency_ns, 50.0);
  EXPECT_THAT(warnings, ::testing::ElementsAre("net.yml: unknown key \"bandwith\" ignored; did you mean \"bandwidth\"?",
                                               "net.yml: unknown key \"Latency\" ignored; did you mean \"latency\"?",
                                               "net.yml: unknown key \"npus-count\" ignored; did you mean "
                                               "\"npus_count\"?"));
}

TEST(NetworkConfigWarnings, AKeyNearNoValidOneListsThemAll) {
  // "nested" is at least 5 edits from every key: no guess, the valid keys instead.
  std::vector<std::string> warnings;
  parse_network(std::string(kExample) + "nested: { a: 1 }\n", "net.yml", &warnings);
  EXPECT_THAT(warnings, ::testing::ElementsAre("net.yml: unknown key \"nested\" ignored; the keys are topology, "
                                               "npus_count, bandwidth and latency"));
}

TEST(NetworkConfigWarnings, AMissingKeyNamesItsLikelyMisspelling) {
  // Only "bandwith" is there: the error for the missing "bandwidth" points at it.
  const std::string msg = parse_error("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwith: [ 50 ]\nlatency: [ 5 ]\n");
  EXPECT_THAT(msg, HasSubstr("net.yml: missing key \"bandwidth\"; expected a list with one entry per dimension "
                             "(is \"bandwith\" a misspelling of it?)"));
}

TEST(NetworkConfigWarnings, LoadNamesThePath) {
  const std::string path = (test::temp_dir("network_warning") / "typo.yml").string();
  std::ofstream(path) << kExample << "latancy: [ 1, 1, 1 ]\n";
  std::vector<std::string> warnings;
  load_network(path, &warnings);
  EXPECT_THAT(warnings, ::testing::ElementsAre(path + ": unknown key \"latancy\" ignored; did you mean \"latency\"?"));
}

TEST(NetworkConfigKeys, TheTableListsEveryKeyWithItsUnitAndReaders) {
  EXPECT_EQ(network_keys(), (std::vector<std::string>{"topology", "npus_count", "bandwidth", "latency", "topology_file",
                                                      "routing", "ecmp_seed", "routes_file", "nic_bandwidth"}));
  const std::string table = describe_network_keys();
  for (const std::string& key : network_keys()) EXPECT_THAT(table, HasSubstr("  " + key + " "));
  EXPECT_THAT(table, HasSubstr("GB/s, GB = 2^30 B"));
  EXPECT_THAT(table, HasSubstr("ns"));
  EXPECT_THAT(table, HasSubstr("read by: congestion-unaware, congestion-aware, flow"));
  EXPECT_THAT(table, HasSubstr("with topology: [ Custom ] alone"));
}

// topology: [ Custom ] reads the graph from topology_file, relative to the YAML's folder; the
// collective algorithms see one Switch dimension of its NPUs.
TEST(NetworkConfigCustom, TopologyFileIsReadBesideTheYaml) {
  const auto dir = test::temp_dir("network_custom");
  test::write_bytes(dir / "topo.txt", "5 1 4\n4\n0 4 400Gbps 500ns 0\n1 4 400Gbps 500ns 0\n2 4 400Gbps 500ns 0\n"
                                      "3 4 400Gbps 500ns 0\n");
  test::write_bytes(dir / "net.yml", "topology: [ Custom ]\ntopology_file: \"topo.txt\"\nnpus_count: [ 4 ]\n");
  std::vector<std::string> warnings;
  const network::TopologySpec spec = load_network((dir / "net.yml").string(), &warnings);
  ASSERT_NE(spec.fabric, nullptr);
  EXPECT_EQ(spec.fabric->npu_count(), 4u);
  ASSERT_EQ(spec.dims.size(), 1u);
  EXPECT_EQ(spec.dims[0].kind, network::DimensionKind::kSwitch);
  EXPECT_EQ(spec.dims[0].npus, 4u);
  EXPECT_DOUBLE_EQ(spec.dims[0].bandwidth_gib_per_s, 50e9 / (1u << 30));
  EXPECT_EQ(spec.dims[0].latency_ns, 500.0);
  EXPECT_THAT(warnings, ::testing::ElementsAre(HasSubstr("key \"npus_count\" ignored: a Custom topology's file gives "
                                                         "the links")));
}

TEST(NetworkConfigCustom, ErrorsNameTheKeyAndTheFile) {
  const auto dir = test::temp_dir("network_custom_errors");
  test::write_bytes(dir / "net.yml", "topology: [ Custom ]\n");
  EXPECT_THAT(test::error_of([&] { load_network((dir / "net.yml").string()); }), HasSubstr("net.yml: topology is [ "
                                                                                           "Custom ], so key "
                                                                                           "\"topology_file\" must "
                                                                                           "name the topology text "
                                                                                           "file"));
  test::write_bytes(dir / "net.yml", "topology: [ Custom ]\ntopology_file: missing.txt\n");
  EXPECT_THAT(test::error_of([&] { load_network((dir / "net.yml").string()); }), HasSubstr("missing.txt"));
  EXPECT_THAT(parse_error(one_dim("Custom, Ring", "4, 2", "50, 50", "5, 5")), HasSubstr("or [ Custom ] alone with a "
                                                                                        "topology_file"));
}

TEST(NetworkConfigKeys, EveryBackendReadsOnlyKeysOfTheTable) {
  // A backend row's parameter schema names keys this reader knows, so --help-network and the
  // unknown-key warning cover everything a backend reads.
  const std::vector<std::string> keys = network_keys();
  for (const network::BackendInfo& b : network::backends()) {
    for (const char* key : b.params) {
      EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << b.name << " reads \"" << key << "\"";
    }
  }
}

}  // namespace
}  // namespace chakrasim::config
