// `chakra inspect`: the figures of hand-built traces and of the reference's traces (checked
// against figures computed independently from the reference's compact dumps), every problem
// on hand-built traces that have it (all reported, not just the first), the checks across the
// ranks of a prefix, and the command line.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "support/test_support.h"
#include "tools/inspect/inspector.h"

namespace chakrasim::test {
namespace {

using chakra::CommType;
using chakra::NodeType;
using chakra::TraceBuilder;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using tools::Problem;

std::vector<std::string> messages(const std::vector<Problem>& problems, Problem::Severity severity) {
  std::vector<std::string> out;
  for (const Problem& p : problems) {
    if (p.severity == severity) out.push_back(p.message);
  }
  return out;
}
std::vector<std::string> errors(const tools::TraceSummary& s) {
  return messages(s.problems, Problem::Severity::kError);
}
std::vector<std::string> warnings(const tools::TraceSummary& s) {
  return messages(s.problems, Problem::Severity::kWarning);
}

// load (2 µs) -> gemm (10 µs) -> ar (1 MiB, group "1") ; gemm2 (30 µs) -ctrl-> ag (64 KiB);
// send 512 B to rank 1; recv 256 B from rank 1. Critical path: gemm2 -> ag = 30 µs over 2 nodes
// (load -> gemm -> ar is 12 µs over 3).
chakra::Trace clean_trace() {
  TraceBuilder b;
  b.mem_load("load", 4096).duration_micros(2);             // 0
  b.comp("gemm", 10, {0});                                 // 1
  b.collective("ar", CommType::kAllReduce, 1 << 20, {1});  // 2
  b.at(2).attr(chakra::make_string("pg_name", "1"));
  b.comp("gemm2", 30);  // 3
  b.node(NodeType::kCommColl, "ag")
      .ctrl_deps({3})
      .is_cpu_op(false)  // 4
      .attr(chakra::make_int64("comm_type", 2))
      .attr(chakra::make_uint64("comm_size", 65536))
      .attr(chakra::make_string("pg_name", "0"));
  b.send("send", 1, 5, 512);                                          // 5
  b.recv("recv", 1, 5, 256);                                          // 6
  b.node(NodeType::kComp, "cpu").is_cpu_op(true).duration_micros(4);  // 7
  return b.trace();
}

TEST(Inspect, FiguresOfAHandBuiltTrace) {
  const tools::TraceSummary s = tools::summarize_trace(clean_trace(), "clean.et", 0, 2);
  EXPECT_TRUE(s.readable);
  EXPECT_EQ(s.version, "0.0.4");
  EXPECT_EQ(s.nodes, 8u);
  EXPECT_THAT(s.nodes_by_type, ElementsAre(Pair("COMM_COLL_NODE", 2), Pair("COMM_RECV_NODE", 1),
                                           Pair("COMM_SEND_NODE", 1), Pair("COMP_NODE", 3), Pair("MEM_LOAD_NODE", 1)));
  EXPECT_EQ(s.micros_by_type.at("COMP_NODE"), 44u);
  EXPECT_EQ(s.micros_by_type.at("MEM_LOAD_NODE"), 2u);
  EXPECT_EQ(s.compute_micros, 44u);
  EXPECT_EQ(s.gpu_compute_micros, 40u);
  EXPECT_EQ(s.cpu_compute_micros, 4u);
  ASSERT_EQ(s.collectives.size(), 2u);
  EXPECT_EQ(s.collectives.at("ALL_REDUCE").count, 1u);
  EXPECT_EQ(s.collectives.at("ALL_REDUCE").bytes, 1u << 20);
  EXPECT_EQ(s.collectives.at("ALL_GATHER").bytes, 65536u);
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.groups.at("").bytes, 65536u);  // "0" is all NPUs
  EXPECT_EQ(s.groups.at("1").bytes, 1u << 20);
  EXPECT_EQ(s.sends.count, 1u);
  EXPECT_EQ(s.sends.bytes, 512u);
  EXPECT_EQ(s.recvs.bytes, 256u);
  ASSERT_TRUE(s.critical_path_micros.has_value());
  EXPECT_EQ(*s.critical_path_micros, 30u);
  EXPECT_EQ(s.critical_path_nodes, 2u);
  EXPECT_THAT(s.problems, ::testing::IsEmpty());
  // The point-to-point operations, keyed as the simulator matches them.
  ASSERT_EQ(s.p2p.size(), 2u);
  EXPECT_EQ(s.p2p[0].src, 0);
  EXPECT_EQ(s.p2p[0].dst, 1);
  EXPECT_EQ(s.p2p[1].src, 1);
  EXPECT_EQ(s.p2p[1].dst, 0);
}

TEST(Inspect, DependencyProblemsAreAllReported) {
  TraceBuilder b;
  b.node(NodeType::kComp, "a").data_deps({1, 1});  // 0: listed twice -> warning
  b.comp("b", 1, {99});                            // 1: missing data parent
  b.node(NodeType::kComp, "c").ctrl_deps({77});    // 2: missing ctrl parent
  b.comp("d", 1, {3});                             // 3: itself
  b.comp("dup", 1);                                // 4
  b.set_next_id(4);
  b.comp("dup again", 1);  // 4 again
  b.set_next_id(4);
  b.comp("dup thrice", 1);  // and again
  const tools::TraceSummary s = tools::summarize_trace(b.trace(), "deps.et");
  EXPECT_THAT(errors(s), ElementsAre("node 4 (\"dup\"): its id appears 3 times; ids must be unique within a file",
                                     "node 1 (\"b\"): has a data dependency on node 99, which is not in the file",
                                     "node 2 (\"c\"): has a control dependency on node 77, which is not in the file",
                                     "node 3 (\"d\"): depends on itself; a trace must be a DAG"));
  EXPECT_THAT(warnings(s), ElementsAre("node 0 (\"a\"): lists data dependency 1 twice (the old Chakra feeder then "
                                       "never issues it)"));
  EXPECT_EQ(s.problems[0].file, "deps.et");
  EXPECT_EQ(s.problems[0].node, 4u);
}

// Two separate cycles (1 <-> 2 and 3 -> 4 -> 5 -> 3) and a node behind one: each cycle is an
// error, and there is no critical path.
TEST(Inspect, EveryCycleIsReported) {
  TraceBuilder b;
  b.comp("root", 1);
  b.comp("x", 1, {0, 2});
  b.comp("y", 1, {1});
  b.comp("p", 1, {5});
  b.node(NodeType::kComp, "q").ctrl_deps({3});
  b.comp("r", 1, {4});
  b.comp("behind", 1, {5});
  const tools::TraceSummary s = tools::summarize_trace(b.trace(), "cycles.et");
  EXPECT_THAT(errors(s), ElementsAre("dependency cycle of 2 nodes: 2 \"y\" -> 1 \"x\" -> 2 \"y\" (2 nodes in all wait "
                                     "on one "
                                     "another); a trace must be a DAG",
                                     "dependency cycle of 3 nodes: 4 \"q\" -> 5 \"r\" -> 3 \"p\" -> 4 \"q\" (3 nodes "
                                     "in "
                                     "all wait on one another); a trace must be a DAG"));
  EXPECT_EQ(s.problems[0].node, 1u);
  EXPECT_FALSE(s.critical_path_micros.has_value());
}

// A chain of 100,000 nodes: no recursion (and its stack limit) in the cycle search or the
// critical path.
TEST(Inspect, DeepChains) {
  constexpr std::uint64_t kNodes = 100000;
  TraceBuilder b;
  b.trace().nodes.reserve(kNodes);
  b.comp("n", 1);
  for (std::uint64_t i = 1; i < kNodes; ++i) b.comp("n", 1, {i - 1});
  const tools::TraceSummary s = tools::summarize_trace(b.trace(), "chain.et");
  EXPECT_EQ(s.critical_path_micros, kNodes);
  EXPECT_EQ(s.critical_path_nodes, kNodes);
}

// Types per docs/chakra-format.md §1.6 as the simulator reads them; every bad attribute of one node.
TEST(Inspect, AttributesOfTheWrongType) {
  TraceBuilder b;
  b.node(NodeType::kCommColl, "bad")
      .attr(chakra::make_string("is_cpu_op", "no"))
      .attr(chakra::make_double("comm_type", 0.0))
      .attr(chakra::make_string("comm_size", "1MB"))
      .attr(chakra::make_int64("pg_name", 3))
      .attr(chakra::make_int64("involved_dim", 1))
      .attr(chakra::make_int64("num_ops", -5))
      .attr(chakra::make_string_list("comm_priority", {"high"}));
  const tools::TraceSummary s = tools::summarize_trace(b.trace(), "types.et");
  EXPECT_THAT(errors(s), ElementsAre("node 0 (\"bad\"): attribute \"is_cpu_op\" holds string_val \"no\"; expected a "
                                     "bool",
                                     "node 0 (\"bad\"): attribute \"comm_type\" holds double_val 0; expected an "
                                     "integer",
                                     "node 0 (\"bad\"): attribute \"comm_size\" holds string_val \"1MB\"; expected a "
                                     "non-negative integer",
                                     "node 0 (\"bad\"): attribute \"comm_priority\" holds string_list; expected an "
                                     "integer",
                                     "node 0 (\"bad\"): attribute \"num_ops\" is -5; expected a non-negative integer",
                                     "node 0 (\"bad\"): attribute \"pg_name\" holds int64_val 3; expected a string "
                                     "(string_val)",
                                     "node 0 (\"bad\"): attribute \"involved_dim\" holds int64_val 1; expected a "
                                     "bool_list"));
}

TEST(Inspect, AttributesRepeatedOrWithoutValue) {
  TraceBuilder b;
  chakra::Attribute empty;
  empty.set_name("note");
  b.node(NodeType::kComp, "c")
      .attr(chakra::make_int64("comm_size", 1))
      .attr(chakra::make_int64("comm_size", 2))
      .attr(empty);
  b.at(0).attr(chakra::make_bool_list("involved_dim", std::vector<bool>(33, true)));
  const tools::TraceSummary s = tools::summarize_trace(b.trace(), "attrs.et");
  EXPECT_THAT(warnings(s), ElementsAre("node 0 (\"c\"): attribute \"comm_size\" appears more than once; readers use "
                                       "the first",
                                       "node 0 (\"c\"): attribute \"note\" has no value"));
  EXPECT_THAT(errors(s), ElementsAre("node 0 (\"c\"): attribute \"involved_dim\" has 33 entries; expected at most 32 "
                                     "dimensions"));
}

TEST(Inspect, WhatEachNodeTypeNeeds) {
  TraceBuilder b;
  b.node(NodeType::kCommColl, "no size").attr(chakra::make_int64("comm_type", 0));  // 0
  b.node(NodeType::kCommColl, "eleven").attr(chakra::make_int64("comm_type", 11));  // 1
  b.collective("cpu", CommType::kAllGather, 8);                                     // 2
  b.at(2).node().mutable_attr(0)->set_bool_val(true);
  b.collective("group", CommType::kAllToAll, 8);  // 3
  b.at(3).attr(chakra::make_string("pg_name", "tp"));
  b.node(NodeType::kCommColl, "bcast").attr(chakra::make_int64("comm_type", 5));  // 4: fine
  b.node(NodeType::kCommSend, "send");                                            // 5
  b.node(NodeType::kCommRecv, "recv").attr(chakra::make_int32("comm_src", 1));    // 6
  b.node(NodeType::kMemStore, "store");                                           // 7
  b.node(NodeType::kInvalid, "invalid");                                          // 8
  b.node_of_raw_type(9, "batch");                                                 // 9
  const tools::TraceSummary s = tools::summarize_trace(b.trace(), "needs.et");
  EXPECT_THAT(errors(s), ElementsAre("node 0 (\"no size\"): missing the attribute \"comm_size\"",
                                     "node 1 (\"eleven\"): comm_type 11 is not a Chakra collective; expected 0 to 9 "
                                     "(ALL_REDUCE to BARRIER)",
                                     "node 1 (\"eleven\"): missing the attribute \"comm_size\"",
                                     "node 2 (\"cpu\"): a collective cannot be a CPU op (is_cpu_op is true)",
                                     "node 3 (\"group\"): pg_name \"tp\" is not a communicator group id; expected a "
                                     "decimal integer (\"\" or \"0\" "
                                     "for all NPUs)",
                                     "node 5 (\"send\"): missing the attribute \"comm_dst\"",
                                     "node 5 (\"send\"): missing the attribute \"comm_size\"",
                                     "node 5 (\"send\"): missing the attribute \"comm_tag\"",
                                     "node 6 (\"recv\"): missing the attribute \"comm_size\"",
                                     "node 6 (\"recv\"): missing the attribute \"comm_tag\"",
                                     "node 7 (\"store\"): missing the attribute \"tensor_size\"",
                                     "node 9 (\"batch\"): unknown node type 9; expected 0 to 7 (INVALID_NODE to "
                                     "COMM_COLL_NODE)"));
  EXPECT_THAT(warnings(s), ElementsAre("node 8 (\"invalid\"): INVALID_NODE: the simulator skips it"));
  EXPECT_EQ(s.nodes_by_type.at("type 9"), 1u);
}

// With the rank and the number of NPUs known (a prefix), peers are checked too.
TEST(Inspect, PeersOfARank) {
  TraceBuilder b;
  b.send("to 4", 4, 0, 8);                                                // 0: beyond 0..3
  b.send("to self", 2, 0, 8);                                             // 1
  b.send("as rank 1", 0, 0, 8).attr(chakra::make_int32("comm_src", 1));   // 2
  b.recv("for rank 0", 1, 0, 8).attr(chakra::make_int32("comm_dst", 0));  // 3
  b.recv("from -1", -1, 0, 8);                                            // 4
  const tools::TraceSummary s = tools::summarize_trace(b.trace(), "p.2.et", 2, 4);
  EXPECT_THAT(errors(s), ElementsAre("node 0 (\"to 4\"): comm_dst is 4; expected a rank from 0 to 3",
                                     "node 1 (\"to self\"): comm_dst is its own rank 2; expected another rank",
                                     "node 2 (\"as rank 1\"): comm_src is 1 in the file of rank 2; expected 2",
                                     "node 3 (\"for rank 0\"): comm_dst is 0 in the file of rank 2; expected 2",
                                     "node 4 (\"from -1\"): comm_src is -1; expected a rank from 0 to 3"));
}

TEST(Inspect, EmptyTraceIsAWarning) {
  const tools::TraceSummary s = tools::summarize_trace(TraceBuilder().trace(), "empty.et");
  EXPECT_THAT(warnings(s), ElementsAre("the trace has no nodes (ASTRA-sim rejects an empty trace)"));
  EXPECT_EQ(s.critical_path_micros, 0u);
}

void write_ranks(const std::string& prefix, const std::vector<chakra::Trace>& ranks) {
  for (std::size_t r = 0; r < ranks.size(); ++r) chakra::write_trace(chakra::rank_path(prefix, r), ranks[r]);
}

chakra::Trace collectives(std::initializer_list<std::tuple<CommType, std::uint64_t, std::string>> calls) {
  TraceBuilder b;
  for (const auto& [type, bytes, pg] : calls) {
    chakra::Node& n = b.collective("c", type, bytes);
    if (!pg.empty()) *n.add_attr() = chakra::make_string("pg_name", pg);
  }
  return b.trace();
}

std::vector<std::string> across(const tools::Inspection& in, Problem::Severity severity) {
  return messages(in.problems, severity);
}

// Rank 2 gathers where ranks 0, 1, 3 reduce; rank 3 has one collective fewer on group "7" than
// rank 1; groups "5" (ranks 0, 1) agree; ranks 2 and 3 use group "0", i.e. all NPUs.
TEST(Inspect, RanksWhoseCollectivesDiffer) {
  const auto dir = temp_dir("inspect_coll");
  const std::string prefix = (dir / "t").string();
  const auto ar = CommType::kAllReduce;
  write_ranks(prefix, {collectives({{ar, 64, ""}, {ar, 8, "5"}}),
                       collectives({{ar, 64, ""}, {ar, 8, "5"}, {ar, 4, "7"}, {ar, 4, "7"}}),
                       collectives({{CommType::kAllGather, 64, "0"}}), collectives({{ar, 64, "0"}, {ar, 4, "7"}})});
  const tools::Inspection in = tools::inspect(prefix);
  ASSERT_EQ(in.ranks.size(), 4u);
  EXPECT_THAT(across(in, Problem::Severity::kError), ElementsAre("rank 2's collectives on all NPUs differ from rank "
                                                                 "0's (and 2 other ranks'): its collective #1 is "
                                                                 "ALL_GATHER of "
                                                                 "64 B (node 0) where rank 0 has ALL_REDUCE of 64 B "
                                                                 "(node 0); the run would hang",
                                                                 "rank 3's collectives on group \"7\" differ from rank "
                                                                 "1's (and 0 other ranks'): it has 1 collectives, rank "
                                                                 "1 has "
                                                                 "2 (the first 1 agree); the run would hang"));
  EXPECT_EQ(in.problems[0].file, chakra::rank_path(prefix, 2));
  EXPECT_EQ(in.errors(), 2u);
}

// Ranks with the same odd sequence share one problem; the reference is the most common sequence.
TEST(Inspect, RanksSharingADifferentSequence) {
  const auto dir = temp_dir("inspect_coll_shared");
  const std::string prefix = (dir / "t").string();
  const auto ar = collectives({{CommType::kAllReduce, 64, ""}});
  const auto ag = collectives({{CommType::kAllGather, 64, ""}});
  write_ranks(prefix, {ag, ar, ar, ag, ar});
  const tools::Inspection in = tools::inspect(prefix);
  EXPECT_THAT(across(in, Problem::Severity::kError), ElementsAre("the collectives of ranks 0, 3 (each) on all NPUs "
                                                                 "differ from rank 1's (and 2 other ranks'): its "
                                                                 "collective #1 "
                                                                 "is ALL_GATHER of 64 B (node 0) where rank 1 has "
                                                                 "ALL_REDUCE of 64 B (node 0); the run would hang"));
}

// Messages match on (source, destination, tag, size): the 4096 B receive finds no 4096 B send
// (rank 0 sends 2048 B), and rank 1 sends a message nobody receives.
TEST(Inspect, UnmatchedSendsAndReceives) {
  const auto dir = temp_dir("inspect_p2p");
  const std::string prefix = (dir / "t").string();
  TraceBuilder r0, r1;
  r0.send("s", 1, 3, 2048);
  r0.send("ok", 1, 4, 16);
  r1.recv("r", 0, 3, 4096);
  r1.recv("ok", 0, 4, 16);
  r1.send("lost", 0, 9, 1);
  write_ranks(prefix, {r0.trace(), r1.trace()});
  const tools::Inspection in = tools::inspect(prefix);
  EXPECT_THAT(across(in, Problem::Severity::kError), ElementsAre("rank 1 receives 1 message(s) of 4096 B from rank 0 "
                                                                 "with tag 3 (first unmatched: node 0), but rank 0 "
                                                                 "sends 0; "
                                                                 "the receive waits forever"));
  EXPECT_THAT(across(in, Problem::Severity::kWarning), ElementsAre("rank 0 sends 1 message(s) of 2048 B to rank 1 with "
                                                                   "tag 3 (first unmatched: node 0), but rank 1 "
                                                                   "receives 0",
                                                                   "rank 1 sends 1 message(s) of 1 B to rank 0 with "
                                                                   "tag 9 (first unmatched: node 2), but rank 0 "
                                                                   "receives 0"));
}

TEST(Inspect, RankFilesWithAGapOrUnreadable) {
  const auto dir = temp_dir("inspect_files");
  const std::string prefix = (dir / "t").string();
  write_ranks(prefix, {collectives({{CommType::kAllReduce, 8, ""}})});
  std::ofstream(chakra::rank_path(prefix, 1), std::ios::binary) << std::string("\x05\x0a\x03", 3);  // truncated
  chakra::write_trace(chakra::rank_path(prefix, 3), collectives({{CommType::kAllReduce, 8, ""}}));
  const tools::Inspection in = tools::inspect(prefix);
  ASSERT_EQ(in.ranks.size(), 2u);
  EXPECT_TRUE(in.ranks[0].readable);
  EXPECT_FALSE(in.ranks[1].readable);
  ASSERT_EQ(in.ranks[1].problems.size(), 1u);
  // The problem names the file once, in its own field.
  EXPECT_EQ(in.ranks[1].problems[0].file, chakra::rank_path(prefix, 1));
  EXPECT_THAT(in.ranks[1].problems[0].message, ::testing::StartsWith("byte 0: message 0 says it is 5 bytes long"));
  EXPECT_THAT(across(in, Problem::Severity::kError),
              ElementsAre(chakra::rank_path(prefix, 3) + " exists but " + chakra::rank_path(prefix, 2) +
                          " does not: rank files must be numbered 0 to N-1; only ranks 0 to 1 were read"));
  EXPECT_THAT(error_of([&] { tools::inspect((dir / "nothing").string()); }),
              HasSubstr("nothing: no such file, and no " + (dir / "nothing").string() + ".0.et"));
}

TEST(Inspect, TotalsOverRanks) {
  tools::Inspection in;
  in.ranks.push_back(tools::summarize_trace(clean_trace(), "a"));
  in.ranks.push_back(tools::summarize_trace(collectives({{CommType::kAllReduce, 100, ""}}), "b"));
  const tools::TraceSummary t = tools::totals(in);
  EXPECT_EQ(t.nodes, 9u);
  EXPECT_EQ(t.collectives.at("ALL_REDUCE").count, 2u);
  EXPECT_EQ(t.collectives.at("ALL_REDUCE").bytes, (1u << 20) + 100);
  EXPECT_EQ(t.groups.at("").bytes, 65536u + 100);
  EXPECT_EQ(t.critical_path_micros, 30u);  // the longest rank's
}

// ASTRA-sim's microbenchmarks: one collective of 1 MiB per rank, nothing wrong.
TEST(Inspect, ReferenceMicrobenchmarks) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const std::map<std::string, std::string> kinds = {{"all_reduce", "ALL_REDUCE"},
                                                    {"all_gather", "ALL_GATHER"},
                                                    {"reduce_scatter", "REDUCE_SCATTER"},
                                                    {"all_to_all", "ALL_TO_ALL"}};
  for (const auto& [collective, kind] : kinds) {
    for (std::size_t npus : {4, 8, 16}) {
      const auto prefix =
          ref / "traces" / "microbenchmarks" / collective / (std::to_string(npus) + "npus_1MB") / collective;
      const tools::Inspection in = tools::inspect(prefix.string());
      ASSERT_EQ(in.ranks.size(), npus) << prefix;
      EXPECT_EQ(in.errors() + in.warnings(), 0u) << prefix;
      for (const tools::TraceSummary& r : in.ranks) {
        EXPECT_EQ(r.version, "0.0.4");
        EXPECT_EQ(r.nodes, 1u);
        ASSERT_EQ(r.collectives.count(kind), 1u) << prefix;
        EXPECT_EQ(r.collectives.at(kind).bytes, 1u << 20);
        EXPECT_EQ(r.groups.at("").count, 1u);
        EXPECT_EQ(r.critical_path_micros, 0u);
        EXPECT_EQ(r.critical_path_nodes, 1u);
      }
      EXPECT_EQ(tools::totals(in).collectives.at(kind).bytes, npus << 20);
    }
  }
}

// The text converter's goldens (both ranks identical). Expected figures computed independently
// from the reference's compact dumps (X.0.dump.txt): nodes, COMP µs, collectives (count,
// bytes), critical path (µs, nodes).
TEST(Inspect, ReferenceTextConverterGoldens) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  struct Expected {
    std::uint64_t nodes, comp, comp_micros;
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> collectives;
    std::uint64_t path_micros, path_nodes;
  };
  const std::map<std::string, Expected> goldens = {
      {"data3", {22, 16, 356, {{"ALL_GATHER", {2, 600}}, {"ALL_REDUCE", {4, 600}}}, 356, 18}},
      {"datanone", {14, 10, 170, {{"ALL_REDUCE", {2, 0}}, {"REDUCE_SCATTER", {2, 400}}}, 170, 12}},
      {"dlrm", {64, 46, 102756, {{"ALL_REDUCE", {14, 6383616}}, {"ALL_TO_ALL", {4, 393216}}}, 102756, 46}},
      {"hdm2", {22, 12, 192, {{"ALL_GATHER", {4, 6000}}, {"ALL_REDUCE", {6, 11000}}}, 192, 18}},
      {"hmd2", {22, 12, 192, {{"ALL_GATHER", {4, 6000}}, {"ALL_REDUCE", {6, 11000}}}, 192, 18}},
      {"micro", {4, 0, 0, {{"ALL_REDUCE", {2, 2097152}}, {"ALL_TO_ALL", {2, 4096}}}, 0, 1}},
      {"model3", {28, 18, 378, {{"ALL_GATHER", {6, 12000}}, {"ALL_REDUCE", {4, 10400}}}, 378, 24}},
  };
  for (const auto& [name, e] : goldens) {
    const tools::Inspection in = tools::inspect((ref / "golden" / "text_converter" / name).string());
    ASSERT_EQ(in.ranks.size(), 2u) << name;
    EXPECT_EQ(in.errors() + in.warnings(), 0u) << name;
    for (const tools::TraceSummary& r : in.ranks) {
      EXPECT_EQ(r.nodes, e.nodes) << name;
      EXPECT_EQ(r.nodes_by_type.count("COMP_NODE") ? r.nodes_by_type.at("COMP_NODE") : 0u, e.comp) << name;
      EXPECT_EQ(r.compute_micros, e.comp_micros) << name;
      EXPECT_EQ(r.gpu_compute_micros, e.comp_micros) << name;
      std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> got;
      for (const auto& [k, v] : r.collectives) got[k] = {v.count, v.bytes};
      EXPECT_EQ(got, e.collectives) << name;
      EXPECT_EQ(r.critical_path_micros, e.path_micros) << name;
      EXPECT_EQ(r.critical_path_nodes, e.path_nodes) << name;
    }
  }
}

// Other reference traces: the custom ring all-reduce's sends and receives all match across its
// 8 ranks (14 of each per rank, 131072 B); the PyTorch converter's SendRecv node lacks what the
// simulator needs; the generator's send family likewise, and its BARRIER is unsupported.
TEST(Inspect, OtherReferenceTraces) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const tools::Inspection custom = tools::inspect(
      (ref / "traces" / "custom_collectives" / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce").string());
  ASSERT_EQ(custom.ranks.size(), 8u);
  EXPECT_EQ(custom.errors() + custom.warnings(), 0u);
  EXPECT_EQ(custom.ranks[5].sends.count, 14u);
  EXPECT_EQ(custom.ranks[5].sends.bytes, 14u * 131072);
  EXPECT_EQ(custom.ranks[5].recvs.count, 14u);
  EXPECT_EQ(custom.ranks[5].critical_path_micros, 49u);
  EXPECT_EQ(custom.ranks[5].critical_path_nodes, 35u);

  const tools::Inspection torch =
      tools::inspect((ref / "golden" / "pytorch_converter" / "synthetic_etplus.0.et").string());
  ASSERT_EQ(torch.ranks.size(), 1u);
  const tools::TraceSummary& t = torch.ranks[0];
  EXPECT_EQ(t.nodes, 10u);
  EXPECT_EQ(t.compute_micros, 90u);
  EXPECT_EQ(t.cpu_compute_micros, 50u);
  EXPECT_EQ(t.collectives.at("ALL_REDUCE").bytes, 1024u);
  EXPECT_EQ(t.critical_path_micros, 107u);
  EXPECT_THAT(errors(t), ElementsAre(HasSubstr("missing the attribute \"comm_dst\""), HasSubstr("missing the attribute "
                                                                                                "\"comm_tag\"")));

  const auto generator = ref / "golden" / "generator";
  EXPECT_EQ(tools::inspect((generator / "one_comm_send_node").string()).errors(), 6u);
  EXPECT_EQ(tools::inspect((generator / "one_metadata_node_all_types").string()).errors(), 0u);
  // Barriers run (as zero-byte all-reduces), so the reference's BARRIER traces are fine.
  EXPECT_EQ(tools::inspect((generator / "BARRIER").string()).errors(), 0u);
}

// The command line: text for a person, exit 1 on errors, --json, --help with an example.
// Groups sort by number (2 before 10) and a long list folds; sizes and times are in human units.
TEST(Inspect, HumanUnitsNumericGroupsFoldedLists) {
  const auto dir = temp_dir("inspect_human");
  std::vector<chakra::Trace> ranks(1);
  TraceBuilder b;
  for (const char* group : {"10", "2", "1", "3", "4", "5", "6", "7", "8", "9"}) {
    b.collective("c", CommType::kAllReduce, 64 << 20);
    b.at(b.trace().nodes.size() - 1).attr(chakra::make_string("pg_name", group));
  }
  b.comp("long", 2500);
  const std::string path = (dir / "groups.et").string();
  chakra::write_trace(path, b.trace());
  const CommandResult r = run_binary({"chakra", "inspect", path});
  EXPECT_THAT(r.out, HasSubstr("  by group        group 1 1 (64.0 MiB), group 2 1 (64.0 MiB), group 3 1 (64.0 MiB), "
                               "group 4 1 (64.0 MiB), group 5 1 (64.0 MiB), group 6 1 (64.0 MiB), group 7 1 "
                               "(64.0 MiB), group 8 1 (64.0 MiB), and 2 more (--json lists them all)\n"));
  EXPECT_THAT(r.out, HasSubstr("  collectives     ALL_REDUCE 10 (640.0 MiB)\n"));
  EXPECT_THAT(r.out, HasSubstr("  compute         2.500 ms (GPU 2.500 ms, CPU 0 ns)\n"));
}

TEST(Inspect, CommandLine) {
  const auto dir = temp_dir("inspect_cli");
  const std::string good = (dir / "good").string();
  write_ranks(good, {collectives({{CommType::kAllReduce, 64, ""}}), collectives({{CommType::kAllReduce, 64, ""}})});
  CommandResult r = run_binary({"chakra", "inspect", good});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr(good + ": 2 ranks (.0.et to .1.et)\n"), HasSubstr("\n  0-1  "),
                           HasSubstr("  collectives     ALL_REDUCE 2 (128 bytes)\n"), HasSubstr("no problems\n")));

  r = run_binary({"chakra", "inspect", chakra::rank_path(good, 1)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr(chakra::rank_path(good, 1) + ": 1 node, version \"0.0.4\"\n"), HasSubstr("  "
                                                                                                              "critical"
                                                                                                              " path   "
                                                                                                              "0 ns "
                                                                                                              "over 1 "
                                                                                                              "node"
                                                                                                              "\n")));

  const std::string bad = (dir / "bad.et").string();
  TraceBuilder b;
  b.comp("a", 1, {5});
  b.node(NodeType::kComp, "b").data_deps({0, 0});
  chakra::write_trace(bad, b.trace());
  r = run_binary({"chakra", "inspect", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, AllOf(HasSubstr("1 error, 1 warning:\n"),
                           HasSubstr("  error: " + bad + ": node 0 (\"a\"): has a data dependency on node 5"),
                           HasSubstr("  warning: " + bad + ": node 1 (\"b\"): lists data dependency 0 twice")));

  r = run_binary({"chakra", "inspect", bad, "--json"});
  EXPECT_EQ(r.exit_code, 1);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["errors"], 1);
  EXPECT_EQ(j["warnings"], 1);
  EXPECT_EQ(j["prefix"], false);
  EXPECT_EQ(j["ranks"][0]["nodes"], 2);
  EXPECT_EQ(j["ranks"][0]["compute_micros"]["total"], 1);
  EXPECT_EQ(j["ranks"][0]["problems"][0]["node"], 0);
  EXPECT_EQ(j["ranks"][0]["problems"][0]["severity"], "error");
  EXPECT_EQ(j["ranks"][0]["critical_path"]["micros"], 1);
  EXPECT_EQ(j["totals"]["nodes_by_type"]["COMP_NODE"], 2);

  r = run_binary({"chakra", "inspect", good, "--json"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["totals"]["groups"][""]["bytes"], 128);
  // --json FILE writes the file, as run's --json does (folders created first); the older
  // `--json PREFIX` order still means JSON on standard output.
  const auto json_file = dir / "sub" / "inspect.json";
  r = run_binary({"chakra", "inspect", good, "--json", json_file.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(nlohmann::json::parse(file_bytes(json_file))["totals"]["groups"][""]["bytes"], 128);
  r = run_binary({"chakra", "inspect", "--json", good});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["totals"]["groups"][""]["bytes"], 128);
  r = run_binary({"chakra", "inspect"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: inspect: a .et file or a PREFIX is required"));

  r = run_binary({"chakra", "inspect", (dir / "nothing").string()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("no such file, and no"));

  r = run_binary({"chakra", "inspect", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("Examples:\n  chakrasim chakra inspect traces/all_reduce.0.et"));
}

}  // namespace
}  // namespace chakrasim::test
