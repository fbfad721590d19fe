// Covers TraceBuilder (chakra/trace_builder.h): ids (shared across builders too), versions and
// metadata attributes, every node kind and node field, the attributes it writes (every oneof
// member, with their exact bytes), and that its traces build valid Graphs.
#include "chakra/trace_builder.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/graph.h"

namespace chakrasim::chakra {
namespace {

using ::testing::ElementsAre;

TEST(TraceBuilder, DefaultVersionAndSequentialIds) {
  TraceBuilder b;
  EXPECT_EQ(b.trace().metadata.version(), "0.0.4");
  EXPECT_EQ(b.next_id(), 0u);
  Node& first = b.add(NodeType::kMemLoad, "load");
  EXPECT_EQ(first.id(), 0u);
  EXPECT_EQ(first.type(), ChakraProtoMsg::MEM_LOAD_NODE);
  EXPECT_EQ(first.name(), "load");
  EXPECT_EQ(first.attr_size(), 0);
  b.add(NodeType::kMemStore, "store", {0});
  EXPECT_EQ(b.next_id(), 2u);
  b.set_next_id(100);
  Node& later = b.add(NodeType::kInvalid, "x", {0, 1});
  EXPECT_EQ(later.id(), 100u);
  EXPECT_EQ(b.next_id(), 101u);
  ASSERT_EQ(b.trace().nodes.size(), 3u);
  // Dependencies are data deps, in the order given.
  EXPECT_THAT(b.trace().nodes[2].data_deps(), ElementsAre(0u, 1u));
  EXPECT_EQ(b.trace().nodes[2].ctrl_deps_size(), 0);
}

TEST(TraceBuilder, CustomVersion) {
  TraceBuilder b("1.0.0");
  EXPECT_EQ(b.trace().metadata.version(), "1.0.0");
}

TEST(TraceBuilder, CompNodeIsAGpuNodeWithItsDuration) {
  TraceBuilder b;
  b.comp("root", 1);
  const Node& n = b.comp("gemm", 250, {0});
  EXPECT_EQ(n.type(), ChakraProtoMsg::COMP_NODE);
  EXPECT_EQ(n.duration_micros(), 250u);
  ASSERT_EQ(n.attr_size(), 1);
  EXPECT_EQ(n.attr(0).name(), "is_cpu_op");
  EXPECT_EQ(n.attr(0).value_case(), Attribute::kBoolVal);
  EXPECT_FALSE(n.attr(0).bool_val());
  EXPECT_THAT(n.data_deps(), ElementsAre(0u));
}

TEST(TraceBuilder, CollectiveWritesTheMicrobenchmarkAttributes) {
  TraceBuilder b;
  const Node& n = b.collective("ag", CommType::kAllGather, 65536);
  EXPECT_EQ(n.type(), ChakraProtoMsg::COMM_COLL_NODE);
  ASSERT_EQ(n.attr_size(), 3);
  EXPECT_EQ(n.attr(0).name(), "is_cpu_op");
  EXPECT_FALSE(n.attr(0).bool_val());
  EXPECT_EQ(n.attr(1).name(), "comm_type");
  EXPECT_EQ(n.attr(1).value_case(), Attribute::kInt64Val);
  EXPECT_EQ(n.attr(1).int64_val(), 2);
  EXPECT_EQ(n.attr(2).name(), "comm_size");
  EXPECT_EQ(n.attr(2).value_case(), Attribute::kInt64Val);
  EXPECT_EQ(n.attr(2).int64_val(), 65536);
}

TEST(TraceBuilder, CollectiveSerializesToTheReferenceMicrobenchmarkBytes) {
  // docs/chakra-format.md §1.1: traces/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et, 81 bytes.
  static const unsigned char kExpected[] = {0x07, 0x0a, 0x05, '0',  '.',  '0',  '.',  '4',  0x48, 0x12, 0x14, 'a',
                                            'l',  'l',  '_',  'r',  'e',  'd',  'u',  'c',  'e',  '_',  '4',  'n',
                                            'p',  'u',  's',  '_',  '1',  'M',  'B',  0x18, 0x07, 0x52, 0x0e, 0x0a,
                                            0x09, 'i',  's',  '_',  'c',  'p',  'u',  '_',  'o',  'p',  0xd8, 0x01,
                                            0x00, 0x52, 0x0d, 0x0a, 0x09, 'c',  'o',  'm',  'm',  '_',  't',  'y',
                                            'p',  'e',  0x48, 0x00, 0x52, 0x0f, 0x0a, 0x09, 'c',  'o',  'm',  'm',
                                            '_',  's',  'i',  'z',  'e',  0x48, 0x80, 0x80, 0x40};
  static_assert(sizeof(kExpected) == 81);
  TraceBuilder b;
  b.collective("all_reduce_4npus_1MB", CommType::kAllReduce, 1048576);
  EXPECT_EQ(serialize_trace(b.trace()), std::string(reinterpret_cast<const char*>(kExpected), sizeof(kExpected)));
}

TEST(TraceBuilder, BuiltTraceMakesAGraph) {
  TraceBuilder b;
  b.comp("fwd", 10);
  b.collective("ar", CommType::kAllReduce, 1024, {0});
  b.comp("bwd", 20, {1});
  const Graph g = Graph::build(b.trace(), "built");
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.type(1), NodeType::kCommColl);
  EXPECT_EQ(g.attrs(1).comm_size, 1024u);
  EXPECT_EQ(g.attrs(1).comm_type, 0);
  EXPECT_EQ(g.parent_count(2), 1u);
  EXPECT_EQ(g.duration_micros(2), 20u);
  EXPECT_FALSE(g.has_attrs(0));
}

// NodeRef chains the ChakraNode fields; it refers to the node by position, so a reference taken
// before more nodes are added still reaches the right node.
TEST(TraceBuilder, NodeRefSetsEveryNodeField) {
  TraceBuilder b;
  b.comp("root", 1);
  NodeRef n = b.node(NodeType::kComp, "gemm");
  for (int i = 0; i < 100; ++i) b.comp("filler", 1);  // grows the node vector
  n.data_deps({0})
      .data_deps(std::vector<std::uint64_t>{7, 7})
      .ctrl_deps({3})
      .ctrl_deps(std::vector<std::uint64_t>{4})
      .duration_micros(250)
      .start_time_micros(9)
      .is_cpu_op(true)
      .inputs({"[1]", "[[2, 3]]", "['Tensor(float)']"})
      .outputs({"[4]", "[[5]]", "['Tensor(int)']"})
      .attr(make_int64("seq_id", -3));
  const Node& node = b.trace().nodes[1];
  EXPECT_EQ(&n.node(), &node);
  EXPECT_EQ(n.id(), 1u);
  EXPECT_EQ(node.name(), "gemm");
  EXPECT_THAT(node.data_deps(), ElementsAre(0u, 7u, 7u));
  EXPECT_THAT(node.ctrl_deps(), ElementsAre(3u, 4u));
  EXPECT_EQ(node.duration_micros(), 250u);
  EXPECT_EQ(node.start_time_micros(), 9u);
  EXPECT_EQ(node.inputs().values(), "[1]");
  EXPECT_EQ(node.inputs().shapes(), "[[2, 3]]");
  EXPECT_EQ(node.inputs().types(), "['Tensor(float)']");
  EXPECT_EQ(node.outputs().values(), "[4]");
  EXPECT_EQ(node.outputs().types(), "['Tensor(int)']");
  ASSERT_EQ(node.attr_size(), 2);
  EXPECT_EQ(attr_bool(node, "is_cpu_op"), true);
  EXPECT_EQ(attr_int(node, "seq_id"), -3);
  // at() reaches nodes by writing order; the implicit conversion hands out the protobuf node.
  Node& again = b.at(1);
  EXPECT_EQ(&again, &node);
}

TEST(TraceBuilder, TypedMakersWriteWhatTheSimulatorReads) {
  TraceBuilder b;
  b.metadata_node("meta");
  b.mem_load("load", 1024).data_deps({0});
  b.mem_store("store", 2048);
  b.send("send", 3, 7, 65536);
  b.recv("recv", 2, 7, 4096).ctrl_deps({3});
  const auto& nodes = b.trace().nodes;
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes[0].type(), ChakraProtoMsg::METADATA_NODE);
  EXPECT_EQ(nodes[0].attr_size(), 0);
  EXPECT_EQ(nodes[1].type(), ChakraProtoMsg::MEM_LOAD_NODE);
  EXPECT_EQ(nodes[2].type(), ChakraProtoMsg::MEM_STORE_NODE);
  ASSERT_EQ(nodes[2].attr_size(), 2);
  EXPECT_EQ(nodes[2].attr(1).value_case(), Attribute::kUint64Val);  // as the reference generator
  EXPECT_EQ(nodes[3].type(), ChakraProtoMsg::COMM_SEND_NODE);
  EXPECT_EQ(find_attribute(nodes[3], "comm_dst")->value_case(), Attribute::kInt32Val);  // as MSCCL's
  EXPECT_EQ(find_attribute(nodes[3], "comm_size")->value_case(), Attribute::kInt64Val);
  EXPECT_EQ(nodes[4].type(), ChakraProtoMsg::COMM_RECV_NODE);
  const Graph g = Graph::build(b.trace(), "typed");
  EXPECT_EQ(g.attrs(1).tensor_size, 1024u);
  EXPECT_EQ(g.attrs(2).tensor_size, 2048u);
  EXPECT_EQ(g.attrs(3).comm_dst, 3);
  EXPECT_EQ(g.attrs(3).comm_tag, 7);
  EXPECT_EQ(g.attrs(3).comm_size, 65536u);
  EXPECT_FALSE(g.attrs(3).has(OpAttrs::kCommSrc));
  EXPECT_EQ(g.attrs(4).comm_src, 2);
  EXPECT_EQ(g.attrs(4).comm_size, 4096u);
  EXPECT_EQ(g.parent_count(4), 1u);  // the ctrl dep counts
  EXPECT_FALSE(g.is_cpu_op(3));
}

TEST(TraceBuilder, RawNodeTypesOutsideTheEnum) {
  TraceBuilder b;
  b.node_of_raw_type(9, "batch");
  EXPECT_EQ(static_cast<int>(b.trace().nodes[0].type()), 9);
  EXPECT_EQ(Graph::build(b.trace(), "raw").raw_type(0), 9u);
}

// The reference generator numbers the nodes of all its files with one counter.
TEST(TraceBuilder, BuildersShareAnIdCounter) {
  TraceBuilder rank0("1.0.0");
  rank0.comp("a", 1);
  rank0.comp("b", 1);
  TraceBuilder rank1("1.0.0", rank0.ids());
  EXPECT_EQ(rank1.next_id(), 2u);
  EXPECT_EQ(rank1.comp("c", 1).id(), 2u);
  EXPECT_EQ(rank0.comp("d", 1).id(), 3u);
  rank1.set_next_id(10);
  EXPECT_EQ(rank0.next_id(), 10u);
  EXPECT_EQ(rank1.trace().metadata.version(), "1.0.0");
  // A null counter gets a fresh one.
  TraceBuilder alone("x", nullptr);
  EXPECT_EQ(alone.next_id(), 0u);
}

TEST(TraceBuilder, GlobalMetadataVersionAndAttributes) {
  TraceBuilder b;
  b.set_version("");
  b.global_attr(make_string("schema", "1.0.2-chakra.0.0.4"));
  b.global_attr(make_uint64("pid", 42));
  b.comp("c", 1);
  // Written and read back: the empty version is omitted, the attributes keep their order.
  const Trace back = parse_trace(serialize_trace(b.trace()), "gm");
  EXPECT_EQ(back.metadata.version(), "");
  ASSERT_EQ(back.metadata.attr_size(), 2);
  EXPECT_EQ(back.metadata.attr(0).string_val(), "1.0.2-chakra.0.0.4");
  EXPECT_EQ(back.metadata.attr(1).uint64_val(), 42u);
}

std::string bytes_of(const Attribute& a) {
  std::string out;
  a.SerializeToString(&out);
  return out;
}

std::string hex(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// Every oneof member has a builder, holds its member and value; doc_string only when asked.
TEST(TraceBuilder, EveryAttributeMember) {
  using C = Attribute::ValueCase;
  struct Case {
    Attribute attr;
    C expected;
  };
  const std::vector<Case> cases = {
      {make_double("a", 1.5, "d"), C::kDoubleVal},
      {make_float("a", 1.5f), C::kFloatVal},
      {make_uint32("a", 1), C::kUint32Val},
      {make_sint32("a", -1), C::kSint32Val},
      {make_sint64("a", -1), C::kSint64Val},
      {make_fixed32("a", 1), C::kFixed32Val},
      {make_fixed64("a", 1), C::kFixed64Val},
      {make_sfixed32("a", -1), C::kSfixed32Val},
      {make_sfixed64("a", -1), C::kSfixed64Val},
      {make_bytes("a", "xy"), C::kBytesVal},
      {make_double_list("a", {1.5}), C::kDoubleList},
      {make_float_list("a", {1.5f}), C::kFloatList},
      {make_int32_list("a", {1}), C::kInt32List},
      {make_int64_list("a", {1}), C::kInt64List},
      {make_uint32_list("a", {1}), C::kUint32List},
      {make_uint64_list("a", {1}), C::kUint64List},
      {make_sint32_list("a", {-1}), C::kSint32List},
      {make_sint64_list("a", {-1}), C::kSint64List},
      {make_fixed32_list("a", {1}), C::kFixed32List},
      {make_fixed64_list("a", {1}), C::kFixed64List},
      {make_sfixed32_list("a", {-1}), C::kSfixed32List},
      {make_sfixed64_list("a", {-1}), C::kSfixed64List},
      {make_string_list("a", {"x"}), C::kStringList},
      {make_bytes_list("a", {"x"}), C::kBytesList},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.attr.value_case(), c.expected) << value_kind(c.attr);
    EXPECT_EQ(c.attr.name(), "a");
  }
  EXPECT_EQ(cases[0].attr.doc_string(), "d");
  EXPECT_EQ(cases[1].attr.doc_string(), "");
  EXPECT_EQ(make_sint64("a", -7).sint64_val(), -7);
  EXPECT_EQ(make_sfixed32("a", -7).sfixed32_val(), -7);
  EXPECT_EQ(make_bytes_list("a", {"x", "y"}).bytes_list().values(1), "y");
  EXPECT_EQ(with_doc(make_int32("a", 1), "why").doc_string(), "why");
}

// Wire bytes: name "a" is 0a 01 61; then the member's tag (field << 3 | wire type).
TEST(TraceBuilder, AttributeWireBytes) {
  // sint32 (15, varint): zigzag(-1) = 1.
  EXPECT_EQ(bytes_of(make_sint32("a", -1)), hex({0x0a, 0x01, 'a', 0x78, 0x01}));
  // fixed32 (19, 32-bit): little-endian.
  EXPECT_EQ(bytes_of(make_fixed32("a", 1)), hex({0x0a, 0x01, 'a', 0x9d, 0x01, 0x01, 0x00, 0x00, 0x00}));
  // double (3, 64-bit) after doc_string (2) "d".
  EXPECT_EQ(bytes_of(make_double("a", 1.0, "d")),
            hex({0x0a, 0x01, 'a', 0x12, 0x01, 'd', 0x19, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
  // sint64_list (18, length-delimited): a list message with packed zigzag values -1 -> 1, 1 -> 2.
  EXPECT_EQ(bytes_of(make_sint64_list("a", {-1, 1})), hex({0x0a, 0x01, 'a', 0x92, 0x01, 0x04, 0x0a, 0x02, 0x01, 0x02}));
  // An empty list still says which member it is (int64_list, 10).
  EXPECT_EQ(bytes_of(make_int64_list("a", {})), hex({0x0a, 0x01, 'a', 0x52, 0x00}));
}

}  // namespace
}  // namespace chakrasim::chakra
