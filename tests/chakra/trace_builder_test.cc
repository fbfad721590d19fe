// Covers TraceBuilder (chakra/trace_builder.h): ids, versions, node kinds, the attributes it
// writes (and their exact bytes), and that its traces build valid Graphs.
#include "chakra/trace_builder.h"

#include <string>

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
  // CHAKRA-FORMAT.md §1.1: traces/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et, 81 bytes.
  static const unsigned char kExpected[] = {
      0x07, 0x0a, 0x05, '0', '.', '0', '.', '4', 0x48, 0x12, 0x14, 'a', 'l', 'l', '_', 'r', 'e', 'd',
      'u', 'c', 'e', '_', '4', 'n', 'p', 'u', 's', '_', '1', 'M', 'B', 0x18, 0x07, 0x52, 0x0e, 0x0a,
      0x09, 'i', 's', '_', 'c', 'p', 'u', '_', 'o', 'p', 0xd8, 0x01, 0x00, 0x52, 0x0d, 0x0a, 0x09, 'c',
      'o', 'm', 'm', '_', 't', 'y', 'p', 'e', 0x48, 0x00, 0x52, 0x0f, 0x0a, 0x09, 'c', 'o', 'm', 'm',
      '_', 's', 'i', 'z', 'e', 0x48, 0x80, 0x80, 0x40};
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

}  // namespace
}  // namespace chakrasim::chakra
