// Covers Graph::build (chakra/graph.h): id ordering, the union of data and control dependencies,
// the CSR child lists, the decoded OpAttrs, the type/name tables and every validation error.
#include "chakra/graph.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

#include "chakra/attributes.h"
#include "core/error.h"

namespace chakrasim::chakra {
namespace {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ::chakrasim::test::error_of;

Node& add_node(Trace& t, std::uint64_t id, const std::string& name, std::vector<std::uint64_t> data = {},
               std::vector<std::uint64_t> ctrl = {}) {
  Node& n = t.nodes.emplace_back();
  n.set_id(id);
  n.set_name(name);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  for (auto d : data) n.add_data_deps(d);
  for (auto c : ctrl) n.add_ctrl_deps(c);
  return n;
}

std::vector<std::uint64_t> child_ids(const Graph& g, std::uint32_t i) {
  std::vector<std::uint64_t> out;
  for (std::uint32_t c : g.children(i)) out.push_back(g.id(c));
  return out;
}

TEST(GraphBuild, EmptyTraceGivesAnEmptyGraph) {
  const Graph g = Graph::build(Trace{}, "empty.et");
  EXPECT_EQ(g.size(), 0u);
  EXPECT_EQ(g.source(), "empty.et");
  EXPECT_EQ(g.string(0), "");
}

TEST(GraphBuild, NodesAreSortedByIdRegardlessOfFileOrder) {
  Trace t;
  add_node(t, 30, "c", {10});
  add_node(t, 10, "a");
  add_node(t, 1000000000000, "d", {20});
  add_node(t, 20, "b", {10});
  t.nodes[1].set_duration_micros(7);
  t.nodes[1].set_type(ChakraProtoMsg::MEM_LOAD_NODE);
  const Graph g = Graph::build(t, "order.et");
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g.id(0), 10u);
  EXPECT_EQ(g.id(1), 20u);
  EXPECT_EQ(g.id(2), 30u);
  EXPECT_EQ(g.id(3), 1000000000000u);
  EXPECT_EQ(g.name(0), "a");
  EXPECT_EQ(g.name(1), "b");
  EXPECT_EQ(g.name(2), "c");
  EXPECT_EQ(g.name(3), "d");
  // Per-node data follows the node, not its file position.
  EXPECT_EQ(g.duration_micros(0), 7u);
  EXPECT_EQ(g.type(0), NodeType::kMemLoad);
  EXPECT_EQ(g.type(1), NodeType::kComp);
  EXPECT_EQ(g.parent_count(0), 0u);
  EXPECT_EQ(g.parent_count(3), 1u);
  EXPECT_THAT(child_ids(g, 0), ElementsAre(20u, 30u));
  EXPECT_THAT(child_ids(g, 1), ElementsAre(1000000000000u));
  EXPECT_THAT(child_ids(g, 2), IsEmpty());
}

TEST(GraphBuild, DependenciesAreTheUnionOfDataAndCtrlWithDuplicatesCollapsed) {
  Trace t;
  add_node(t, 0, "root");
  add_node(t, 1, "x", {0});
  add_node(t, 2, "y", {}, {0});
  // Node 3: data {1, 2, 1}, ctrl {2, 0}: three distinct parents 0, 1, 2.
  add_node(t, 3, "z", {1, 2, 1}, {2, 0});
  // Node 4: the same parent as data and ctrl dependency counts once.
  add_node(t, 4, "w", {3}, {3});
  const Graph g = Graph::build(t, "deps.et");
  EXPECT_EQ(g.parent_count(0), 0u);
  EXPECT_EQ(g.parent_count(1), 1u);
  EXPECT_EQ(g.parent_count(2), 1u);
  EXPECT_EQ(g.parent_count(3), 3u);
  EXPECT_EQ(g.parent_count(4), 1u);
  EXPECT_THAT(child_ids(g, 0), ElementsAre(1u, 2u, 3u));
  EXPECT_THAT(child_ids(g, 1), ElementsAre(3u));
  EXPECT_THAT(child_ids(g, 2), ElementsAre(3u));
  EXPECT_THAT(child_ids(g, 3), ElementsAre(4u));
  EXPECT_THAT(child_ids(g, 4), IsEmpty());
}

TEST(GraphBuild, ChildrenAreIndicesIntoTheSortedArrays) {
  Trace t;
  add_node(t, 9, "late", {5});
  add_node(t, 5, "early");
  const Graph g = Graph::build(t, "idx.et");
  ASSERT_EQ(g.children(0).size(), 1u);
  EXPECT_EQ(g.children(0)[0], 1u);  // index, not id
  EXPECT_EQ(g.parent_count(1), 1u);
}

TEST(GraphBuild, CollectiveAttributesAreDecoded) {
  Trace t;
  Node& n = add_node(t, 0, "ar");
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  *n.add_attr() = make_bool("is_cpu_op", false);
  *n.add_attr() = make_int64("comm_type", static_cast<std::int64_t>(CommType::kReduceScatter));
  *n.add_attr() = make_uint64("comm_size", 1ull << 33);
  *n.add_attr() = make_int32("comm_priority", -4);
  *n.add_attr() = make_string("pg_name", "7");
  *n.add_attr() = make_bool_list("involved_dim", {true, false, true, true});
  const Graph g = Graph::build(t, "attrs.et");
  ASSERT_TRUE(g.has_attrs(0));
  const OpAttrs& a = g.attrs(0);
  EXPECT_EQ(a.comm_type, 7);
  EXPECT_EQ(a.comm_size, 1ull << 33);
  EXPECT_EQ(a.comm_priority, -4);
  EXPECT_EQ(g.string(a.pg_name), "7");
  EXPECT_EQ(a.pg_name, 1u);
  EXPECT_EQ(a.involved_dims, 0b1101u);
  EXPECT_EQ(a.present, OpAttrs::kCommType | OpAttrs::kCommSize | OpAttrs::kPgName | OpAttrs::kInvolvedDim);
  EXPECT_TRUE(a.has(OpAttrs::kCommType));
  EXPECT_TRUE(a.has(OpAttrs::kInvolvedDim));
  EXPECT_FALSE(a.has(OpAttrs::kCommSrc));
  EXPECT_FALSE(a.has(OpAttrs::kNumOps));
  EXPECT_EQ(a.comm_src, 0);
  EXPECT_EQ(a.num_ops, 0u);
  EXPECT_FALSE(g.is_cpu_op(0));
  EXPECT_EQ(g.type(0), NodeType::kCommColl);
}

TEST(GraphBuild, PointToPointAndComputeAttributesAreDecoded) {
  Trace t;
  Node& send = add_node(t, 1, "send");
  send.set_type(ChakraProtoMsg::COMM_SEND_NODE);
  *send.add_attr() = make_int32("comm_src", 2);
  *send.add_attr() = make_int32("comm_dst", 3);
  *send.add_attr() = make_int32("comm_tag", 55);
  *send.add_attr() = make_int64("comm_size", 4096);
  Node& comp = add_node(t, 2, "gemm");
  *comp.add_attr() = make_uint64("num_ops", 1000000);
  *comp.add_attr() = make_uint64("tensor_size", 2048);
  *comp.add_attr() = make_bool("is_cpu_op", true);
  const Graph g = Graph::build(t, "p2p.et");
  const OpAttrs& s = g.attrs(0);
  EXPECT_EQ(s.comm_src, 2);
  EXPECT_EQ(s.comm_dst, 3);
  EXPECT_EQ(s.comm_tag, 55);
  EXPECT_EQ(s.comm_size, 4096u);
  EXPECT_EQ(s.present, OpAttrs::kCommSrc | OpAttrs::kCommDst | OpAttrs::kCommTag | OpAttrs::kCommSize);
  const OpAttrs& c = g.attrs(1);
  EXPECT_EQ(c.num_ops, 1000000u);
  EXPECT_EQ(c.tensor_size, 2048u);
  EXPECT_EQ(c.present, OpAttrs::kNumOps | OpAttrs::kTensorSize);
  EXPECT_TRUE(g.is_cpu_op(1));
  EXPECT_FALSE(g.is_cpu_op(0));  // absent is_cpu_op is false
}

TEST(GraphBuild, PresentZeroValuesSetTheirPresenceBit) {
  Trace t;
  Node& n = add_node(t, 0, "ar");
  *n.add_attr() = make_int64("comm_type", 0);
  *n.add_attr() = make_bool_list("involved_dim", {false, false});
  const Graph g = Graph::build(t, "zero.et");
  ASSERT_TRUE(g.has_attrs(0));
  EXPECT_TRUE(g.attrs(0).has(OpAttrs::kCommType));
  EXPECT_TRUE(g.attrs(0).has(OpAttrs::kInvolvedDim));
  EXPECT_EQ(g.attrs(0).involved_dims, 0u);
  EXPECT_FALSE(g.attrs(0).has(OpAttrs::kCommSize));
}

TEST(GraphBuild, NodesWithoutModelAttributesShareTheEmptyRecord) {
  Trace t;
  Node& plain = add_node(t, 0, "plain");
  *plain.add_attr() = make_bool("is_cpu_op", true);  // read into is_cpu_op, not OpAttrs
  *plain.add_attr() = make_string("op_schema", "aten::mm");
  add_node(t, 1, "bare");
  Node& prio = add_node(t, 2, "prio");
  *prio.add_attr() = make_int64("comm_priority", 5);  // no presence bit, but still a record
  const Graph g = Graph::build(t, "none.et");
  EXPECT_FALSE(g.has_attrs(0));
  EXPECT_FALSE(g.has_attrs(1));
  EXPECT_EQ(g.attrs(0).present, 0);
  EXPECT_EQ(g.attrs(1).comm_size, 0u);
  EXPECT_EQ(&g.attrs(0), &g.attrs(1));
  EXPECT_TRUE(g.is_cpu_op(0));
  ASSERT_TRUE(g.has_attrs(2));
  EXPECT_EQ(g.attrs(2).comm_priority, 5);
  EXPECT_EQ(g.attrs(2).present, 0);
}

TEST(GraphBuild, PgNamesAreInternedInFirstSeenOrder) {
  Trace t;
  *add_node(t, 5, "a").add_attr() = make_string("pg_name", "2");
  *add_node(t, 1, "b").add_attr() = make_string("pg_name", "1");
  *add_node(t, 3, "c").add_attr() = make_string("pg_name", "2");
  *add_node(t, 4, "d").add_attr() = make_string("pg_name", "");
  const Graph g = Graph::build(t, "pg.et");
  // Sorted: ids 1 ("1"), 3 ("2"), 4 (""), 5 ("2"); interning follows id order.
  EXPECT_EQ(g.attrs(0).pg_name, 1u);
  EXPECT_EQ(g.attrs(1).pg_name, 2u);
  EXPECT_EQ(g.attrs(2).pg_name, 0u);  // "" is index 0, yet present
  EXPECT_TRUE(g.attrs(2).has(OpAttrs::kPgName));
  EXPECT_EQ(g.attrs(3).pg_name, 2u);
  EXPECT_EQ(g.string(0), "");
  EXPECT_EQ(g.string(1), "1");
  EXPECT_EQ(g.string(2), "2");
}

TEST(GraphBuild, FeederConversionsApplyToModelAttributes) {
  Trace t;
  Node& n = add_node(t, 0, "ar");
  Attribute size;
  size.set_name("comm_size");
  size.set_fixed64_val(123);
  *n.add_attr() = size;
  *n.add_attr() = make_bool("comm_type", true);  // bool counts as an integer
  *n.add_attr() = make_int64("is_cpu_op", 1);    // and an integer as a bool
  const Graph g = Graph::build(t, "conv.et");
  EXPECT_EQ(g.attrs(0).comm_size, 123u);
  EXPECT_EQ(g.attrs(0).comm_type, 1);
  EXPECT_TRUE(g.is_cpu_op(0));
}

TEST(GraphBuild, RawTypeKeepsValuesOutsideTheEnum) {
  Trace t;
  add_node(t, 0, "future").set_type(static_cast<ChakraProtoMsg::NodeType>(12));
  const Graph g = Graph::build(t, "raw.et");
  EXPECT_EQ(g.raw_type(0), 12u);
  EXPECT_STREQ(node_type_name(g.raw_type(0)), "an unknown node type");
}

TEST(GraphNames, NodeAndCollectiveTypeNames) {
  EXPECT_STREQ(node_type_name(0), "INVALID_NODE");
  EXPECT_STREQ(node_type_name(4), "COMP_NODE");
  EXPECT_STREQ(node_type_name(7), "COMM_COLL_NODE");
  EXPECT_STREQ(node_type_name(8), "an unknown node type");
  EXPECT_STREQ(comm_type_name(0), "ALL_REDUCE");
  EXPECT_STREQ(comm_type_name(6), "ALL_TO_ALL");
  EXPECT_STREQ(comm_type_name(9), "BARRIER");
  EXPECT_STREQ(comm_type_name(10), "an unknown collective type");
  EXPECT_STREQ(comm_type_name(-1), "an unknown collective type");
  // The enums match the wire values of et_def.proto.
  EXPECT_EQ(static_cast<int>(NodeType::kCommColl), ChakraProtoMsg::COMM_COLL_NODE);
  EXPECT_EQ(static_cast<int>(CommType::kReduceScatter), ChakraProtoMsg::REDUCE_SCATTER);
  EXPECT_EQ(static_cast<int>(CommType::kBarrier), ChakraProtoMsg::BARRIER);
}

TEST(GraphErrors, DuplicateIds) {
  Trace t;
  add_node(t, 7, "first");
  add_node(t, 3, "other");
  add_node(t, 7, "second");
  const std::string msg = error_of([&] { Graph::build(t, "dup.et"); });
  EXPECT_THAT(msg, HasSubstr("dup.et"));
  EXPECT_THAT(msg, HasSubstr("node id 7 appears twice"));
}

TEST(GraphErrors, DataDependencyOnAMissingId) {
  Trace t;
  add_node(t, 1, "root");
  add_node(t, 2, "needs_42", {1, 42});
  const std::string msg = error_of([&] { Graph::build(t, "miss.et"); });
  EXPECT_THAT(msg, HasSubstr("miss.et: node 2 (\"needs_42\") has a data dependency on node 42, which is not in the "
                             "file"));
}

TEST(GraphErrors, CtrlDependencyOnAMissingId) {
  Trace t;
  add_node(t, 1, "root");
  add_node(t, 2, "ctl", {1}, {99});
  const std::string msg = error_of([&] { Graph::build(t, "miss.et"); });
  EXPECT_THAT(msg, HasSubstr("miss.et: node 2 (\"ctl\") has a control dependency on node 99"));
  EXPECT_THAT(msg, HasSubstr("not in the file"));
}

TEST(GraphErrors, SelfDependency) {
  Trace t;
  add_node(t, 4, "me", {}, {4});
  const std::string msg = error_of([&] { Graph::build(t, "self.et"); });
  EXPECT_THAT(msg, HasSubstr("self.et: node 4 (\"me\") depends on itself"));
}

// The ids of "of N nodes: a "x" -> b "y" -> ... -> a "x"" in a cycle message.
std::vector<std::uint64_t> cycle_ids(const std::string& msg) {
  std::vector<std::uint64_t> ids;
  const auto start = msg.find("nodes: ");
  if (start == std::string::npos) return ids;
  const auto end = msg.find(';', start);
  std::istringstream in(msg.substr(start + 7, end - start - 7));
  std::string token;
  while (in >> token) {
    if (std::isdigit(static_cast<unsigned char>(token[0]))) ids.push_back(std::stoull(token));
  }
  return ids;
}

TEST(GraphErrors, TwoNodeCycle) {
  Trace t;
  add_node(t, 5, "a", {6});
  add_node(t, 6, "b", {5});
  const std::string msg = error_of([&] { Graph::build(t, "cyc.et"); });
  EXPECT_THAT(msg, HasSubstr("cyc.et: dependency cycle of 2 nodes"));
  EXPECT_THAT(msg, AnyOf(HasSubstr("5 \"a\" -> 6 \"b\" -> 5 \"a\""), HasSubstr("6 \"b\" -> 5 \"a\" -> 6 \"b\"")));
  EXPECT_THAT(msg, HasSubstr("; 2 nodes cannot run"));
  EXPECT_THAT(msg, HasSubstr("a trace must be a DAG"));
}

TEST(GraphErrors, CyclePathListsOnlyTheCycleInDependencyOrder) {
  // 0 -> 1 is fine; 2 -> 3 -> 4 -> 2 is a cycle (through data and ctrl deps); 1 and 5 hang
  // behind it (1 is the lowest stuck id, so the search starts off the cycle).
  Trace t;
  add_node(t, 0, "ok");
  add_node(t, 1, "behind", {0, 3});
  add_node(t, 2, "c2", {4});
  add_node(t, 3, "c3", {}, {2});
  add_node(t, 4, "c4", {3});
  add_node(t, 5, "after", {4});
  const std::string msg = error_of([&] { Graph::build(t, "cyc.et"); });
  EXPECT_THAT(msg, HasSubstr("cyc.et: dependency cycle of 3 nodes"));
  EXPECT_THAT(msg, HasSubstr("; 5 nodes cannot run (on the cycle or after it)"));
  const std::vector<std::uint64_t> ids = cycle_ids(msg);
  ASSERT_EQ(ids.size(), 4u) << msg;
  EXPECT_EQ(ids.front(), ids.back()) << msg;
  EXPECT_EQ(std::set<std::uint64_t>(ids.begin(), ids.end()), (std::set<std::uint64_t>{2, 3, 4})) << msg;
  // Each arrow goes from a parent to a node that depends on it.
  const std::set<std::pair<std::uint64_t, std::uint64_t>> edges{{4, 2}, {2, 3}, {3, 4}};
  for (std::size_t k = 0; k + 1 < ids.size(); ++k) {
    EXPECT_TRUE(edges.count({ids[k], ids[k + 1]})) << ids[k] << " -> " << ids[k + 1] << " in " << msg;
  }
}

// A cycle through every node of a long chain: the message names its length and six members (the
// first and last three, in dependency order), not a line the size of the trace.
TEST(GraphErrors, LongCycleIsSummarised) {
  Trace t;
  constexpr std::uint64_t kNodes = 100000;
  for (std::uint64_t id = 0; id < kNodes; ++id) add_node(t, id, "n", {(id + kNodes - 1) % kNodes});
  const std::string msg = error_of([&] { Graph::build(t, "ring.et"); });
  EXPECT_THAT(msg, HasSubstr("ring.et: dependency cycle of 100000 nodes: "));
  EXPECT_THAT(msg, HasSubstr(" -> ... (99994 more) -> "));
  EXPECT_THAT(msg, HasSubstr("; 100000 nodes cannot run"));
  EXPECT_LT(msg.size(), 400u) << msg;
  const std::vector<std::uint64_t> ids = cycle_ids(msg);
  ASSERT_EQ(ids.size(), 7u) << msg;
  EXPECT_EQ(ids.front(), ids.back());
  EXPECT_EQ(ids[1], (ids[0] + 1) % kNodes);  // parent first: each shown step is an edge
  EXPECT_EQ(ids[2], (ids[1] + 1) % kNodes);
  EXPECT_EQ(ids[4], (ids[3] + 1) % kNodes);
}

// Long names are cut, so six members stay one short line.
TEST(GraphErrors, CycleMembersNamesAreCut) {
  const std::string long_name(100, 'x');
  const std::string text = describe_cycle(2, [&](std::size_t k) {
    return std::pair<std::uint64_t, std::string_view>{k, k == 0 ? std::string_view(long_name) : ""};
  });
  EXPECT_EQ(text, "of 2 nodes: 0 \"" + std::string(40, 'x') + "...\" -> 1 -> 0 \"" + std::string(40, 'x') + "...\"");
}

TEST(GraphErrors, AttributeErrorsNameTheFile) {
  Trace t;
  Node& n = add_node(t, 8, "bad_size");
  Attribute a;
  a.set_name("comm_size");
  a.set_double_val(1.5);
  *n.add_attr() = a;
  const std::string msg = error_of([&] { Graph::build(t, "attr.et"); });
  EXPECT_THAT(msg, HasSubstr("attr.et: node 8 (\"bad_size\"): attribute \"comm_size\" holds double_val"));
}

TEST(GraphErrors, NegativeCommSizeIsRejected) {
  Trace t;
  *add_node(t, 8, "neg").add_attr() = make_int64("comm_size", -1);
  const std::string msg = error_of([&] { Graph::build(t, "neg.et"); });
  EXPECT_THAT(msg, HasSubstr("neg.et: node 8 (\"neg\"): attribute \"comm_size\" is -1; expected a non-negative "
                             "integer"));
}

TEST(GraphErrors, InvolvedDimWithMoreThan32Entries) {
  Trace t;
  *add_node(t, 3, "wide").add_attr() = make_bool_list("involved_dim", std::vector<bool>(33, true));
  const std::string msg = error_of([&] { Graph::build(t, "dims.et"); });
  EXPECT_THAT(msg, HasSubstr("dims.et"));
  EXPECT_THAT(msg, HasSubstr("node 3"));
  EXPECT_THAT(msg, HasSubstr("\"involved_dim\" has 33 entries; at most 32"));
  // 32 entries are fine and use every bit.
  t.nodes[0].clear_attr();
  *t.nodes[0].add_attr() = make_bool_list("involved_dim", std::vector<bool>(32, true));
  EXPECT_EQ(Graph::build(t, "dims.et").attrs(0).involved_dims, 0xffffffffu);
}

}  // namespace
}  // namespace chakrasim::chakra

namespace chakrasim::chakra {
namespace {

// Everything a Graph exposes, for comparing two.
void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::uint32_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.id(i), b.id(i));
    EXPECT_EQ(a.raw_type(i), b.raw_type(i));
    EXPECT_EQ(a.is_cpu_op(i), b.is_cpu_op(i));
    EXPECT_EQ(a.duration_micros(i), b.duration_micros(i));
    EXPECT_EQ(a.name(i), b.name(i));
    EXPECT_EQ(a.parent_count(i), b.parent_count(i));
    EXPECT_TRUE(std::ranges::equal(a.children(i), b.children(i)));
    EXPECT_EQ(a.has_attrs(i), b.has_attrs(i));
    const OpAttrs &x = a.attrs(i), &y = b.attrs(i);
    EXPECT_EQ(x.present, y.present);
    EXPECT_EQ(x.comm_type, y.comm_type);
    EXPECT_EQ(x.comm_size, y.comm_size);
    EXPECT_EQ(x.comm_src, y.comm_src);
    EXPECT_EQ(x.comm_dst, y.comm_dst);
    EXPECT_EQ(x.comm_tag, y.comm_tag);
    EXPECT_EQ(x.num_ops, y.num_ops);
    EXPECT_EQ(x.tensor_size, y.tensor_size);
    EXPECT_EQ(x.comm_priority, y.comm_priority);
    EXPECT_EQ(x.involved_dims, y.involved_dims);
    EXPECT_EQ(a.string(x.pg_name), b.string(y.pg_name));
    EXPECT_EQ(x.pg_name, y.pg_name);
    EXPECT_EQ(x.inputs_values, y.inputs_values);
  }
}

TEST(GraphParse, ParsingTheBytesGivesWhatBuildingTheTraceGives) {
  // Nodes out of id order, both kinds of dependency (a duplicate among them), an attribute named
  // twice (the first counts), process-group names interned in id order, a METADATA node's
  // inputs.values, and the is_cpu_op flag.
  Trace t;
  t.metadata.set_version("0.0.4");
  Node& late = add_node(t, 9, "late", {2}, {2, 4});
  *late.add_attr() = make_int64("comm_type", 2);
  *late.add_attr() = make_int64("comm_type", 7);
  *late.add_attr() = make_uint64("comm_size", 1 << 20);
  *late.add_attr() = make_string("pg_name", "b");
  late.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  *add_node(t, 2, "first").add_attr() = make_string("pg_name", "a");
  Node& meta = add_node(t, 4, "meta", {2});
  meta.set_type(ChakraProtoMsg::METADATA_NODE);
  meta.mutable_inputs()->set_values("[[0, 1], \"a\"]");
  *meta.add_attr() = make_bool("is_cpu_op", true);
  Node& send = add_node(t, 7, "send", {4});
  send.set_type(ChakraProtoMsg::COMM_SEND_NODE);
  *send.add_attr() = make_int64("comm_dst", 3);
  *send.add_attr() = make_int64("comm_tag", 11);
  *send.add_attr() = make_bool_list("involved_dim", {true, false, true});
  send.set_duration_micros(5);
  const Graph parsed = Graph::parse(serialize_trace(t), "p.et");
  expect_same_graph(parsed, Graph::build(t, "p.et"));
  EXPECT_EQ(parsed.attrs(3).comm_type, 2);  // id 9, the first comm_type
  EXPECT_EQ(parsed.string(parsed.attrs(0).pg_name), "a");
  EXPECT_EQ(parsed.attrs(0).pg_name, 1u);  // "a" seen first in id order, though "b" is first in the file
}

TEST(GraphParse, ErrorsAreBuildsInTheSameOrder) {
  // Two nodes with bad attributes, the higher id first in the file: the lower id is reported, as
  // building reports in id order; a duplicate id before both wins over them.
  Trace t;
  *add_node(t, 8, "eight").add_attr() = make_int64("comm_size", -8);
  *add_node(t, 3, "three").add_attr() = make_int64("comm_size", -3);
  const std::string built = error_of([&] { Graph::build(t, "e.et"); });
  EXPECT_THAT(built, HasSubstr("node 3 (\"three\")"));
  EXPECT_EQ(error_of([&] { Graph::parse(serialize_trace(t), "e.et"); }), built);
  add_node(t, 1, "one");
  add_node(t, 1, "one again");
  EXPECT_THAT(error_of([&] { Graph::parse(serialize_trace(t), "e.et"); }), HasSubstr("node id 1 appears twice"));
  // A missing dependency names its kind; a cut-off file fails as parse_trace does.
  Trace d;
  add_node(d, 1, "a", {}, {5});
  EXPECT_EQ(error_of([&] { Graph::parse(serialize_trace(d), "d.et"); }), error_of([&] { Graph::build(d, "d.et"); }));
  const std::string bytes = serialize_trace(d);
  const std::string cut = bytes.substr(0, bytes.size() - 1);
  EXPECT_EQ(error_of([&] { Graph::parse(cut, "d.et"); }), error_of([&] { parse_trace(cut, "d.et"); }));
}

TEST(GraphParse, AMalformedListOnAnAttributeNoModelReadsIsRefusedAsProtobufRefusesIt) {
  // An int64 list on an attribute the models do not read, its one entry's tag rewritten to
  // field 0 (same length, so every enclosing length still holds): protobuf refuses the file,
  // and so must the byte reader, which used to check a list's bytes only on gemm and conv.
  Trace t;
  ChakraProtoMsg::AttributeProto extra;
  extra.set_name("extra");
  extra.mutable_int64_list()->add_values(1);
  *add_node(t, 1, "n").add_attr() = extra;
  std::string bytes = serialize_trace(t);
  const std::string list = "\x52\x03\x0a\x01\x01";  // field 10, 3 bytes: packed field 1, [1]
  const std::size_t at = bytes.find(list);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 2] = '\0';
  const std::string protobuf_error = error_of([&] { parse_trace(bytes, "l.et"); });
  EXPECT_THAT(protobuf_error, HasSubstr("not a valid protobuf message"));
  EXPECT_EQ(error_of([&] { Graph::parse(bytes, "l.et"); }), protobuf_error);
}

TEST(GraphParse, ATagWiderThan32BitsIsRefusedAsProtobufRefusesIt) {
  // Node field 1 (id = 5) under a 6-byte tag, 8 + 2^35: its low 32 bits name the id, but
  // protobuf reads tags as 32-bit values and refuses the file; the byte reader used to keep the
  // low bits and read the node.
  Trace t;
  t.metadata.set_version("0.0.4");
  std::string bytes = serialize_trace(t);  // the metadata message alone
  const std::string node = std::string("\x88\x80\x80\x80\x80\x01\x05", 7) + "\x12\x01n";
  bytes += static_cast<char>(node.size());
  bytes += node;
  const std::string protobuf_error = error_of([&] { parse_trace(bytes, "w.et"); });
  EXPECT_THAT(protobuf_error, HasSubstr("not a valid protobuf message"));
  EXPECT_EQ(error_of([&] { Graph::parse(bytes, "w.et"); }), protobuf_error);
}

}  // namespace
}  // namespace chakrasim::chakra
