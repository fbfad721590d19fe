// The ASTRA-sim 1.0 text kinds the Chakra converter rejects (our extension, text_hybrid.cc):
// HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD and HYBRID_CUSTOMIZED. Exact graphs, pg_names
// and communicator groups on inputs written here; the three real ASTRA-sim 1.0 workloads
// converted and run to the end through the binary; an error for each kind of bad header.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "support/test_support.h"
#include "tools/text/text_converter.h"

namespace chakrasim::test {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

struct Converted {
  std::vector<chakra::Trace> traces;
  std::string groups;
};

Converted convert(const std::string& text, std::int64_t npus, std::int64_t passes = 1, std::int64_t group = 0) {
  Converted c;
  c.groups = tools::convert_text_each(text, "w.txt", {npus, passes, group, {}},
                                      [&](std::size_t, const chakra::Trace& t) { c.traces.push_back(t); });
  return c;
}

std::string error_for(const std::string& text, std::int64_t npus, std::int64_t group = 0) {
  return error_of([&] { convert(text, npus, 1, group); });
}

// Each node as "id name [deps] 10us" or "id name [deps] type=T size=S pg=G", ids counted from
// the rank file's first node, so that every rank reads the same but for its pg_names.
std::vector<std::string> graph(const chakra::Trace& t) {
  const std::uint64_t first = t.nodes.front().id();
  std::vector<std::string> out;
  for (const chakra::Node& n : t.nodes) {
    std::string deps;
    for (const std::uint64_t d : n.data_deps()) {
      if (!deps.empty()) deps += ",";
      deps += std::to_string(d - first);
    }
    std::string line = fmt::format("{} {} [{}]", n.id() - first, n.name(), deps);
    if (n.type() == ChakraProtoMsg::COMP_NODE) {
      line += fmt::format(" {}us", n.duration_micros());
    } else {
      line += fmt::format(" type={} size={}", chakra::attr_int(n, "comm_type").value_or(-1),
                          chakra::attr_int(n, "comm_size").value_or(-1));
      if (const auto pg = chakra::attr_string(n, "pg_name")) line += " pg=" + *pg;
    }
    out.push_back(line);
  }
  return out;
}

// The pg_names of a rank's collectives, in node order ("-" for none).
std::vector<std::string> pg_names(const chakra::Trace& t) {
  std::vector<std::string> out;
  for (const chakra::Node& n : t.nodes) {
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) out.push_back(chakra::attr_string(n, "pg_name").value_or("-"));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// HYBRID_TRANSFORMER

constexpr const char* kTransformer = "HYBRID_TRANSFORMER model_parallel_NPU_group: 4\n"
                                     "2\n"
                                     "E -1 10 ALLGATHER 100 11 ALLREDUCE 110 12 ALLREDUCE 120 1\n"
                                     "L -1 20 ALLREDUCE 200 21 NONE 0 22 ALLREDUCE 220 1\n";

// 8 NPUs in model-parallel groups of 4: forward comms and input-gradient comms (the first
// layer's too) over ranks 0-3 (group 1) or 4-7 (group 2), weight-gradient comms over the ranks
// with the same position in theirs (groups 3-6). Pass 2's FWD E waits on pass 1's WGCOMM E and
// IGCOMM E; FWD L on pass 1's WGCOMM L and this pass's FWDCOMM E.
TEST(TextHybrid, TransformerGraphAndGroups) {
  const Converted c = convert(kTransformer, 8, 2);
  ASSERT_EQ(c.traces.size(), 8u);
  const std::vector<std::string> pass = {
      "0 COMP_NODE_E_FWD [] 10us",
      "1 COMM_COLL_NODE_E_FWD_ALLGATHER [0] type=2 size=100 pg=1",
      "2 COMP_NODE_L_FWD [1] 20us",
      "3 COMM_COLL_NODE_L_FWD_ALLREDUCE [2] type=0 size=200 pg=1",
      "4 COMP_NODE_L_BWD_IG [3] 21us",
      "5 COMP_NODE_L_BWD_WG [4] 22us",
      "6 COMM_COLL_NODE_L_BWD_WG_ALLREDUCE [5] type=0 size=220 pg=3",
      "7 COMP_NODE_E_BWD_IG [5] 11us",
      "8 COMM_COLL_NODE_E_BWD_IG_ALLREDUCE [7] type=0 size=110 pg=1",
      "9 COMP_NODE_E_BWD_WG [7] 12us",
      "10 COMM_COLL_NODE_E_BWD_WG_ALLREDUCE [9] type=0 size=120 pg=3",
      "11 COMP_NODE_E_FWD [10,8] 10us",
      "12 COMM_COLL_NODE_E_FWD_ALLGATHER [11] type=2 size=100 pg=1",
      "13 COMP_NODE_L_FWD [6,12] 20us",
  };
  const std::vector<std::string> rank0 = graph(c.traces[0]);
  ASSERT_EQ(rank0.size(), 22u);
  EXPECT_THAT(std::vector<std::string>(rank0.begin(), rank0.begin() + 14), ElementsAreArray(pass));
  EXPECT_EQ(rank0[15], "15 COMP_NODE_L_BWD_IG [14] 21us");
  EXPECT_EQ(c.traces[1].nodes.front().id(), 22u);  // ids run on across rank files
  const std::vector<std::vector<std::string>> pg_by_rank = {{"1", "1", "3", "1", "3"}, {"1", "1", "4", "1", "4"},
                                                            {"1", "1", "5", "1", "5"}, {"1", "1", "6", "1", "6"},
                                                            {"2", "2", "3", "2", "3"}, {"2", "2", "4", "2", "4"},
                                                            {"2", "2", "5", "2", "5"}, {"2", "2", "6", "2", "6"}};
  for (std::size_t r = 0; r < 8; ++r) {
    std::vector<std::string> first_pass = pg_names(c.traces[r]);
    first_pass.resize(5);
    EXPECT_EQ(first_pass, pg_by_rank[r]) << "rank " << r;
  }
  EXPECT_EQ(c.groups, "{\n  \"1\": [0, 1, 2, 3],\n  \"2\": [4, 5, 6, 7],\n  \"3\": [0, 4],\n  \"4\": [1, 5],\n  \"5\": "
                      "[2, 6],\n"
                      "  \"6\": [3, 7]\n}\n");
}

// A model-parallel group of every NPU is the default communicator (no pg_name) and leaves
// one-NPU data-parallel groups, whose collectives are not written; a group of one NPU the reverse.
TEST(TextHybrid, TransformerGroupsOfAllOrOneNpu) {
  const Converted all = convert(kTransformer, 4);
  EXPECT_THAT(graph(all.traces[0]),
              ElementsAre("0 COMP_NODE_E_FWD [] 10us", "1 COMM_COLL_NODE_E_FWD_ALLGATHER [0] type=2 size=100",
                          "2 COMP_NODE_L_FWD [1] 20us", "3 COMM_COLL_NODE_L_FWD_ALLREDUCE [2] type=0 size=200",
                          "4 COMP_NODE_L_BWD_IG [3] 21us", "5 COMP_NODE_L_BWD_WG [4] 22us",
                          "6 COMP_NODE_E_BWD_IG [5] 11us", "7 COMM_COLL_NODE_E_BWD_IG_ALLREDUCE [6] type=0 size=110",
                          "8 COMP_NODE_E_BWD_WG [6] 12us"));
  EXPECT_EQ(all.groups, "{}\n");
  const Converted one = convert("HYBRID_TRANSFORMER model_parallel_NPU_group: 1\n2\nE -1 10 ALLGATHER 100 11 "
                                "ALLREDUCE 110 12 ALLREDUCE 120 1\nL -1 20 ALLREDUCE 200 21 NONE 0 22 ALLREDUCE 220 "
                                "1\n",
                                4);
  EXPECT_THAT(graph(one.traces[3]),
              ElementsAre("0 COMP_NODE_E_FWD [] 10us", "1 COMP_NODE_L_FWD [0] 20us", "2 COMP_NODE_L_BWD_IG [1] 21us",
                          "3 COMP_NODE_L_BWD_WG [2] 22us", "4 COMM_COLL_NODE_L_BWD_WG_ALLREDUCE [3] type=0 size=220",
                          "5 COMP_NODE_E_BWD_IG [3] 11us", "6 COMP_NODE_E_BWD_WG [5] 12us",
                          "7 COMM_COLL_NODE_E_BWD_WG_ALLREDUCE [6] type=0 size=120"));
  EXPECT_EQ(one.groups, "{}\n");
}

// --model-parallel-group stands in for line 1's setting, and may repeat it.
TEST(TextHybrid, ModelParallelGroupFromTheCommandLine) {
  const std::string bare = "HYBRID_TRANSFORMER\n2\nE -1 10 ALLGATHER 100 11 ALLREDUCE 110 12 ALLREDUCE 120 1\n"
                           "L -1 20 ALLREDUCE 200 21 NONE 0 22 ALLREDUCE 220 1\n";
  const Converted flag = convert(bare, 8, 2, 4), header = convert(kTransformer, 8, 2),
                  both = convert(kTransformer, 8, 2, 4);
  EXPECT_EQ(flag.groups, header.groups);
  for (std::size_t r = 0; r < 8; ++r) {
    EXPECT_EQ(graph(flag.traces[r]), graph(header.traces[r]));
    EXPECT_EQ(graph(both.traces[r]), graph(header.traces[r]));
  }
}

// ---------------------------------------------------------------------------------------------
// HYBRID_TRANSFORMER_FWD_IN_BCKWD

// Checkpoint B (layer 1), D (layer 3) initiates: before IG D, the forward of B and C runs again
// (B's with its forward comm), after what IG D would have waited on (the last forward).
TEST(TextHybrid, FwdInBckwdRecomputesFromTheCheckpoint) {
  const Converted c = convert("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 1 1 "
                              "checkpoint_initiates: 1 3\n4\n"
                              "A -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 120 1\n"
                              "B -1 20 ALLREDUCE 200 21 NONE 0 22 NONE 0 1\n"
                              "C -1 30 NONE 0 31 ALLREDUCE 310 32 ALLREDUCE 320 1\n"
                              "D -1 40 NONE 0 41 NONE 0 42 NONE 0 1\n",
                              4);
  EXPECT_THAT(graph(c.traces[3]),
              ElementsAre("0 COMP_NODE_A_FWD [] 10us", "1 COMP_NODE_B_FWD [0] 20us",
                          "2 COMM_COLL_NODE_B_FWD_ALLREDUCE [1] type=0 size=200 pg=2", "3 COMP_NODE_C_FWD [2] 30us",
                          "4 COMP_NODE_D_FWD [3] 40us", "5 COMP_NODE_B_FWD_RECOMPUTE [4] 20us",
                          "6 COMM_COLL_NODE_B_FWD_RECOMPUTE_ALLREDUCE [5] type=0 size=200 pg=2",
                          "7 COMP_NODE_C_FWD_RECOMPUTE [6] 30us", "8 COMP_NODE_D_BWD_IG [7] 41us",
                          "9 COMP_NODE_D_BWD_WG [8] 42us", "10 COMP_NODE_C_BWD_IG [9] 31us",
                          "11 COMM_COLL_NODE_C_BWD_IG_ALLREDUCE [10] type=0 size=310 pg=2",
                          "12 COMP_NODE_C_BWD_WG [10] 32us",
                          "13 COMM_COLL_NODE_C_BWD_WG_ALLREDUCE [12] type=0 size=320 pg=4",
                          "14 COMP_NODE_B_BWD_IG [12,11] 21us", "15 COMP_NODE_B_BWD_WG [14] 22us",
                          "16 COMP_NODE_A_BWD_IG [15] 11us", "17 COMP_NODE_A_BWD_WG [16] 12us",
                          "18 COMM_COLL_NODE_A_BWD_WG_ALLREDUCE [17] type=0 size=120 pg=4"));
  EXPECT_EQ(c.groups, "{\n  \"1\": [0, 1],\n  \"2\": [2, 3],\n  \"3\": [0, 2],\n  \"4\": [1, 3]\n}\n");
}

// Each initiating layer recomputes from the nearest checkpoint below it, up to itself; a
// checkpoint at the initiating layer itself is not "below" it. Repeats in a list are harmless.
TEST(TextHybrid, FwdInBckwdTwoRecomputations) {
  const std::string layer = " -1 5 NONE 0 6 NONE 0 7 NONE 0 1\n";
  const Converted c = convert("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 checkpoints: 3 0 2 2 "
                              "checkpoint_initiates: 3 1 2 3\n4\nA" +
                                  layer + "B" + layer + "C" + layer + "D" + layer,
                              1);
  std::vector<std::string> names;
  for (const chakra::Node& n : c.traces[0].nodes) names.push_back(n.name());
  EXPECT_THAT(names, ElementsAre("COMP_NODE_A_FWD", "COMP_NODE_B_FWD", "COMP_NODE_C_FWD", "COMP_NODE_D_FWD",
                                 "COMP_NODE_C_FWD_RECOMPUTE", "COMP_NODE_D_BWD_IG", "COMP_NODE_D_BWD_WG",
                                 "COMP_NODE_A_FWD_RECOMPUTE", "COMP_NODE_B_FWD_RECOMPUTE", "COMP_NODE_C_BWD_IG",
                                 "COMP_NODE_C_BWD_WG", "COMP_NODE_A_FWD_RECOMPUTE", "COMP_NODE_B_BWD_IG",
                                 "COMP_NODE_B_BWD_WG", "COMP_NODE_A_BWD_IG", "COMP_NODE_A_BWD_WG"));
}

// ---------------------------------------------------------------------------------------------
// HYBRID_CUSTOMIZED

constexpr const char* kCustomized = "HYBRID_CUSTOMIZED\n4\n"
                                    "D -1 10 whatever 100 11 - 110 12 ALLREDUCE 120 1 DATA\n"
                                    "M -1 20 ALLGATHER 200 21 REDUCESCATTER 210 22 whatever 220 1 MODEL\n"
                                    "DM -1 30 ALLGATHER 300 31 REDUCESCATTER 310 32 ALLREDUCE 320 1 HYBRID_DATA_MODEL\n"
                                    "MD -1 40 ALLGATHER 400 41 REDUCESCATTER 410 42 ALLREDUCE 420 1 "
                                    "HYBRID_MODEL_DATA\n";

// 8 NPUs, model-parallel groups of 2. DATA: only the weight-gradient comm, over all NPUs; MODEL:
// the forward and input-gradient comms over all NPUs; HYBRID_DATA_MODEL: model-parallel groups of
// 2 consecutive ranks (1-4), data-parallel groups of ranks 2 apart (5-6); HYBRID_MODEL_DATA:
// model-parallel groups of ranks 4 apart (7-10), data-parallel groups of 4 consecutive ranks
// (11-12). Columns a layer's parallelism does not use are not checked. The first layer has no
// input-gradient comm, as in HYBRID_DATA_MODEL.
TEST(TextHybrid, CustomizedGraphAndGroups) {
  const Converted c = convert(kCustomized, 8, 1, 2);
  EXPECT_THAT(graph(c.traces[0]),
              ElementsAre("0 COMP_NODE_D_FWD [] 10us", "1 COMP_NODE_M_FWD [0] 20us",
                          "2 COMM_COLL_NODE_M_FWD_ALLGATHER [1] type=2 size=200", "3 COMP_NODE_DM_FWD [2] 30us",
                          "4 COMM_COLL_NODE_DM_FWD_ALLGATHER [3] type=2 size=300 pg=1", "5 COMP_NODE_MD_FWD [4] 40us",
                          "6 COMM_COLL_NODE_MD_FWD_ALLGATHER [5] type=2 size=400 pg=7",
                          "7 COMP_NODE_MD_BWD_IG [6] 41us",
                          "8 COMM_COLL_NODE_MD_BWD_IG_REDUCESCATTER [7] type=7 size=410 pg=7",
                          "9 COMP_NODE_MD_BWD_WG [7] 42us",
                          "10 COMM_COLL_NODE_MD_BWD_WG_ALLREDUCE [9] type=0 size=420 pg=11",
                          "11 COMP_NODE_DM_BWD_IG [9,8] 31us",
                          "12 COMM_COLL_NODE_DM_BWD_IG_REDUCESCATTER [11] type=7 size=310 pg=1",
                          "13 COMP_NODE_DM_BWD_WG [11] 32us",
                          "14 COMM_COLL_NODE_DM_BWD_WG_ALLREDUCE [13] type=0 size=320 pg=5",
                          "15 COMP_NODE_M_BWD_IG [13,12] 21us",
                          "16 COMM_COLL_NODE_M_BWD_IG_REDUCESCATTER [15] type=7 size=210",
                          "17 COMP_NODE_M_BWD_WG [15] 22us", "18 COMP_NODE_D_BWD_IG [17,16] 11us",
                          "19 COMP_NODE_D_BWD_WG [18] 12us",
                          "20 COMM_COLL_NODE_D_BWD_WG_ALLREDUCE [19] type=0 size=120"));
  EXPECT_THAT(pg_names(c.traces[5]), ElementsAre("-", "3", "8", "8", "12", "3", "6", "-", "-"));
  EXPECT_EQ(c.groups, "{\n  \"1\": [0, 1],\n  \"2\": [2, 3],\n  \"3\": [4, 5],\n  \"4\": [6, 7],\n  \"5\": [0, 2, 4, "
                      "6],\n"
                      "  \"6\": [1, 3, 5, 7],\n  \"7\": [0, 4],\n  \"8\": [1, 5],\n  \"9\": [2, 6],\n  \"10\": [3, "
                      "7],\n"
                      "  \"11\": [0, 1, 2, 3],\n  \"12\": [4, 5, 6, 7]\n}\n");
  // Line 1 may say it instead.
  std::string header = kCustomized;
  header.insert(std::string("HYBRID_CUSTOMIZED").size(), " model_parallel_NPU_group: 2");
  const Converted h = convert(header, 8);
  EXPECT_EQ(h.groups, c.groups);
  EXPECT_EQ(graph(h.traces[5]), graph(c.traces[5]));
}

// Without a group size, the model-parallel group is all NPUs: the model-parallel comms of every
// layer run over all of them, and the hybrid layers' data-parallel ones (one NPU each) vanish.
TEST(TextHybrid, CustomizedDefaultsToOneModelParallelGroup) {
  const Converted c = convert(kCustomized, 8);
  EXPECT_EQ(c.groups, "{}\n");
  std::vector<std::string> comms;
  for (const std::string& line : graph(c.traces[0])) {
    if (line.find("COMM_COLL") != std::string::npos) comms.push_back(line.substr(line.find(' ') + 1));
  }
  EXPECT_THAT(comms, ElementsAre("COMM_COLL_NODE_M_FWD_ALLGATHER [1] type=2 size=200",
                                 "COMM_COLL_NODE_DM_FWD_ALLGATHER [3] type=2 size=300",
                                 "COMM_COLL_NODE_MD_FWD_ALLGATHER [5] type=2 size=400",
                                 "COMM_COLL_NODE_MD_BWD_IG_REDUCESCATTER [7] type=7 size=410",
                                 "COMM_COLL_NODE_DM_BWD_IG_REDUCESCATTER [10] type=7 size=310",
                                 "COMM_COLL_NODE_M_BWD_IG_REDUCESCATTER [13] type=7 size=210",
                                 "COMM_COLL_NODE_D_BWD_WG_ALLREDUCE [17] type=0 size=120"));
}

// ---------------------------------------------------------------------------------------------
// Files and the binary.

// convert_text_file writes PREFIX.groups.json for the hybrid kinds, and none for the others.
TEST(TextHybrid, GroupsFileBesideTheRankFiles) {
  const auto dir = temp_dir("text_hybrid_files");
  std::ofstream(dir / "t.txt") << kTransformer;
  const tools::TextFiles files =
      tools::convert_text_file((dir / "t.txt").string(), (dir / "t").string(), {8, 1, 0, {}});
  EXPECT_EQ(files.ranks, 8u);
  EXPECT_EQ(files.groups_path, (dir / "t.groups.json").string());
  std::ifstream in(dir / "t.groups.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), convert(kTransformer, 8).groups);
  std::ofstream(dir / "d.txt") << "DATA\n1\nL0 -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 100 1\n";
  const tools::TextFiles data = tools::convert_text_file((dir / "d.txt").string(), (dir / "d").string(), {2, 1, 0, {}});
  EXPECT_EQ(data.ranks, 2u);
  EXPECT_EQ(data.groups_path, "");
  EXPECT_FALSE(std::filesystem::exists(dir / "d.groups.json"));
}

void write_configs(const std::filesystem::path& dir, int npus) {
  std::ofstream(dir / "system.json") << R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
      "active-chunks-per-dimension": 1, "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
      "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
      "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware", "local-mem-bw": 50})";
  std::ofstream(dir / "network.yml") << "topology: [ Ring ]\nnpus_count: [ " << npus
                                     << " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
}

// Converts `text_path` with the binary, runs it with its groups on an 8-NPU ring, and returns
// the run's output.
std::string convert_and_run(const std::filesystem::path& dir, const std::string& text_path,
                            const std::vector<std::string>& extra) {
  const std::string prefix = (dir / "w").string();
  std::vector<std::string> args = {"chakra", "convert",  "text", text_path, "--npus",
                                   "8",      "--passes", "1",    "--out",   prefix};
  args.insert(args.end(), extra.begin(), extra.end());
  const CommandResult c = run_binary(args);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "wrote 8 rank files " + prefix + ".<rank>.et\nwrote the communicator groups " + prefix +
                       ".groups.json (run with --comm-groups " + prefix + ".groups.json)\n");
  write_configs(dir, 8);
  const CommandResult r =
      run_binary({"run", "--workload", prefix, "--system", (dir / "system.json").string(), "--network",
                  (dir / "network.yml").string(), "--comm-groups", prefix + ".groups.json", "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

struct RealWorkload {
  const char* file;
  std::vector<std::string> extra;  // convert flags
  const char* name;
};

class TextHybridWorkload : public ::testing::TestWithParam<RealWorkload> {};

// Every NPU finishes, all at the same time (the ranks' graphs and groups are symmetric).
TEST_P(TextHybridWorkload, ConvertsAndRunsToTheEnd) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = temp_dir(std::string("text_hybrid_") + GetParam().name);
  const std::string out =
      convert_and_run(dir, (ref / "text-workloads" / (std::string(GetParam().file) + ".txt")).string(),
                      GetParam().extra);
  std::istringstream lines(out);
  std::string line, first_finish;
  int finished = 0;
  while (std::getline(lines, line)) {
    ASSERT_THAT(line, HasSubstr("sys[" + std::to_string(finished) + "] finished, "));
    const std::string finish = line.substr(0, line.find(" cycles")).substr(line.find(", ") + 2);
    if (finished++ == 0) first_finish = finish;
    EXPECT_EQ(finish, first_finish);
  }
  EXPECT_EQ(finished, 8);
}

INSTANTIATE_TEST_SUITE_P(TextHybrid, TextHybridWorkload,
                         ::testing::Values(RealWorkload{"Transformer_HybridParallel", {}, "Transformer"},
                                           RealWorkload{"Transformer_HybridParallel_Fwd_In_Bckwd", {}, "FwdInBckwd"},
                                           RealWorkload{"sample_per_layer_parallel_HybridCustomized", {}, "Customized"},
                                           RealWorkload{"sample_per_layer_parallel_HybridCustomized",
                                                        {"--model-parallel-group", "2"},
                                                        "CustomizedGroupsOf2"}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

// The real transformer's groups: model-parallel groups of 4 (line 1) and data-parallel pairs.
TEST(TextHybrid, RealTransformerGroups) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  std::ifstream in(ref / "text-workloads" / "Transformer_HybridParallel.txt");
  std::stringstream text;
  text << in.rdbuf();
  const Converted c = convert(text.str(), 8);
  EXPECT_EQ(c.groups, "{\n  \"1\": [0, 1, 2, 3],\n  \"2\": [4, 5, 6, 7],\n  \"3\": [0, 4],\n  \"4\": [1, 5],\n  \"5\": "
                      "[2, 6],\n"
                      "  \"6\": [3, 7]\n}\n");
  EXPECT_EQ(c.traces[0].nodes.size(), 57u * 3 + 70u);  // a compute per phase and the 70 comms not NONE
}

TEST(TextHybrid, CommandLineErrors) {
  const auto dir = temp_dir("text_hybrid_cli");
  std::ofstream(dir / "t.txt") << kTransformer;
  const CommandResult r = run_binary({"chakra", "convert", "text", (dir / "t.txt").string(), "--npus", "6", "--passes",
                                      "1", "--out", (dir / "t").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("t.txt: --npus 6 is not a multiple of the model-parallel group size 4"));
  EXPECT_FALSE(std::filesystem::exists(dir / "t.0.et"));
  EXPECT_FALSE(std::filesystem::exists(dir / "t.groups.json"));
  const CommandResult f = run_binary({"chakra", "convert", "text", (dir / "t.txt").string(), "--npus", "8", "--passes",
                                      "1", "--out", (dir / "t").string(), "--model-parallel-group", "2"});
  EXPECT_NE(f.exit_code, 0);
  EXPECT_THAT(f.err, HasSubstr("line 1 says \"model_parallel_NPU_group: 4\" but --model-parallel-group is 2"));
}

// ---------------------------------------------------------------------------------------------
// Bad headers and layer lines: each error names the file and line and says what was expected.

const std::string kLayers = "2\nA -1 10 ALLREDUCE 100 11 ALLREDUCE 110 12 ALLREDUCE 120 1\n"
                            "B -1 20 ALLREDUCE 200 21 ALLREDUCE 210 22 ALLREDUCE 220 1\n";

TEST(TextHybrid, ErrorsForTheGroupSize) {
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER\n" + kLayers, 8), HasSubstr("w.txt: line 1: HYBRID_TRANSFORMER needs the "
                                                                        "model-parallel group size; expected "
                                                                        "\"model_parallel_NPU_group: N\" after the "
                                                                        "parallelism (or --model-parallel-group N)"));
  for (const std::string bad : {"four", "0", "-4", "2.5"}) {
    EXPECT_THAT(error_for("HYBRID_TRANSFORMER model_parallel_NPU_group: " + bad + "\n" + kLayers, 8),
                HasSubstr("w.txt: line 1: \"model_parallel_NPU_group:\" is followed by \"" + bad +
                          "\"; expected the number of NPUs in a model-parallel group, an integer of at least 1"));
  }
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER model_parallel_NPU_group:\n" + kLayers, 8), HasSubstr("\"model_parallel_"
                                                                                                  "NPU_group:\" is "
                                                                                                  "followed by the end "
                                                                                                  "of the line"));
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER model_parallel_NPU_group: 4\n" + kLayers, 6),
              HasSubstr("w.txt: --npus 6 is not a multiple of the model-parallel group size 4 (line 1's "
                        "model_parallel_NPU_group:); expected a number of NPUs that 4 divides"));
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER model_parallel_NPU_group: 4\n" + kLayers, 2), HasSubstr("--npus 2 is not a "
                                                                                                    "multiple of the "
                                                                                                    "model-parallel "
                                                                                                    "group size 4"));
  EXPECT_THAT(error_for("HYBRID_CUSTOMIZED\n" + kLayers, 8, 3), HasSubstr("w.txt: --npus 8 is not a multiple of the "
                                                                          "model-parallel group size 3 "
                                                                          "(--model-parallel-group)"));
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER model_parallel_NPU_group: 4\n" + kLayers, 8, 2),
              HasSubstr("w.txt: line 1 says \"model_parallel_NPU_group: 4\" but --model-parallel-group is 2; expected "
                        "the two to agree"));
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER\n" + kLayers, 8, -2), HasSubstr("--model-parallel-group is -2; expected at "
                                                                            "least 1 NPU"));
  EXPECT_THAT(error_for("DATA\n" + kLayers, 8, 2), HasSubstr("w.txt: --model-parallel-group 2 applies to "
                                                             "HYBRID_TRANSFORMER, "
                                                             "HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_CUSTOMIZED only; "
                                                             "DATA has no model-parallel groups"));
}

TEST(TextHybrid, ErrorsForLineOneSettings) {
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER model_parallel_NPU_group: 4 checkpoints: 1 0\n" + kLayers, 8),
              HasSubstr("w.txt: line 1: \"checkpoints:\" is not a setting of HYBRID_TRANSFORMER; expected "
                        "\"model_parallel_NPU_group: N\", N the NPUs in a model-parallel group"));
  EXPECT_THAT(error_for("HYBRID_CUSTOMIZED group 4\n" + kLayers, 8), HasSubstr("w.txt: line 1: \"group\" is not a "
                                                                               "setting of HYBRID_CUSTOMIZED"));
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER model_parallel_NPU_group: 4 model_parallel_NPU_group: 4\n" + kLayers, 8),
              HasSubstr("w.txt: line 1: \"model_parallel_NPU_group:\" is given twice; expected each setting once"));
}

TEST(TextHybrid, ErrorsForCheckpointLists) {
  const std::string kind = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ";
  const std::string four = "4\nA -1 1 NONE 0 1 NONE 0 1 NONE 0 1\nB -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"
                           "C -1 1 NONE 0 1 NONE 0 1 NONE 0 1\nD -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n";
  auto error = [&](const std::string& settings) { return error_for(kind + settings + "\n" + four, 4); };
  EXPECT_THAT(error("checkpoint_initiates: 1 3"), HasSubstr("w.txt: line 1: HYBRID_TRANSFORMER_FWD_IN_BCKWD has no "
                                                            "\"checkpoints:\" list; expected "
                                                            "\"model_parallel_NPU_group: N checkpoints: COUNT LAYER... "
                                                            "checkpoint_initiates: COUNT "
                                                            "LAYER...\""));
  EXPECT_THAT(error("checkpoints: 1 1"), HasSubstr("has no \"checkpoint_initiates:\" list"));
  EXPECT_THAT(error("checkpoints: two 1 2 checkpoint_initiates: 1 3"), HasSubstr("w.txt: line 1: \"checkpoints:\" is "
                                                                                 "followed by \"two\"; expected the "
                                                                                 "number of layers "
                                                                                 "listed, then their indexes"));
  EXPECT_THAT(error("checkpoints: 1 1 checkpoint_initiates:"), HasSubstr("\"checkpoint_initiates:\" is followed by the "
                                                                         "end of the line"));
  EXPECT_THAT(error("checkpoints: 3 1 2 checkpoint_initiates: 1 3"), HasSubstr("w.txt: line 1: \"checkpoints: 3\" "
                                                                               "lists 3 layers, but layer 3 of them is "
                                                                               "\"checkpoint_initiates:\"; expected 3 "
                                                                               "layer indexes from 0 to 3"));
  EXPECT_THAT(error("checkpoints: 1 1 checkpoint_initiates: 2 3"), HasSubstr("\"checkpoint_initiates: 2\" lists 2 "
                                                                             "layers, but layer 2 of them is the end "
                                                                             "of the line"));
  EXPECT_THAT(error("checkpoints: 1 x checkpoint_initiates: 1 3"), HasSubstr("\"checkpoints: 1\" lists 1 layers, but "
                                                                             "layer 1 of them is \"x\""));
  EXPECT_THAT(error("checkpoints: 1 4 checkpoint_initiates: 1 3"), HasSubstr("w.txt: line 1: \"checkpoints:\" names "
                                                                             "layer 4, which the file does not have; "
                                                                             "expected a "
                                                                             "layer index from 0 to 3 (the file has 4 "
                                                                             "layers)"));
  EXPECT_THAT(error("checkpoints: 1 1 checkpoint_initiates: 1 9"), HasSubstr("\"checkpoint_initiates:\" names layer 9, "
                                                                             "which the file does not have"));
  EXPECT_THAT(error("checkpoints: 1 3 checkpoint_initiates: 1 3"), HasSubstr("w.txt: line 1: \"checkpoint_initiates:\" "
                                                                             "names layer 3, but no layer of "
                                                                             "\"checkpoints:\" is "
                                                                             "below it; expected a checkpoint below "
                                                                             "each layer that initiates a "
                                                                             "recomputation"));
  EXPECT_THAT(error("checkpoints: 1 1 checkpoints: 1 1 checkpoint_initiates: 1 3"), HasSubstr("\"checkpoints:\" is "
                                                                                              "given twice"));
}

TEST(TextHybrid, ErrorsForLayerLines) {
  EXPECT_THAT(error_for("HYBRID_CUSTOMIZED\n1\nA -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 100 1\n", 2),
              HasSubstr("w.txt: line 3: layer \"A\": field 13 (the layer's parallelism, which HYBRID_CUSTOMIZED "
                        "needs) is missing; expected DATA, MODEL, HYBRID_DATA_MODEL or HYBRID_MODEL_DATA"));
  EXPECT_THAT(error_for("HYBRID_CUSTOMIZED\n1\nA -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 100 1 PIPELINE\n", 2),
              HasSubstr("w.txt: line 3: layer \"A\": field 13 (the layer's parallelism, which HYBRID_CUSTOMIZED "
                        "needs) is \"PIPELINE\"; expected DATA"));
  EXPECT_THAT(error_for("HYBRID_CUSTOMIZED\n1\nA -1 10 NONE 0 11 NONE 0 12 BCAST 100 1 DATA\n", 2),
              HasSubstr("w.txt: line 3: layer \"A\": field 10 (weight-gradient comm type) is \"BCAST\"; expected "
                        "ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or NONE"));
  EXPECT_THAT(error_for("HYBRID_TRANSFORMER model_parallel_NPU_group: 1\n1\nA -1 10 NONE 0 11 BCAST 0 12 NONE 0 1\n",
                        2),
              HasSubstr("w.txt: line 3: layer \"A\": field 7 (input-gradient comm type) is \"BCAST\""));
}

}  // namespace
}  // namespace chakrasim::test
