// The ASTRA-sim 1.0 text converter: byte-identical to upstream Chakra on the seven goldens
// (--num-npus 2 --num-passes 2), the real ASTRA-sim 1.0 workloads of those parallelisms converted
// and simulated (the others, which the reference rejects: text_hybrid_test.cc), the reference's
// defects that are fixed here, and an error naming the file, line and field for each kind of bad
// input.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "compute/compute_model.h"
#include "core/error.h"
#include "support/test_support.h"
#include "tools/text/text_converter.h"

namespace chakrasim::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// One node as the golden README's compact dumps print it:
// "id TYPE name data=[..] ctrl=[..] dur=.. attr:oneof=value ...".
std::string dump(const chakra::Node& n) {
  auto list = [](const auto& ids) {
    std::string s;
    for (const auto id : ids) s += (s.empty() ? "" : ", ") + std::to_string(id);
    return "[" + s + "]";
  };
  std::string s = fmt::format("{} {} {} data={} ctrl={} dur={}", n.id(), chakra::node_type_name(n.type()), n.name(),
                              list(n.data_deps()), list(n.ctrl_deps()), n.duration_micros());
  for (const chakra::Attribute& a : n.attr()) {
    const auto v = chakra::attr_int(n, a.name());
    s += fmt::format(" {}:{}={}", a.name(), chakra::value_kind(a), v ? std::to_string(*v) : a.ShortDebugString());
  }
  return s;
}

// Where two .et byte strings first differ, in words, for a failing comparison.
std::string first_difference(const std::string& ours, const std::string& golden) {
  const chakra::Trace a = chakra::parse_trace(ours, "ours"), b = chakra::parse_trace(golden, "golden");
  if (a.metadata.SerializeAsString() != b.metadata.SerializeAsString()) {
    return "the metadata differs:\n  ours:   " + a.metadata.ShortDebugString().substr(0, 300) +
           "\n  golden: " + b.metadata.ShortDebugString().substr(0, 300);
  }
  for (std::size_t i = 0; i < std::min(a.nodes.size(), b.nodes.size()); ++i) {
    if (a.nodes[i].SerializeAsString() != b.nodes[i].SerializeAsString()) {
      return fmt::format("node #{} differs:\n  ours:   {}\n  golden: {}", i, dump(a.nodes[i]), dump(b.nodes[i]));
    }
  }
  return fmt::format("ours has {} nodes, the golden {}", a.nodes.size(), b.nodes.size());
}

std::vector<chakra::Trace> convert(const std::string& text, std::int64_t npus = 1, std::int64_t passes = 1) {
  return tools::convert_text(text, "w.txt", {npus, passes, 0, {}});
}

// The error converting `text` gives.
std::string error_for(const std::string& text, std::int64_t npus = 1, std::int64_t passes = 1) {
  return error_of([&] { convert(text, npus, passes); });
}

std::vector<std::string> names(const chakra::Trace& t) {
  std::vector<std::string> out;
  for (const chakra::Node& n : t.nodes) out.push_back(n.name());
  return out;
}

const chakra::Node& named(const chakra::Trace& t, const std::string& name, int occurrence = 0) {
  for (const chakra::Node& n : t.nodes) {
    if (n.name() == name && occurrence-- == 0) return n;
  }
  throw std::runtime_error("no node " + name);
}

std::vector<std::uint64_t> deps(const chakra::Trace& t, const std::string& name, int occurrence = 0) {
  const auto& d = named(t, name, occurrence).data_deps();
  return {d.begin(), d.end()};
}

std::uint64_t id(const chakra::Trace& t, const std::string& name, int occurrence = 0) {
  return named(t, name, occurrence).id();
}

// ---------------------------------------------------------------------------------------------
// Goldens: upstream `chakra_converter Text --num-npus 2 --num-passes 2`, compared byte for byte.

class TextGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(TextGolden, ByteIdentical) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = ref / "golden" / "text_converter";
  const std::string name = GetParam();
  const auto traces = tools::convert_text(file_bytes(dir / (name + ".txt")), name + ".txt", {2, 2, 0, {}});
  ASSERT_EQ(traces.size(), 2u);
  for (std::size_t rank = 0; rank < 2; ++rank) {
    const std::string golden = file_bytes(dir / (name + "." + std::to_string(rank) + ".et"));
    ASSERT_FALSE(golden.empty()) << name << "." << rank << ".et is missing";
    const std::string ours = chakra::serialize_trace(traces[rank]);
    EXPECT_TRUE(ours == golden) << name << " rank " << rank << ": " << first_difference(ours, golden);
  }
}

INSTANTIATE_TEST_SUITE_P(TextConverter, TextGolden,
                         ::testing::Values("data3", "datanone", "dlrm", "hdm2", "hmd2", "micro", "model3"),
                         [](const auto& param_info) { return std::string(param_info.param); });

// ---------------------------------------------------------------------------------------------
// The real ASTRA-sim 1.0 workloads: each supported one converts for 4 NPUs x 2 passes and
// simulates on a 4-NPU ring to the end, every compute node replayed once per pass.

class TextWorkload : public ::testing::TestWithParam<const char*> {};

TEST_P(TextWorkload, ConvertsAndSimulates) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const std::string file = std::string(GetParam()) + ".txt";
  const auto traces = tools::convert_text(file_bytes(ref / "text-workloads" / file), file, {4, 2, 0, {}});
  ASSERT_EQ(traces.size(), 4u);
  sim::Inputs in;
  in.network = network_of({{network::DimensionKind::kRing, 4, 50, 500}});
  in.system = system_of("ring", 1, 4, 1);
  Tick compute_ns = 0;
  for (const chakra::Node& n : traces[0].nodes) {
    if (n.type() == ChakraProtoMsg::COMP_NODE) compute_ns += compute::replay_ns(n.duration_micros());
  }
  for (std::size_t r = 0; r < traces.size(); ++r) {
    in.graphs.push_back(std::make_shared<const chakra::Graph>(chakra::Graph::build(traces[r], file)));
  }
  const sim::Result result = run(in);
  ASSERT_TRUE(result.all_finished());
  for (const sim::NpuResult& npu : result.npus) {
    EXPECT_EQ(npu.nodes_done, traces[0].nodes.size());
    EXPECT_EQ(npu.gpu_compute_ns, compute_ns);
    EXPECT_GE(npu.finish_ns, compute_ns);
  }
}

INSTANTIATE_TEST_SUITE_P(TextConverter, TextWorkload,
                         ::testing::Values("DLRM_HybridParallel", "MLP_HybridParallel_Data_Model",
                                           "MLP_HybridParallel_Model_Data", "MLP_ModelParallel",
                                           "Resnet50_DataParallel", "microAllReduce", "microAllToAll"),
                         [](const auto& param_info) { return std::string(param_info.param); });

// The binary end to end: convert a real workload, then `run` it.
TEST(TextConverter, CommandLineConvertsAndRuns) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = temp_dir("text_cli");
  const std::string prefix = (dir / "resnet").string();
  const CommandResult c =
      run_binary({"chakra", "convert", "text", (ref / "text-workloads" / "Resnet50_DataParallel.txt").string(),
                  "--npus", "4", "--passes", "1", "--out", prefix});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "wrote 4 rank files " + prefix + ".<rank>.et\n");
  std::ofstream(dir / "system.json") << R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
      "active-chunks-per-dimension": 1, "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
      "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
      "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware", "local-mem-bw": 50})";
  std::ofstream(dir / "network.yml") << "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 "
                                        "]\n";
  const CommandResult r = run_binary({"run", "--workload", prefix, "--system", (dir / "system.json").string(),
                                      "--network", (dir / "network.yml").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sys[3] finished"));
}

TEST(TextConverter, CommandLineHelpAndErrors) {
  const CommandResult help = run_binary({"chakra", "convert", "text", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Example:\n  chakrasim chakra convert text "));
  const auto dir = temp_dir("text_cli_errors");
  const std::string missing = (dir / "nope.txt").string();
  const CommandResult m =
      run_binary({"chakra", "convert", "text", missing, "--npus", "2", "--passes", "1", "--out", (dir / "w").string()});
  EXPECT_NE(m.exit_code, 0);
  EXPECT_THAT(m.err, HasSubstr(missing + ": cannot open the text workload: the file does not exist"));
  std::ofstream(dir / "w.txt") << "MICRO\n1\nL0 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 5\n";
  for (const char* npus : {"0", "-3"}) {
    const CommandResult z = run_binary({"chakra", "convert", "text", (dir / "w.txt").string(), "--npus", npus,
                                        "--passes", "1", "--out", (dir / "w").string()});
    EXPECT_NE(z.exit_code, 0);
    EXPECT_THAT(z.err, HasSubstr(std::string("--npus is ") + npus + "; expected at least 1 NPU"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "w.0.et"));
}

// ---------------------------------------------------------------------------------------------
// The graphs, on inputs written here.

// DATA, 2 layers, 1 pass: FWD L0, FWD L1 <- FWD L0; backward from L1: WG <- last FWD, its comm,
// IG; L0: WG <- IG L1, its comm; no IG for the first layer. A NONE weight-gradient comm stays a
// 0-byte ALL_REDUCE named ..._NONE, as the reference writes it (golden datanone).
TEST(TextConverter, DataParallelKeepsTheReferencesNoneNode) {
  const auto t = convert("DATA\n2\nL0 -1 10 NONE 0 11 NONE 0 12 NONE 0 1\nL1 -1 20 NONE 0 21 NONE 0 22 ALLGATHER 300 "
                         "1\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_THAT(names(t[0]),
              ElementsAre("COMP_NODE_L0_FWD", "COMP_NODE_L1_FWD", "COMP_NODE_L1_BWD_WG", "COMM_COLL_NODE_L1_ALLGATHER",
                          "COMP_NODE_L1_BWD_IG", "COMP_NODE_L0_BWD_WG", "COMM_COLL_NODE_L0_NONE"));
  EXPECT_THAT(deps(t[0], "COMP_NODE_L0_BWD_WG"), ElementsAre(id(t[0], "COMP_NODE_L1_BWD_IG")));
  const chakra::Node& none = named(t[0], "COMM_COLL_NODE_L0_NONE");
  EXPECT_EQ(chakra::attr_int(none, "comm_type"), 0);
  EXPECT_EQ(chakra::attr_int(none, "comm_size"), 0);
  EXPECT_EQ(chakra::attr_int(named(t[0], "COMM_COLL_NODE_L1_ALLGATHER"), "comm_type"), 2);
  EXPECT_EQ(named(t[0], "COMP_NODE_L1_BWD_WG").duration_micros(), 22u);
}

// Every rank gets the same graph; ids run on from one rank file to the next (7 nodes a rank).
TEST(TextConverter, IdsRunOnAcrossRankFilesAndMetadataCarriesTheText) {
  const std::string text = "DATA\n2\nL0 -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 8 1\nL1 -1 20 NONE 0 21 NONE 0 22 "
                           "ALLREDUCE 8 1\n";
  const auto t = convert(text, 3, 1);
  ASSERT_EQ(t.size(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    ASSERT_EQ(t[r].nodes.size(), 7u);
    EXPECT_EQ(t[r].nodes.front().id(), 7 * r);
    EXPECT_THAT(deps(t[r], "COMP_NODE_L1_FWD"), ElementsAre(7 * r));
    EXPECT_EQ(t[r].metadata.version(), "");
    ASSERT_EQ(t[r].metadata.attr_size(), 2);
    EXPECT_EQ(t[r].metadata.attr(0).string_val(), tools::kTextSchema);
    EXPECT_EQ(t[r].metadata.attr(1).name(), "input_file");
    EXPECT_EQ(t[r].metadata.attr(1).string_val(), text);
  }
}

// Fixed: the reference dies on blank lines ("Cannot parse the following layer"); CRLF files read
// as LF ones, their copied text in LF too (as Python's universal newlines give the reference).
TEST(TextConverter, BlankLinesAreSkippedAndCrlfReadsAsLf) {
  const std::string clean = "MICRO\n2\nL0 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 5\nL1 -1 5 NONE 0 5 NONE 0 5 ALLTOALL 32 "
                            "5\n";
  const auto want = convert(clean, 1, 2);
  const std::string blanks = "MICRO\n2\n\nL0 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 5\n \t\nL1 -1 5 NONE 0 5 NONE 0 5 "
                             "ALLTOALL 32 5\n\n\n";
  std::string crlf;
  for (char c : clean) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  for (const std::string& text : {blanks, crlf, "\xEF\xBB\xBF" + clean}) {
    const auto got = convert(text, 1, 2);
    ASSERT_EQ(got[0].nodes.size(), want[0].nodes.size());
    for (std::size_t i = 0; i < got[0].nodes.size(); ++i) EXPECT_EQ(dump(got[0].nodes[i]), dump(want[0].nodes[i]));
  }
  EXPECT_EQ(convert(crlf)[0].metadata.attr(1).string_val(), clean);
}

// Fixed: outside DATA a NONE comm makes no node (the reference writes a 0-byte ALL_REDUCE).
// MICRO: only L0's all-reduce, once per pass.
TEST(TextConverter, MicroMakesNoNodeForNone) {
  const auto t =
      convert("MICRO\n2\nL0 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 5\nL1 -1 5 NONE 0 5 NONE 0 5 NONE 0 5\n", 1, 2);
  EXPECT_THAT(names(t[0]), ElementsAre("COMM_COLL_NODE_L0_ALLREDUCE", "COMM_COLL_NODE_L0_ALLREDUCE"));
  EXPECT_THAT(t[0].nodes[1].data_deps(), IsEmpty());
}

// MODEL, L0's forward comm NONE, L1's input-gradient comm NONE: FWD L1 waits on FWD L0, and
// IG L0 on WG L1 alone; the first layer never has an input-gradient comm.
TEST(TextConverter, ModelNoneCommsHandTheirDependencyToTheCompute) {
  const auto t = convert("MODEL\n2\nL0 -1 10 NONE 0 11 ALLREDUCE 110 12 NONE 0 1\nL1 -1 20 ALLGATHER 200 21 NONE 0 22 "
                         "NONE 0 1\n");
  EXPECT_THAT(names(t[0]),
              ElementsAre("COMP_NODE_L0_FWD", "COMP_NODE_L1_FWD", "COMM_COLL_NODE_L1_ALLGATHER", "COMP_NODE_L1_BWD_IG",
                          "COMP_NODE_L1_BWD_WG", "COMP_NODE_L0_BWD_IG", "COMP_NODE_L0_BWD_WG"));
  EXPECT_THAT(deps(t[0], "COMP_NODE_L1_FWD"), ElementsAre(id(t[0], "COMP_NODE_L0_FWD")));
  EXPECT_THAT(deps(t[0], "COMP_NODE_L1_BWD_IG"), ElementsAre(id(t[0], "COMM_COLL_NODE_L1_ALLGATHER")));
  EXPECT_THAT(deps(t[0], "COMP_NODE_L0_BWD_IG"), ElementsAre(id(t[0], "COMP_NODE_L1_BWD_WG")));
}

// HYBRID_DATA_MODEL, 2 passes, L1's forward comm NONE, L0's weight-gradient comm NONE: IG L1
// waits on FWD L1; the next pass's FWD L0 on WG L0 (not its comm), FWD L1 on WGCOMM L1 first.
TEST(TextConverter, HybridNoneCommsHandTheirDependencyToTheCompute) {
  const auto t = convert("HYBRID_DATA_MODEL\n2\nL0 -1 10 ALLGATHER 100 11 ALLREDUCE 110 12 NONE 0 1\n"
                         "L1 -1 20 NONE 0 21 ALLREDUCE 210 22 ALLREDUCE 220 1\n",
                         1, 2);
  ASSERT_EQ(t[0].nodes.size(), 18u);
  for (const std::string& n : names(t[0])) EXPECT_THAT(n, ::testing::Not(HasSubstr("NONE")));
  EXPECT_THAT(deps(t[0], "COMP_NODE_L1_BWD_IG"), ElementsAre(id(t[0], "COMP_NODE_L1_FWD")));
  EXPECT_THAT(deps(t[0], "COMP_NODE_L0_BWD_IG"), ElementsAre(id(t[0], "COMP_NODE_L1_BWD_WG"), id(t[0], "COMM_COLL_NODE_"
                                                                                                       "L1_IG_COMM__"
                                                                                                       "ALLREDUCE")));
  EXPECT_THAT(deps(t[0], "COMP_NODE_L0_FWD", 1), ElementsAre(id(t[0], "COMP_NODE_L0_BWD_WG")));
  EXPECT_THAT(deps(t[0], "COMP_NODE_L1_FWD", 1),
              ElementsAre(id(t[0], "COMM_COLL_NODE_L1_ALLREDUCE"), id(t[0], "COMM_COLL_NODE_L0_ALLGATHER", 1)));
}

// HYBRID_DLRM, last bottom layer 1, the first layer with no forward all-to-all and a NONE
// backward one. Fixed: the reference crashes at FWD B (no all-to-all to wait for) and would
// write the backward one as a 0-byte ALL_REDUCE; here FWD B waits on FWD E alone and WG E on
// IG B alone. HYBRID_DLRM_ENHANCED is the same converter.
TEST(TextConverter, DlrmWithoutEmbeddingAllToAll) {
  const std::string layers = "3\nE -1 30 NONE 0 31 NONE 0 32 NONE 0 1\nB -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 100 1\n"
                             "T -1 20 NONE 0 21 NONE 0 22 ALLREDUCE 200 1\n";
  const auto t = convert("HYBRID_DLRM 1\n" + layers);
  EXPECT_THAT(names(t[0]), ElementsAre("COMP_NODE_E_FWD", "COMP_NODE_B_FWD", "COMP_NODE_T_FWD", "COMP_NODE_T_BWD_WG",
                                       "COMM_COLL_NODE_T_ALLREDUCE", "COMP_NODE_T_BWD_IG", "COMP_NODE_B_BWD_WG",
                                       "COMM_COLL_NODE_B_ALLREDUCE", "COMP_NODE_B_BWD_IG", "COMP_NODE_E_BWD_WG"));
  EXPECT_THAT(deps(t[0], "COMP_NODE_B_FWD"), ElementsAre(id(t[0], "COMP_NODE_E_FWD")));
  EXPECT_THAT(deps(t[0], "COMP_NODE_E_BWD_WG"), ElementsAre(id(t[0], "COMP_NODE_B_BWD_IG")));
  const auto enhanced = convert("HYBRID_DLRM_ENHANCED 1\n" + layers);
  ASSERT_EQ(enhanced[0].nodes.size(), t[0].nodes.size());
  for (std::size_t i = 0; i < t[0].nodes.size(); ++i) EXPECT_EQ(dump(enhanced[0].nodes[i]), dump(t[0].nodes[i]));
}

// Columns a mode does not turn into nodes are not checked (MICRO reads only weight gradients).
TEST(TextConverter, UnusedCommColumnsAreNotChecked) {
  EXPECT_EQ(convert("MICRO\n1\nL0 -1 5 whatever 0 5 - 0 5 ALLREDUCE 64 5\n")[0].nodes.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Bad input: each error names the file, the line and the field, and says what was expected.

constexpr const char* kLayer = "L0 -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 100 1\n";

TEST(TextConverter, ErrorsForTheHeader) {
  EXPECT_THAT(error_for(""), HasSubstr("w.txt: the file is empty; expected an ASTRA-sim 1.0 text workload"));
  EXPECT_THAT(error_for(" \n1\n"), HasSubstr("w.txt: line 1 is empty; expected the parallelism: MICRO, DATA"));
  EXPECT_THAT(error_for(std::string("PIPELINE\n1\n") + kLayer), HasSubstr("w.txt: line 1: parallelism \"PIPELINE\" is "
                                                                          "not supported; expected MICRO, DATA, MODEL, "
                                                                          "HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, "
                                                                          "HYBRID_DLRM, HYBRID_DLRM_ENHANCED, "
                                                                          "HYBRID_TRANSFORMER, "
                                                                          "HYBRID_TRANSFORMER_FWD_IN_BCKWD or "
                                                                          "HYBRID_CUSTOMIZED"));
  EXPECT_THAT(error_for(std::string("DATA\ntwo\n") + kLayer), HasSubstr("w.txt: line 2 is \"two\"; expected the number "
                                                                        "of layers, a single non-negative integer"));
  EXPECT_THAT(error_for("DATA\n"), HasSubstr("w.txt: line 2 is \"(end of file)\"; expected the number of layers"));
  EXPECT_THAT(error_for("DATA\n1\n\n"), HasSubstr("w.txt: no layer lines after line 2; expected the 1 line 2 gives"));
  // Line 2 saying 0 is not a workload either; the message does not ask for 0 lines.
  EXPECT_THAT(error_for("DATA\n0\n"), HasSubstr("w.txt: no layer lines after line 2; expected at least one (a workload "
                                                "has at least one layer)"));
  EXPECT_THAT(error_for(std::string("DATA\n3\n") + kLayer + kLayer), HasSubstr("w.txt: line 2 says 3 layers but the "
                                                                               "file has 2 layer lines (lines 3 to "
                                                                               "4)"));
  EXPECT_THAT(error_for(std::string("HYBRID_DLRM 1\n1\n") + kLayer), HasSubstr("w.txt: HYBRID_DLRM needs at least 2 "
                                                                               "layers, bottom and top; expected more "
                                                                               "layer lines"));
  for (const std::string b : {"", "0", "3", "-1", "x"}) {
    EXPECT_THAT(error_for("HYBRID_DLRM " + b + "\n3\n" + kLayer + kLayer + kLayer),
                HasSubstr("w.txt: line 1: HYBRID_DLRM needs the index of the last bottom MLP layer as its second "
                          "field, found \"" +
                          b + "\"; expected an integer from 1 to 2"));
  }
}

TEST(TextConverter, ErrorsForLayerLines) {
  EXPECT_THAT(error_for("DATA\n1\nL0 -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 100\n"), HasSubstr("w.txt: line 3: a layer "
                                                                                            "line with 11 fields; "
                                                                                            "expected at least 12: "
                                                                                            "name, reserved"));
  const std::vector<std::pair<int, const char*>> numbers = {{2, "forward compute time"},
                                                            {4, "forward comm size"},
                                                            {5, "input-gradient compute time"},
                                                            {7, "input-gradient comm size"},
                                                            {8, "weight-gradient compute time"},
                                                            {10, "weight-gradient comm size"}};
  for (const auto& [field, what] : numbers) {
    for (const std::string bad : {"1.5", "-5", "x"}) {
      std::vector<std::string> words = {"L0",   "-1", "10", "NONE",      "0",   "11",
                                        "NONE", "0",  "12", "ALLREDUCE", "100", "1"};
      words[static_cast<std::size_t>(field)] = bad;
      std::string line;
      for (const std::string& w : words) line += w + " ";
      EXPECT_THAT(error_for("DATA\n1\n" + line + "\n"), HasSubstr(fmt::format("w.txt: line 3: layer \"L0\": field {} "
                                                                              "({}) is \"{}\"; expected an integer "
                                                                              "from 0 to ",
                                                                              field + 1, what, bad)));
    }
  }
  EXPECT_THAT(error_for("DATA\n1\nL0 -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 9223372036854775808 1\n"),
              HasSubstr("field 11 (weight-gradient comm size) is \"9223372036854775808\"; expected an integer from 0 "
                        "to 9223372036854775807"));
  EXPECT_THAT(error_for("DATA\n1\nL0 -1 10 NONE 0 11 NONE 0 12 ALLREDUC 100 1\n"),
              HasSubstr("w.txt: line 3: layer \"L0\": field 10 (weight-gradient comm type) is \"ALLREDUC\"; expected "
                        "ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL or NONE"));
  EXPECT_THAT(error_for("MODEL\n1\nL0 -1 10 BCAST 0 11 NONE 0 12 NONE 100 1\n"), HasSubstr("line 3: layer \"L0\": "
                                                                                           "field 4 (forward comm "
                                                                                           "type) is \"BCAST\""));
  EXPECT_THAT(error_for("DATA\n1\nL\xff -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 100 1\n"), HasSubstr("w.txt: line 3, "
                                                                                                 "column 2: byte 0xff "
                                                                                                 "is not UTF-8 text; "
                                                                                                 "expected a UTF-8 "
                                                                                                 "text file"));
}

TEST(TextConverter, ErrorsForOptionsAndFiles) {
  const std::string ok = std::string("DATA\n1\n") + kLayer;
  EXPECT_THAT(error_for(ok, 0, 1), HasSubstr("--npus is 0; expected at least 1 NPU"));
  EXPECT_THAT(error_for(ok, 1, -2), HasSubstr("--passes is -2; expected at least 1 pass"));
  EXPECT_THAT(error_for(ok, 1, std::numeric_limits<std::int64_t>::max()), HasSubstr("--passes 9223372036854775807: one "
                                                                                    "rank's trace (1 layers x "
                                                                                    "9223372036854775807 passes) would "
                                                                                    "need more than the"));
  EXPECT_THAT(error_for(ok, std::numeric_limits<std::int64_t>::max(), 1), HasSubstr("--npus 9223372036854775807 x "
                                                                                    "--passes 1: the node ids, which "
                                                                                    "run on across rank files, would "
                                                                                    "not fit in 64 bits"));
  const auto dir = temp_dir("text_errors");
  EXPECT_THAT(error_of([&] {
                tools::convert_text_file((dir / "nope.txt").string(), (dir / "w").string(), {1, 1, 0, {}});
              }),
              HasSubstr("nope.txt: cannot open the text workload: the file does not exist"));
}

}  // namespace
}  // namespace chakrasim::test
