// Covers the system-layer JSON reader (config/system_config.h): every key of the table, the
// command-line flags, defaults and warnings, each rejected value, describe_system_keys() and the
// reference's own system configs.
#include "config/system_config.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::config {
namespace {

using system::AlgorithmKind;
using system::CollectiveKind;
using system::CollectiveOptimization;
using system::SchedulingPolicy;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ::chakrasim::test::error_of;

SystemConfig parse(const std::string& text, const SystemFlags& flags = {}) {
  return parse_system(text, "sys.json", flags);
}

// `extra` ("\"key\": value") added to the one required key.
SystemConfig parse_with(const std::string& extra, const SystemFlags& flags = {}) {
  return parse("{\"preferred-dataset-splits\": 4, \"local-mem-bw\": 50, " + extra + "}", flags);
}

std::string error_with(const std::string& extra, const SystemFlags& flags = {}) {
  return error_of([&] { parse_with(extra, flags); });
}

const std::vector<system::AlgorithmChoice>& impl(const SystemConfig& c, CollectiveKind kind) {
  return c.system.implementations[static_cast<std::size_t>(kind)];
}

TEST(SystemConfig, MinimalFileGetsTheDefaults) {
  const SystemConfig c = parse("{\"preferred-dataset-splits\": 1}");
  EXPECT_EQ(c.system.scheduling_policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(c.system.collective_optimization, CollectiveOptimization::kBaseline);
  EXPECT_EQ(c.system.endpoint_delay_ns, 10u);
  EXPECT_EQ(c.system.active_chunks_per_dimension, 1u);
  EXPECT_EQ(c.system.preferred_dataset_splits, 1u);
  EXPECT_EQ(c.system.local_mem_bw_gb_per_s, 0.0);
  EXPECT_EQ(c.system.num_queues_per_dim, 1u);
  for (const auto& list : c.system.implementations) EXPECT_THAT(list, IsEmpty());
  EXPECT_EQ(c.compute.model, "replay");
  EXPECT_EQ(c.compute.peak_perf_tflops, 0.0);
  EXPECT_EQ(c.compute.local_mem_bw_gb_per_s, 0.0);
  EXPECT_FALSE(c.replay_only);
}

TEST(SystemConfig, MissingLocalMemBwWarns) {
  const SystemConfig c = parse("{\"preferred-dataset-splits\": 1}");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_THAT(c.warnings[0], HasSubstr("sys.json"));
  EXPECT_THAT(c.warnings[0], HasSubstr("no \"local-mem-bw\""));
  EXPECT_THAT(c.warnings[0], HasSubstr("reductions cost 0 ns"));
  // With the key there is no warning.
  EXPECT_THAT(parse_with("\"boost-mode\": 0").warnings, IsEmpty());
}

TEST(SystemConfig, SchedulingPolicy) {
  EXPECT_EQ(parse_with("\"scheduling-policy\": \"LIFO\"").system.scheduling_policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(parse_with("\"scheduling-policy\": \"FIFO\"").system.scheduling_policy, SchedulingPolicy::kFifo);
  EXPECT_EQ(parse_with("\"scheduling-policy\": \"EXPLICIT\"").system.scheduling_policy, SchedulingPolicy::kExplicit);
  for (const char* bad : {"\"fifo\"", "\"RANDOM\"", "1", "null", "[\"FIFO\"]"}) {
    SCOPED_TRACE(bad);
    const std::string msg = error_with(std::string("\"scheduling-policy\": ") + bad);
    EXPECT_THAT(msg, HasSubstr("sys.json: key \"scheduling-policy\": value " + std::string(bad) + " is invalid"));
    EXPECT_THAT(msg, HasSubstr("expected \"LIFO\", \"FIFO\" or \"EXPLICIT\""));
  }
}

TEST(SystemConfig, CollectiveOptimization) {
  EXPECT_EQ(parse_with("\"collective-optimization\": \"localBWAware\"").system.collective_optimization,
            CollectiveOptimization::kLocalBwAware);
  EXPECT_EQ(parse_with("\"collective-optimization\": \"baseline\"").system.collective_optimization,
            CollectiveOptimization::kBaseline);
  const std::string msg = error_with("\"collective-optimization\": \"LocalBWAware\"");
  EXPECT_THAT(msg, HasSubstr("sys.json: key \"collective-optimization\": value \"LocalBWAware\" is invalid"));
  EXPECT_THAT(msg, HasSubstr("expected \"baseline\" or \"localBWAware\""));
}

TEST(SystemConfig, EndpointDelay) {
  EXPECT_EQ(parse_with("\"endpoint-delay\": 0").system.endpoint_delay_ns, 0u);
  EXPECT_EQ(parse_with("\"endpoint-delay\": 123").system.endpoint_delay_ns, 123u);
  // An integral float is an integer.
  EXPECT_EQ(parse_with("\"endpoint-delay\": 20.0").system.endpoint_delay_ns, 20u);
  for (const char* bad : {"-1", "10.5", "\"10\"", "true"}) {
    SCOPED_TRACE(bad);
    const std::string msg = error_with(std::string("\"endpoint-delay\": ") + bad);
    EXPECT_THAT(msg, HasSubstr("sys.json: key \"endpoint-delay\": value " + std::string(bad) + " is invalid"));
    EXPECT_THAT(msg, HasSubstr("expected an integer, 0 or more"));
  }
}

TEST(SystemConfig, InjectionScaleMultipliesAnExplicitEndpointDelayAndTruncates) {
  SystemFlags flags;
  flags.injection_scale = 2.5;
  EXPECT_EQ(parse_with("\"endpoint-delay\": 10", flags).system.endpoint_delay_ns, 25u);
  EXPECT_EQ(parse_with("\"endpoint-delay\": 7", flags).system.endpoint_delay_ns, 17u);  // 17.5 truncated
  flags.injection_scale = 0.3;
  EXPECT_EQ(parse_with("\"endpoint-delay\": 10", flags).system.endpoint_delay_ns, 3u);
  flags.injection_scale = 0;
  EXPECT_EQ(parse_with("\"endpoint-delay\": 10", flags).system.endpoint_delay_ns, 0u);
}

TEST(SystemConfig, InjectionScaleLeavesTheDefaultEndpointDelayAlone) {
  SystemFlags flags;
  flags.injection_scale = 2.5;
  EXPECT_EQ(parse_with("\"boost-mode\": 1", flags).system.endpoint_delay_ns, 10u);
}

TEST(SystemConfig, FlagsAreValidatedAndApplied) {
  SystemFlags flags;
  flags.num_queues_per_dim = 3;
  EXPECT_EQ(parse_with("\"boost-mode\": 1", flags).system.num_queues_per_dim, 3u);
  flags.num_queues_per_dim = 0;
  EXPECT_THAT(error_with("\"boost-mode\": 1", flags), HasSubstr("--num-queues-per-dim: value 0 is invalid; expected an "
                                                                "integer of at least 1"));
  flags = {};
  flags.injection_scale = -1;
  EXPECT_THAT(error_with("\"boost-mode\": 1", flags), HasSubstr("--injection-scale: value -1 is invalid; expected a "
                                                                "number, 0 or more"));
}

TEST(SystemConfig, ActiveChunksPerDimension) {
  EXPECT_EQ(parse_with("\"active-chunks-per-dimension\": 2").system.active_chunks_per_dimension, 2u);
  EXPECT_EQ(parse_with("\"active-chunks-per-dimension\": 1").system.active_chunks_per_dimension, 1u);
  for (const char* bad : {"0", "-2", "1.5", "\"2\""}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(error_with(std::string("\"active-chunks-per-dimension\": ") + bad),
                HasSubstr("key \"active-chunks-per-dimension\": value " + std::string(bad) +
                          " is invalid; expected an integer of at least 1"));
  }
}

TEST(SystemConfig, IntegersAboveUint32AreRejectedNotWrapped) {
  // 2^32 active chunks would wrap to 0 in the 32-bit field: every integer key stops at 2^32 - 1.
  EXPECT_EQ(parse_with("\"active-chunks-per-dimension\": 4294967295").system.active_chunks_per_dimension, 4294967295u);
  for (const char* key : {"active-chunks-per-dimension", "preferred-dataset-splits", "endpoint-delay"}) {
    for (const char* bad : {"4294967296", "18446744073709551615", "4294967296.0"}) {
      SCOPED_TRACE(std::string(key) + " = " + bad);
      const std::string msg = error_of([&] {
        parse(std::string("{\"preferred-dataset-splits\": 1, \"local-mem-bw\": 1, \"") + key + "\": " + bad + "}");
      });
      EXPECT_THAT(msg, HasSubstr(std::string("sys.json: key \"") + key + "\": value "));
      EXPECT_THAT(msg, HasSubstr("(and at most 4294967295)"));
    }
  }
}

TEST(SystemConfig, PreferredDatasetSplitsIsRequired) {
  EXPECT_EQ(parse("{\"preferred-dataset-splits\": 64}").system.preferred_dataset_splits, 64u);
  EXPECT_EQ(parse("{\"preferred-dataset-splits\": 4294967295}").system.preferred_dataset_splits, 4294967295u);
  std::string msg = error_of([] { parse("{\"local-mem-bw\": 50}"); });
  EXPECT_THAT(msg, HasSubstr("sys.json: missing key \"preferred-dataset-splits\""));
  EXPECT_THAT(msg, HasSubstr("an integer of at least 1"));
  msg = error_of([] { parse("{\"preferred-dataset-splits\": 0}"); });
  EXPECT_THAT(msg, HasSubstr("key \"preferred-dataset-splits\": value 0 is invalid; expected an integer of at least "
                             "1"));
  msg = error_of([] { parse("{\"preferred-dataset-splits\": \"4\"}"); });
  EXPECT_THAT(msg, HasSubstr("key \"preferred-dataset-splits\": value \"4\" is invalid"));
}

TEST(SystemConfig, LocalMemBwAlsoSetsTheComputeModel) {
  const SystemConfig c = parse("{\"preferred-dataset-splits\": 1, \"local-mem-bw\": 1600.5}");
  EXPECT_EQ(c.system.local_mem_bw_gb_per_s, 1600.5);
  EXPECT_EQ(c.compute.local_mem_bw_gb_per_s, 1600.5);
  EXPECT_EQ(parse("{\"preferred-dataset-splits\": 1, \"local-mem-bw\": 0}").system.local_mem_bw_gb_per_s, 0.0);
  for (const char* bad : {"-1", "\"50\"", "null"}) {
    SCOPED_TRACE(bad);
    const std::string msg =
        error_of([&] { parse(std::string("{\"preferred-dataset-splits\": 1, \"local-mem-bw\": ") + bad + "}"); });
    EXPECT_THAT(msg, HasSubstr("key \"local-mem-bw\": value " + std::string(bad) +
                               " is invalid; expected a number, 0 or more"));
  }
}

TEST(SystemConfig, PeakPerfAndRoofline) {
  const SystemConfig c = parse_with("\"peak-perf\": 900, \"roofline-enabled\": 1");
  EXPECT_EQ(c.compute.peak_perf_tflops, 900.0);
  EXPECT_EQ(c.compute.model, "roofline");
  EXPECT_EQ(c.compute.local_mem_bw_gb_per_s, 50.0);
  EXPECT_EQ(parse_with("\"peak-perf\": 1, \"roofline-enabled\": true").compute.model, "roofline");
  // Without a positive peak-perf and local-mem-bw the roofline would time every compute node at 0 ns.
  EXPECT_THAT(error_with("\"roofline-enabled\": 1"), HasSubstr("roofline-enabled is 1, but \"peak-perf\" is missing; "
                                                               "expected a positive number"));
  EXPECT_THAT(error_with("\"peak-perf\": 0, \"roofline-enabled\": 1"), HasSubstr("\"peak-perf\" is 0; expected"));
  EXPECT_THAT(error_of([] {
                parse("{\"preferred-dataset-splits\": 4, \"local-mem-bw\": 0, \"peak-perf\": 5, \"roofline-enabled\": "
                      "1}");
              }),
              HasSubstr("\"local-mem-bw\" is 0; expected a positive number"));
  EXPECT_EQ(parse_with("\"roofline-enabled\": 0").compute.model, "replay");
  EXPECT_EQ(parse_with("\"roofline-enabled\": false").compute.model, "replay");
  EXPECT_EQ(parse_with("\"peak-perf\": 0.5").compute.peak_perf_tflops, 0.5);
  EXPECT_THAT(error_with("\"peak-perf\": -900"), HasSubstr("key \"peak-perf\": value -900 is invalid; expected a "
                                                           "number, 0 or more"));
  for (const char* bad : {"2", "-1", "\"1\"", "0.5"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(error_with(std::string("\"roofline-enabled\": ") + bad),
                HasSubstr("key \"roofline-enabled\": value " + std::string(bad) + " is invalid; expected 0 or 1"));
  }
}

TEST(SystemConfig, ImplementationsRingAndOneRing) {
  const SystemConfig c = parse_with("\"all-reduce-implementation\": [\"ring\", \"oneRing\"], "
                                    "\"all-gather-implementation\": [\"oneRing\"],"
                                    "\"reduce-scatter-implementation\": [\"ring\", \"ring\", \"ring\"], "
                                    "\"all-to-all-implementation\": [\"ring\"]");
  const auto& ar = impl(c, CollectiveKind::kAllReduce);
  ASSERT_EQ(ar.size(), 2u);
  EXPECT_EQ(ar[0].kind, AlgorithmKind::kRing);
  EXPECT_FALSE(ar[0].one_flat);
  EXPECT_EQ(ar[1].kind, AlgorithmKind::kRing);
  EXPECT_TRUE(ar[1].one_flat);
  ASSERT_EQ(impl(c, CollectiveKind::kAllGather).size(), 1u);
  EXPECT_TRUE(impl(c, CollectiveKind::kAllGather)[0].one_flat);
  ASSERT_EQ(impl(c, CollectiveKind::kReduceScatter).size(), 3u);
  EXPECT_FALSE(impl(c, CollectiveKind::kReduceScatter)[2].one_flat);
  ASSERT_EQ(impl(c, CollectiveKind::kAllToAll).size(), 1u);
  EXPECT_FALSE(impl(c, CollectiveKind::kAllToAll)[0].one_flat);
}

TEST(SystemConfig, EachImplementationKeyFillsItsOwnCollective) {
  const std::pair<const char*, CollectiveKind> keys[] = {{"all-reduce-implementation", CollectiveKind::kAllReduce},
                                                         {"all-gather-implementation", CollectiveKind::kAllGather},
                                                         {"reduce-scatter-implementation",
                                                          CollectiveKind::kReduceScatter},
                                                         {"all-to-all-implementation", CollectiveKind::kAllToAll}};
  for (const auto& [key, kind] : keys) {
    SCOPED_TRACE(key);
    const SystemConfig c = parse_with(std::string("\"") + key + "\": [\"oneRing\", \"ring\"]");
    for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
      EXPECT_EQ(c.system.implementations[k].size(), k == static_cast<std::size_t>(kind) ? 2u : 0u) << k;
    }
  }
}

TEST(SystemConfig, UnknownAlgorithmIsUnknown) {
  const std::string msg = error_with("\"all-reduce-implementation\": [\"ring\", \"foo\"]");
  EXPECT_THAT(msg, HasSubstr("sys.json: key \"all-reduce-implementation\"[1]: algorithm \"foo\" is unknown"));
  EXPECT_THAT(msg, HasSubstr("expected ring or oneRing"));
  // Tokens are case-sensitive.
  EXPECT_THAT(error_with("\"all-to-all-implementation\": [\"Ring\"]"), HasSubstr("key "
                                                                                 "\"all-to-all-implementation\"[0]: "
                                                                                 "algorithm \"Ring\" is unknown"));
}

// Every token of the reference parses: the algorithm, whether it is a one* (flat) form, and the
// window of direct<W> (0 = all peers at once).
TEST(SystemConfig, EveryAlgorithmTokenParses) {
  using system::AlgorithmKind;
  struct Token {
    const char* text;
    AlgorithmKind kind;
    bool flat;
    std::uint32_t window;
  };
  for (const Token& t : {Token{"ring", AlgorithmKind::kRing, false, 0},
                         {"oneRing", AlgorithmKind::kRing, true, 0},
                         {"direct", AlgorithmKind::kDirect, false, 0},
                         {"direct4", AlgorithmKind::kDirect, false, 4},
                         {"oneDirect", AlgorithmKind::kDirect, true, 0},
                         {"oneDirect8", AlgorithmKind::kDirect, true, 8},
                         {"halvingDoubling", AlgorithmKind::kHalvingDoubling, false, 0},
                         {"oneHalvingDoubling", AlgorithmKind::kHalvingDoubling, true, 0},
                         {"doubleBinaryTree", AlgorithmKind::kDoubleBinaryTree, false, 0}}) {
    SCOPED_TRACE(t.text);
    const SystemConfig c = parse_with("\"all-gather-implementation\": [\"" + std::string(t.text) + "\"]");
    const auto& list = impl(c, CollectiveKind::kAllGather);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].kind, t.kind);
    EXPECT_EQ(list[0].one_flat, t.flat);
    EXPECT_EQ(list[0].window, t.window);
  }
}

TEST(SystemConfig, ImplementationMustBeANonEmptyListOfNames) {
  EXPECT_THAT(error_with("\"all-reduce-implementation\": \"ring\""), HasSubstr("key \"all-reduce-implementation\": "
                                                                               "value \"ring\" is invalid; expected a "
                                                                               "non-empty list of algorithm names"));
  EXPECT_THAT(error_with("\"all-reduce-implementation\": []"), HasSubstr("key \"all-reduce-implementation\": value [] "
                                                                         "is invalid"));
  EXPECT_THAT(error_with("\"reduce-scatter-implementation\": [\"ring\", 1]"), HasSubstr("key "
                                                                                        "\"reduce-scatter-"
                                                                                        "implementation\"[1]: value 1 "
                                                                                        "is invalid; expected an "
                                                                                        "algorithm name"));
}

TEST(SystemConfig, ReplayOnly) {
  EXPECT_FALSE(parse_with("\"replay-only\": 0").replay_only);
  EXPECT_FALSE(parse_with("\"replay-only\": false").replay_only);
  EXPECT_TRUE(parse_with("\"replay-only\": 1").replay_only);
  EXPECT_TRUE(parse_with("\"replay-only\": true").replay_only);
  EXPECT_THAT(error_with("\"replay-only\": 3"), HasSubstr("key \"replay-only\": value 3 is invalid; expected 0 or 1"));
}

TEST(SystemConfig, SharedBusIsNotSupportedYet) {
  EXPECT_NO_THROW(parse_with("\"model-shared-bus\": 0"));
  EXPECT_THAT(error_with("\"model-shared-bus\": 1"), HasSubstr("sys.json: key \"model-shared-bus\": the shared-bus "
                                                               "model is not supported yet"));
}

TEST(SystemConfig, CompatibilityKeysAreAcceptedSilently) {
  const SystemConfig c = parse_with("\"trace-enabled\": 1, \"track-local-mem\": 0, \"local-mem-trace-filename\": "
                                    "\"x\", \"boost-mode\": 1,"
                                    "\"intra-dimension-scheduling\": \"FIFO\", \"inter-dimension-scheduling\": "
                                    "\"themis\","
                                    "\"local-reduction-delay\": 1, \"L\": 100, \"o\": 10, \"g\": 10, \"G\": 0.01");
  EXPECT_THAT(c.warnings, IsEmpty());
}

TEST(SystemConfig, UnknownKeysWarn) {
  const SystemConfig c = parse_with("\"endpoint_delay\": 5, \"topology-name\": \"Hierarchical\"");
  EXPECT_EQ(c.system.endpoint_delay_ns, 10u);  // the misspelt key did not apply
  ASSERT_EQ(c.warnings.size(), 2u);
  // nlohmann::json keeps keys sorted.
  EXPECT_EQ(c.warnings[0], "sys.json: unknown key \"endpoint_delay\" ignored");
  EXPECT_EQ(c.warnings[1], "sys.json: unknown key \"topology-name\" ignored");
}

// Each *-implementation-custom key takes one path prefix; the per-node variant is refused.
TEST(SystemConfig, CustomImplementations) {
  const char* keys[] = {"all-reduce-implementation-custom", "all-gather-implementation-custom",
                        "reduce-scatter-implementation-custom", "all-to-all-implementation-custom"};
  for (std::size_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(keys[k]);
    const SystemConfig c = parse_with(std::string("\"") + keys[k] + "\": [\"algo/prefix\"]");
    EXPECT_EQ(c.system.custom_prefixes[k], "algo/prefix");
    EXPECT_THAT(error_with(std::string("\"") + keys[k] + "\": [\"a\", \"b\"]"),
                HasSubstr(std::string("key \"") + keys[k] +
                          "\": value [\"a\",\"b\"] is invalid; expected a list of exactly one path prefix"));
  }
  EXPECT_THAT(error_with("\"per-node-custom-implementation\": \"map.yml\""), HasSubstr("sys.json: key "
                                                                                       "\"per-node-custom-"
                                                                                       "implementation\": per-node "
                                                                                       "custom implementations are not "
                                                                                       "supported yet"));
}

TEST(SystemConfig, InvalidJsonAndNonObjects) {
  std::string msg = error_of([] { parse("{\"preferred-dataset-splits\": 4,}"); });
  EXPECT_THAT(msg, HasSubstr("sys.json: invalid JSON"));
  msg = error_of([] { parse(""); });
  EXPECT_THAT(msg, HasSubstr("sys.json: invalid JSON"));
  for (const char* text : {"[1, 2]", "4", "\"LIFO\"", "null"}) {
    SCOPED_TRACE(text);
    EXPECT_THAT(error_of([&] { parse(text); }), HasSubstr("sys.json: expected a JSON object of system keys"));
  }
}

TEST(SystemConfig, DescribeSystemKeysListsEveryKey) {
  const std::string table = describe_system_keys();
  for (const char* key : {"scheduling-policy",
                          "collective-optimization",
                          "endpoint-delay",
                          "active-chunks-per-dimension",
                          "preferred-dataset-splits",
                          "local-mem-bw",
                          "peak-perf",
                          "roofline-enabled",
                          "replay-only",
                          "all-reduce-implementation",
                          "all-gather-implementation",
                          "reduce-scatter-implementation",
                          "all-to-all-implementation",
                          "model-shared-bus",
                          "trace-enabled",
                          "track-local-mem",
                          "local-mem-trace-filename",
                          "boost-mode",
                          "intra-dimension-scheduling",
                          "inter-dimension-scheduling",
                          "local-reduction-delay"}) {
    EXPECT_THAT(table, HasSubstr(std::string("  ") + key + " ")) << key;
  }
  // The one-letter LogGP keys, each at the start of an entry.
  for (const char* key : {"\n  L ", "\n  o ", "\n  g ", "\n  G "}) EXPECT_THAT(table, HasSubstr(key));
  // Defaults are shown with each key.
  EXPECT_THAT(table, HasSubstr("default required"));
  EXPECT_THAT(table, HasSubstr("default LIFO"));
}

TEST(SystemConfigFiles, UnreadablePathIsNamed) {
  const std::string path = (test::temp_dir("system_missing") / "none.json").string();
  const std::string msg = error_of([&] { load_system(path, {}); });
  EXPECT_THAT(msg, HasSubstr(path));
  EXPECT_THAT(msg, HasSubstr("cannot open the system configuration"));
}

TEST(SystemConfigFiles, DirectoryIsAnErrorNamingThePath) {
  // A directory opens as a stream but fails to read (EISDIR): expect chakrasim::Error.
  const std::string path = test::temp_dir("system_dir").string();
  const std::string msg = error_of([&] { load_system(path, {}); });
  EXPECT_THAT(msg, HasSubstr(path + ": is a directory"));
  EXPECT_THAT(msg, HasSubstr("system configuration"));
}

TEST(SystemConfigFiles, LoadNamesTheFileInErrorsAndWarnings) {
  const std::string path = (test::temp_dir("system_file") / "s.json").string();
  std::ofstream(path) << "{\"preferred-dataset-splits\": 2, \"bogus\": 1}";
  const SystemConfig c = load_system(path, {});
  EXPECT_EQ(c.system.preferred_dataset_splits, 2u);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_THAT(c.warnings[0], HasSubstr(path + ": no \"local-mem-bw\""));
  EXPECT_THAT(c.warnings[1], HasSubstr(path + ": unknown key \"bogus\" ignored"));
  std::ofstream(path) << "{\"preferred-dataset-splits\": 0}";
  EXPECT_THAT(error_of([&] { load_system(path, {}); }), HasSubstr(path + ": key \"preferred-dataset-splits\""));
}

TEST(SystemConfigFiles, ReferenceConfigsParse) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto configs = ref / "configs";

  const SystemConfig hgx = load_system((configs / "HGX-H100-validated.json").string(), {});
  EXPECT_EQ(hgx.system.scheduling_policy, SchedulingPolicy::kLifo);
  EXPECT_EQ(hgx.system.endpoint_delay_ns, 10u);
  EXPECT_EQ(hgx.system.active_chunks_per_dimension, 2u);
  EXPECT_EQ(hgx.system.preferred_dataset_splits, 4u);
  EXPECT_EQ(hgx.system.collective_optimization, CollectiveOptimization::kLocalBwAware);
  EXPECT_EQ(hgx.system.local_mem_bw_gb_per_s, 3350.0);
  for (const auto& list : hgx.system.implementations) {
    ASSERT_EQ(list.size(), 1u);
    EXPECT_FALSE(list[0].one_flat);
  }
  EXPECT_THAT(hgx.warnings, IsEmpty());

  const SystemConfig ring = load_system((configs / "Ring_4chunks.json").string(), {});
  EXPECT_EQ(ring.system.active_chunks_per_dimension, 1u);
  EXPECT_EQ(ring.system.preferred_dataset_splits, 4u);
  EXPECT_EQ(ring.system.local_mem_bw_gb_per_s, 1600.0);
  EXPECT_EQ(ring.compute.local_mem_bw_gb_per_s, 1600.0);
  EXPECT_EQ(ring.compute.peak_perf_tflops, 900.0);
  EXPECT_EQ(ring.compute.model, "replay");
  EXPECT_THAT(ring.warnings, IsEmpty());

  const SystemConfig custom = load_system((configs / "custom_collective.json").string(), {});
  EXPECT_EQ(custom.system.custom_prefixes[0], "examples/system/custom_collectives/custom_ring_allreduce_8npus_1MB/"
                                              "custom_allreduce");
  EXPECT_EQ(custom.system.scheduling_policy, SchedulingPolicy::kFifo);

  // Every other system JSON there parses (no_memory_expansion.json is a remote-memory config).
  for (const auto& entry : std::filesystem::directory_iterator(configs)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json" || name == "no_memory_expansion.json") continue;
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(load_system(entry.path().string(), {}));
  }
}

}  // namespace
}  // namespace chakrasim::config

namespace chakrasim::config {
namespace {

// Found by fuzzing: a number too large for a double is a JSON error, not an abort.
TEST(SystemConfig, NumberOverflowIsAnError) {
  const std::string msg = error_of([] { parse("{\"preferred-dataset-splits\": 1e999999}"); });
  EXPECT_THAT(msg, HasSubstr("sys.json: invalid JSON"));
}

}  // namespace
}  // namespace chakrasim::config
