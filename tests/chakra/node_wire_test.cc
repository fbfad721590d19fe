// Covers chakra/node_wire.h: the common encodings are read straight from the bytes, to the same
// fields protobuf and Graph::build give; everything else is left to protobuf (false).
#include "chakra/node_wire.h"

#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "support/test_support.h"

namespace chakrasim::chakra {
namespace {

Node comm_node() {
  Node n;
  n.set_id(7);
  n.set_name("ag");
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  n.set_duration_micros(12);
  n.add_data_deps(3);
  n.add_data_deps(5);
  n.add_ctrl_deps(1);
  *n.add_attr() = make_bool("is_cpu_op", false);
  *n.add_attr() = make_int64("comm_type", 2);
  *n.add_attr() = make_uint64("comm_size", 1 << 20);
  *n.add_attr() = make_int32("comm_priority", 4);
  *n.add_attr() = make_string("pg_name", "12");
  *n.add_attr() = make_bool_list("involved_dim", {true, false, true});
  *n.add_attr() = make_int64("comm_type", 5);  // a later one of a name does not count
  *n.add_attr() = make_string("other", "x");   // nor does a name the models do not read
  return n;
}

// The bytes stay alive for the string views `out` keeps into them.
bool read(const Node& n, WireNode& out) {
  static std::string bytes;
  bytes = n.SerializeAsString();
  return read_wire_node(bytes.data(), bytes.size(), out);
}

TEST(NodeWire, ReadsTheCommonEncodings) {
  WireNode w;
  ASSERT_TRUE(read(comm_node(), w));
  EXPECT_EQ(w.id, 7u);
  EXPECT_EQ(w.name, "ag");
  EXPECT_EQ(w.type, static_cast<std::uint32_t>(NodeType::kCommColl));
  EXPECT_EQ(w.duration_micros, 12u);
  EXPECT_EQ(w.data_deps, (std::vector<std::uint64_t>{3, 5}));
  EXPECT_EQ(w.ctrl_deps, (std::vector<std::uint64_t>{1}));
  EXPECT_FALSE(w.cpu_op);
  EXPECT_TRUE(w.has_attrs);
  EXPECT_EQ(w.attrs.comm_type, 2);
  EXPECT_EQ(w.attrs.comm_size, 1u << 20);
  EXPECT_EQ(w.attrs.comm_priority, 4);
  EXPECT_EQ(w.attrs.involved_dims, 5u);
  EXPECT_EQ(w.pg_name, "12");
  EXPECT_EQ(w.attrs.present, OpAttrs::kCommType | OpAttrs::kCommSize | OpAttrs::kPgName | OpAttrs::kInvolvedDim);
  // A plain compute node: no model attributes.
  Node comp;
  comp.set_id(1);
  comp.set_type(ChakraProtoMsg::COMP_NODE);
  *comp.add_attr() = make_bool("is_cpu_op", true);
  ASSERT_TRUE(read(comp, w));
  EXPECT_TRUE(w.cpu_op);
  EXPECT_FALSE(w.has_attrs);
  EXPECT_TRUE(w.data_deps.empty());  // nothing left over from the node before
}

TEST(NodeWire, ReadsOperationShapes) {
  Node n;
  n.set_id(3);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  *n.add_attr() = make_int64_list("gemm", {512, 256, 64, 2});
  *n.add_attr() = make_string("pass", "weight_gradient");
  WireNode w;
  ASSERT_TRUE(read(n, w));  // straight from the bytes: generated traces carry shapes on every GEMM
  EXPECT_EQ(w.attrs.present, OpAttrs::kShape);
  EXPECT_EQ(w.shape.dims[0], 512u);
  EXPECT_EQ(w.shape.dims[3], 2u);
  EXPECT_EQ(w.shape.pass, OpShape::Pass::kWeightGradient);
  // A shape the checks refuse goes to protobuf, which reports it.
  *n.mutable_attr(0) = make_int64_list("gemm", {512, 0, 64});
  EXPECT_FALSE(read(n, w));
}

TEST(NodeWire, LeavesEverythingElseToProtobuf) {
  WireNode w;
  auto refused = [&](const std::function<void(Node&)>& change) {
    Node n = comm_node();
    change(n);
    return !read(n, w);
  };
  EXPECT_TRUE(refused([](Node& n) { *n.mutable_attr(1) = make_string("comm_type", "2"); }));  // a string for an integer
  EXPECT_TRUE(refused([](Node& n) { *n.mutable_attr(2) = make_int64("comm_size", -1); }));    // negative size
  EXPECT_TRUE(refused([](Node& n) {
    Attribute a;
    a.set_name("comm_size");
    a.set_double_val(3);
    *n.mutable_attr(2) = a;
  }));                                                                                   // another value type
  EXPECT_TRUE(refused([](Node& n) { *n.mutable_attr(4) = make_int64("pg_name", 3); }));  // pg_name not a string
  EXPECT_TRUE(refused([](Node& n) { n.mutable_inputs()->set_values("[]"); }));           // inputs
  EXPECT_TRUE(refused([](Node& n) { n.set_name("gr\xc3\xbc\xc3\x9f"); }));               // not ASCII
  EXPECT_TRUE(refused([](Node& n) {
    *n.mutable_attr(5) = make_bool_list("involved_dim", std::vector<bool>(33, true));
  }));  // longer than the models take
  // The same field twice (protobuf keeps the last) and malformed bytes.
  const std::string bytes = comm_node().SerializeAsString();
  const std::string twice = bytes + std::string("\x08\x09", 2);  // id = 9 again
  EXPECT_FALSE(read_wire_node(twice.data(), twice.size(), w));
  EXPECT_FALSE(read_wire_node(bytes.data(), bytes.size() - 1, w));
}

TEST(NodeWire, ParsingAgreesWithBuildingEitherWay) {
  // One node read from the wire, one given to protobuf (inputs), one refused with an error:
  // Graph::parse gives Graph::build's graph, and its error.
  Trace t;
  for (const std::uint64_t id : {1, 3, 5}) {
    Node& n = t.nodes.emplace_back();
    n.set_id(id);
    n.set_type(ChakraProtoMsg::COMP_NODE);
  }
  t.nodes.push_back(comm_node());
  Node& with_inputs = t.nodes.emplace_back(comm_node());
  with_inputs.set_id(8);
  with_inputs.mutable_inputs()->set_values("[1]");
  const Graph built = Graph::build(t, "w.et");
  const Graph parsed = Graph::parse(serialize_trace(t), "w.et");
  ASSERT_EQ(parsed.size(), built.size());
  for (std::uint32_t i = 0; i < built.size(); ++i) {
    EXPECT_EQ(parsed.attrs(i), built.attrs(i));
    EXPECT_EQ(parsed.string(parsed.attrs(i).pg_name), built.string(built.attrs(i).pg_name));
    EXPECT_EQ(parsed.children(i).size(), built.children(i).size());
  }
  *t.nodes[3].mutable_attr(2) = make_int64("comm_size", -4);
  EXPECT_EQ(test::error_of([&] { Graph::parse(serialize_trace(t), "w.et"); }),
            test::error_of([&] { Graph::build(t, "w.et"); }));
}

}  // namespace
}  // namespace chakrasim::chakra
