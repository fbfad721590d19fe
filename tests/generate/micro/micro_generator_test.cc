// `chakra generate micro`: the reference generator's 14 families byte for byte (2 NPUs), ASTRA-sim's
// single-collective microbenchmarks byte for byte (4 collectives x 4, 8, 16 NPUs), the id order
// across families, the runnable send/receive ring, and that the runnable families simulate.
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "generate/micro/micro_generator.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> names_of(const std::vector<tools::TraceFamily>& families) {
  std::vector<std::string> out;
  for (const auto& f : families) out.push_back(f.name);
  return out;
}

const tools::TraceFamily& family_named(const std::vector<tools::TraceFamily>& families, const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no family " + name);
}

TEST(MicroGenerator, ReferenceGoldensAreByteIdentical) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto golden = ref / "golden" / "generator";
  const auto dir = temp_dir("micro_golden");
  tools::MicroOptions options;
  options.npus = 2;
  const auto families = tools::reference_micro_families(options);
  EXPECT_EQ(tools::write_families(families, dir.string()), 30u);
  std::size_t compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(golden)) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(file_bytes(dir / name), file_bytes(entry.path())) << name;
    ++compared;
  }
  EXPECT_EQ(compared, 28u);  // 14 families x 2 ranks; send_recv_ring is ours
}

// One counter over every file: family by family, rank by rank (ids read from the goldens:
// metadata 0-1, ..., one_comm_recv_node 30-31 for 2 NPUs); here 3 NPUs.
TEST(MicroGenerator, FamiliesInTheReferenceOrderWithOneIdCounter) {
  tools::MicroOptions options;
  options.npus = 3;
  const auto families = tools::reference_micro_families(options);
  EXPECT_THAT(names_of(families),
              ElementsAre("one_metadata_node_all_types", "one_remote_mem_load_node", "one_remote_mem_store_node",
                          "one_comp_node", "two_comp_nodes_independent", "two_comp_nodes_dependent", "ALL_REDUCE",
                          "ALL_TO_ALL", "ALL_GATHER", "REDUCE_SCATTER", "BROADCAST", "BARRIER", "one_comm_send_node",
                          "one_comm_recv_node", "send_recv_ring"));
  std::uint64_t expected = 0;
  for (const auto& f : families) {
    ASSERT_EQ(f.ranks.size(), 3u) << f.name;
    for (const auto& rank : f.ranks) {
      for (const auto& node : rank.nodes) EXPECT_EQ(node.id(), expected++) << f.name;
    }
  }
  // 3 x (4 one-node families + 2 x 2 + 6 collectives + 2 p2p) nodes, then the ring's 3 x 2.
  EXPECT_EQ(expected, 3u * 16 + 6);
  const auto& dependent = family_named(families, "two_comp_nodes_dependent").ranks[2];
  EXPECT_THAT(dependent.nodes[1].data_deps(), ElementsAre(dependent.nodes[0].id()));
}

TEST(MicroGenerator, OptionsReachTheNodes) {
  tools::MicroOptions options;
  options.npus = 1;
  options.runtime_micros = 7;
  options.tensor_bytes = 4096;
  options.comm_bytes = 1 << 20;
  options.version = "0.0.4";
  const auto families = tools::reference_micro_families(options);
  EXPECT_EQ(families.size(), 14u);  // no ring on one NPU
  const auto& comp = family_named(families, "one_comp_node").ranks[0];
  EXPECT_EQ(comp.metadata.version(), "0.0.4");
  EXPECT_EQ(comp.nodes[0].duration_micros(), 7u);
  EXPECT_EQ(chakra::attr_uint(family_named(families, "one_remote_mem_store_node").ranks[0].nodes[0], "tensor_size"),
            4096u);
  EXPECT_EQ(chakra::attr_uint(family_named(families, "one_comm_send_node").ranks[0].nodes[0], "tensor_size"), 4096u);
  EXPECT_EQ(chakra::attr_int(family_named(families, "ALL_GATHER").ranks[0].nodes[0], "comm_size"), 1 << 20);
  EXPECT_EQ(chakra::attr_int(family_named(families, "BARRIER").ranks[0].nodes[0], "comm_size"), 0);
}

// Rank r sends to r+1 and receives from r-1 (mod N), with every attribute the simulator needs.
TEST(MicroGenerator, SendRecvRing) {
  tools::MicroOptions options;
  options.npus = 4;
  options.comm_bytes = 8192;
  const auto families = tools::reference_micro_families(options);
  const auto& ring = family_named(families, "send_recv_ring");
  ASSERT_EQ(ring.ranks.size(), 4u);
  const auto& rank0 = ring.ranks[0].nodes;
  ASSERT_EQ(rank0.size(), 2u);
  EXPECT_EQ(rank0[0].type(), ChakraProtoMsg::COMM_SEND_NODE);
  EXPECT_EQ(chakra::attr_int(rank0[0], "comm_src"), 0);
  EXPECT_EQ(chakra::attr_int(rank0[0], "comm_dst"), 1);
  EXPECT_EQ(chakra::attr_int(rank0[0], "comm_tag"), 0);
  EXPECT_EQ(chakra::attr_int(rank0[0], "comm_size"), 8192);
  EXPECT_EQ(rank0[1].type(), ChakraProtoMsg::COMM_RECV_NODE);
  EXPECT_EQ(chakra::attr_int(rank0[1], "comm_src"), 3);
  EXPECT_EQ(chakra::attr_int(rank0[1], "comm_dst"), 0);
  EXPECT_EQ(chakra::attr_int(rank0[1], "comm_size"), 8192);
  EXPECT_EQ(rank0[0].data_deps_size() + rank0[1].data_deps_size(), 0);
}

TEST(MicroGenerator, AstraSimMicrobenchmarksAreByteIdentical) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  for (const std::string& collective : tools::benchmark_collectives()) {
    for (std::size_t npus : {4, 8, 16}) {
      const auto dir = ref / "traces" / "microbenchmarks" / collective / (std::to_string(npus) + "npus_1MB");
      const tools::TraceFamily f = tools::collective_benchmark({collective, npus, 1, "0.0.4"});
      ASSERT_EQ(f.ranks.size(), npus);
      for (std::size_t r = 0; r < npus; ++r) {
        EXPECT_EQ(chakra::serialize_trace(f.ranks[r]), file_bytes(dir / (collective + "." + std::to_string(r) + ".et")))
            << collective << " " << npus << " rank " << r;
      }
    }
  }
}

TEST(MicroGenerator, CollectiveBenchmarkNamesAndSizes) {
  const tools::TraceFamily f = tools::collective_benchmark({"reduce_scatter", 2, 3, "0.0.4"});
  EXPECT_EQ(f.name, "reduce_scatter");
  const auto& node = f.ranks[1].nodes[0];
  EXPECT_EQ(node.id(), 1u);
  EXPECT_EQ(node.name(), "reduce_scatter_2npus_3MB");
  EXPECT_EQ(chakra::attr_int(node, "comm_type"), 7);
  EXPECT_EQ(chakra::attr_int(node, "comm_size"), 3 << 20);
}

// One collective, whatever the spelling: all_reduce, all-reduce, allreduce and ALL_REDUCE write
// the same family; --size's bytes name the node by MiB when whole, else by bytes.
TEST(MicroGenerator, CollectiveSpellingsAndSizes) {
  for (const char* spelling : {"all_reduce", "all-reduce", "allreduce", "ALL_REDUCE", "All Reduce"}) {
    const tools::TraceFamily f = tools::collective_benchmark({spelling, 2, 1, "0.0.4"});
    EXPECT_EQ(f.name, "all_reduce") << spelling;
    EXPECT_EQ(f.ranks[0].nodes[0].name(), "all_reduce_2npus_1MB") << spelling;
  }
  tools::CollectiveBenchOptions o{"broadcast", 2, 1, "0.0.4"};
  o.size_bytes = 1000;
  const tools::TraceFamily b = tools::collective_benchmark(o);
  EXPECT_EQ(b.name, "broadcast");
  EXPECT_EQ(b.ranks[0].nodes[0].name(), "broadcast_2npus_1000B");
  EXPECT_EQ(chakra::comm_type_from_name("reduce-scatter-block"), chakra::CommType::kReduceScatterBlock);
  EXPECT_EQ(chakra::comm_type_from_name("alltoall"), chakra::CommType::kAllToAll);
  EXPECT_FALSE(chakra::comm_type_from_name("all_reducer").has_value());
}

TEST(MicroGenerator, Errors) {
  tools::MicroOptions none;
  EXPECT_THAT(error_of([&] { tools::reference_micro_families(none); }), HasSubstr("--npus is 0; expected at least 1"));
  tools::MicroOptions huge;
  huge.npus = 2;
  huge.comm_bytes = std::uint64_t{1} << 63;
  EXPECT_THAT(error_of([&] { tools::reference_micro_families(huge); }), HasSubstr("--comm-size is 9223372036854775808; "
                                                                                  "expected at most "
                                                                                  "9223372036854775807"));
  EXPECT_THAT(error_of([] {
                tools::collective_benchmark({"allreduction", 4, 1, "0.0.4"});
              }),
              HasSubstr("--collective is \"allreduction\"; expected a collective such as all_reduce, all_gather"));
  EXPECT_THAT(error_of([] {
                tools::collective_benchmark({"all_reduce", 4, std::uint64_t{1} << 43, "0.0.4"});
              }),
              HasSubstr("--coll-size-mb is 8796093022208; expected at most 8796093022207"));
  const auto file = temp_dir("micro_errors") / "a_file";
  std::ofstream(file) << "x";
  EXPECT_THAT(error_of([&] { tools::write_families({}, (file / "sub").string()); }), HasSubstr("cannot create the "
                                                                                               "output directory"));
}

sim::Inputs inputs_for(const tools::TraceFamily& f) {
  sim::Inputs in;
  const auto npus = static_cast<std::uint32_t>(f.ranks.size());
  in.network = network_of({{DimensionKind::kRing, npus, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.memory.kind = memory::RemoteMemoryKind::kPerNpu;
  in.memory.latency_ns = 100;
  in.memory.bandwidth_gb_per_s = 2;
  for (std::size_t r = 0; r < f.ranks.size(); ++r) {
    in.graphs.push_back(std::make_shared<const chakra::Graph>(chakra::Graph::build(f.ranks[r], f.name)));
  }
  return in;
}

// Every family but BARRIER (a collective the simulator, like ASTRA-sim, does not support) and
// the reference's tensor_size-only send and receive runs to the end. Finish times: compute
// 5 µs per node on one GPU slot; memory 100 ns + 1024 B / 2 GB/s; broadcast replayed for its
// duration of 0 (1 ns); metadata takes no time.
TEST(MicroGenerator, RunnableFamiliesSimulate) {
  tools::MicroOptions options;
  options.npus = 4;
  const std::map<std::string, Tick> exact = {{"one_metadata_node_all_types", 0},
                                             {"one_remote_mem_load_node", 612},
                                             {"one_remote_mem_store_node", 612},
                                             {"one_comp_node", 5000},
                                             {"two_comp_nodes_independent", 10000},
                                             {"two_comp_nodes_dependent", 10000},
                                             {"BROADCAST", 1}};
  std::set<std::string> ran;
  for (const auto& f : tools::reference_micro_families(options)) {
    if (f.name == "one_comm_send_node" || f.name == "one_comm_recv_node") {
      EXPECT_THROW(sim::simulate(inputs_for(f)), Error) << f.name;
      continue;
    }
    const sim::Result r = run(inputs_for(f));
    ASSERT_TRUE(r.all_finished()) << f.name;
    if (auto it = exact.find(f.name); it != exact.end()) {
      EXPECT_EQ(r.max_finish_ns(), it->second) << f.name;
    } else {
      EXPECT_GT(r.max_finish_ns(), 0u) << f.name;  // the collectives and the ring move data
    }
    ran.insert(f.name);
  }
  EXPECT_EQ(ran.size(), 13u);
  EXPECT_TRUE(ran.contains("send_recv_ring"));
}

TEST(MicroGenerator, SendRecvErrorsSayWhatIsMissing) {
  tools::MicroOptions options;
  options.npus = 2;
  const auto families = tools::reference_micro_families(options);
  EXPECT_THAT(error_of([&] { sim::simulate(inputs_for(family_named(families, "one_comm_send_node"))); }),
              HasSubstr("missing the attribute \"comm_dst\""));
}

// The command line end to end: generate, then run the ring and a collective with the binary.
TEST(MicroGenerator, CommandLineGeneratesRunnableTraces) {
  const auto dir = temp_dir("micro_cli");
  CommandResult r = run_binary({"chakra", "generate", "micro", "--npus", "4", "--out", (dir / "m").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("wrote 60 files"));
  EXPECT_TRUE(std::filesystem::exists(dir / "m" / "one_metadata_node_all_types.3.et"));
  write_bytes(dir / "system.json",
              R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
      "preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
      "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
      "collective-optimization": "localBWAware", "local-mem-bw": 50, "boost-mode": 0})");
  write_bytes(dir / "network.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
  for (const char* family : {"send_recv_ring", "ALL_REDUCE"}) {
    r = run_binary({"run", "--workload", (dir / "m" / family).string(), "--system", (dir / "system.json").string(),
                    "--network", (dir / "network.yml").string(), "-q"});
    EXPECT_EQ(r.exit_code, 0) << family << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("sys[3] finished")) << family;
  }
  r = run_binary({"chakra", "generate", "micro", "--npus", "4", "--out", (dir / "ar").string(), "--collective",
                  "all-to-all", "--size", "2MiB", "--et-version", "9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const chakra::Trace t = chakra::read_trace((dir / "ar" / "all_to_all.2.et").string());
  EXPECT_EQ(t.metadata.version(), "9");
  EXPECT_EQ(t.nodes[0].name(), "all_to_all_4npus_2MB");
}

TEST(MicroGenerator, CommandLineHelpAndErrors) {
  CommandResult r = run_binary({"chakra", "generate", "micro", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("Examples:\n  chakrasim generate micro --npus 8 --out micro"));
  r = run_binary({"chakra", "generate", "micro", "--npus", "0", "--out", temp_dir("micro_cli_err").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--npus is 0"));
  r = run_binary({"chakra", "generate", "micro", "--npus", "2", "--out", temp_dir("micro_cli_err2").string(),
                  "--coll-size-mb", "2"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--coll-size-mb needs --collective"));
  r = run_binary({"chakra", "generate", "micro", "--npus", "2", "--out", temp_dir("micro_cli_err3").string(),
                  "--collective", "all_reduce", "--comm-size", "8"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--comm-size applies to the families, not to --collective"));
  r = run_binary({"chakra", "generate", "micro", "--npus", "2", "--out", temp_dir("micro_cli_err4").string(),
                  "--collective", "all_reduce", "--size", "64parsec"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: --size: \"64parsec\" is not a size; expected bytes, or a number with B"));
}

}  // namespace
}  // namespace chakrasim::test
