// The researcher's time split (sim/time_split.h): disjoint parts by priority, collectives by
// group kind, labels from names or shapes, and the figures a run reports.
#include <sstream>

#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/trace_builder.h"
#include "report/summary.h"
#include "sim/time_splitter.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;

TEST(TimeSplit, EachInstantCountsOnceByPriority) {
  // compute [0,10), TP all-reduce [5,20), memory load [18,25), receive [24,28), finish 30.
  // Priority compute > collective > p2p > memory: compute 10 (0..10), collectives 10 (10..20,
  // all TP), memory 4 (20..24), p2p 4 (24..28: at 24..25 the receive outranks the load), idle 2
  // (28..30). They add up to 30.
  chakra::TraceBuilder b;
  b.comp("c", 1);
  b.collective("ar", chakra::CommType::kAllReduce, 1024);
  b.at(1).attr(chakra::make_string("pg_name", "1"));
  b.mem_load("load", 64);
  b.recv("r", 1, 0, 64);
  const chakra::Graph g = chakra::Graph::build(b.trace(), "test");
  const network::Topology topology(network_of({{DimensionKind::kRing, 4, 50, 500}}));
  const sim::GroupKinds kinds({{1, {0, 1}}}, {{1, "TP"}}, topology);
  sim::TimeSplitter s({&g}, kinds, nullptr);
  s.on_node_start(0, 0, 0);
  s.on_node_start(0, 1, 5);
  s.on_node_end(0, 0, 10);
  s.on_node_start(0, 2, 18);
  s.on_node_end(0, 1, 20);
  s.on_node_start(0, 3, 24);
  s.on_node_end(0, 2, 25);
  s.on_node_end(0, 3, 28);
  const sim::TimeSplit t = s.split(0, 30);
  EXPECT_EQ(t.compute_ns, 10u);
  EXPECT_EQ(t.collective_ns, 10u);
  EXPECT_EQ(t.by_group_kind_ns[kinds.kind_of(1)], 10u);
  EXPECT_EQ(kinds.labels()[kinds.kind_of(1)], "TP");
  EXPECT_EQ(t.memory_ns, 4u);
  EXPECT_EQ(t.p2p_wait_ns, 4u);
  EXPECT_EQ(t.idle_ns, 2u);
  EXPECT_EQ(t.compute_ns + t.collective_ns + t.memory_ns + t.p2p_wait_ns + t.idle_ns, 30u);
}

TEST(TimeSplit, OverlappingCollectivesGoToTheKindListedFirst) {
  // A DP all-reduce [0,10) and a TP one [4,8): named kinds are listed in group-id order (TP is
  // group 1, DP group 2), so 4..8 is TP's and the rest DP's.
  chakra::TraceBuilder b;
  b.collective("dp", chakra::CommType::kAllReduce, 1024);
  b.at(0).attr(chakra::make_string("pg_name", "2"));
  b.collective("tp", chakra::CommType::kAllReduce, 1024);
  b.at(1).attr(chakra::make_string("pg_name", "1"));
  const chakra::Graph g = chakra::Graph::build(b.trace(), "test");
  const network::Topology topology(network_of({{DimensionKind::kRing, 4, 50, 500}}));
  const sim::GroupKinds kinds({{1, {0, 1}}, {2, {0, 2}}}, {{1, "TP"}, {2, "DP"}}, topology);
  sim::TimeSplitter s({&g}, kinds, nullptr);
  s.on_node_start(0, 0, 0);
  s.on_node_start(0, 1, 4);
  s.on_node_end(0, 1, 8);
  s.on_node_end(0, 0, 10);
  const sim::TimeSplit t = s.split(0, 10);
  EXPECT_EQ(t.by_group_kind_ns[kinds.kind_of(1)], 4u);
  EXPECT_EQ(t.by_group_kind_ns[kinds.kind_of(2)], 6u);
  EXPECT_EQ(t.collective_ns, 10u);
}

TEST(TimeSplit, UnnamedGroupsAreLabelledByShape) {
  // 2 x 4 NPUs (dim 0 of 2, dim 1 of 4): {0,1} differ in dim 0; {0,2,4,6} in dim 1; {0,3} in
  // both. Group 0 is every NPU.
  const network::Topology topology(
      network_of({{DimensionKind::kRing, 2, 50, 500}, {DimensionKind::kSwitch, 4, 50, 500}}));
  const sim::GroupKinds kinds({{1, {0, 1}}, {2, {0, 2, 4, 6}}, {3, {0, 3}}, {4, {1, 2}}}, {}, topology);
  EXPECT_EQ(kinds.labels()[kinds.kind_of(1)], "2-NPU groups, dim 0");
  EXPECT_EQ(kinds.labels()[kinds.kind_of(2)], "4-NPU groups, dim 1");
  EXPECT_EQ(kinds.labels()[kinds.kind_of(3)], "2-NPU groups, dims 0-1");
  EXPECT_EQ(kinds.kind_of(4), kinds.kind_of(3));
  EXPECT_EQ(kinds.labels()[kinds.kind_of(0)], "all NPUs");
  EXPECT_EQ(kinds.labels()[kinds.kind_of(99)], "other groups");
}

TEST(TimeSplit, ARunReportsItInTheResultTheSummaryAndTheJson) {
  // Two NPUs: NPU 1 computes 5 us, then sends to NPU 0, which receives it from t = 0: NPU 0's
  // receive waits for the compute (the bubble of a pipeline), then both all-reduce 1 MiB.
  chakra::TraceBuilder r0, r1;
  r0.recv("from 1", 1, 0, 1024);
  r0.collective("ar", chakra::CommType::kAllReduce, 1 << 20, {0});
  r1.comp("fwd", 5);
  r1.at(0).attr(chakra::make_uint64("num_ops", 5000000000));
  r1.send("to 0", 0, 0, 1024).data_deps({0});
  r1.collective("ar", chakra::CommType::kAllReduce, 1 << 20, {1});
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  in.compute.peak_perf_tflops = 10;
  in.graphs = {std::make_shared<const chakra::Graph>(chakra::Graph::build(r0.trace(), "r0")),
               std::make_shared<const chakra::Graph>(chakra::Graph::build(r1.trace(), "r1"))};
  const sim::Result result = sim::simulate(in);
  ASSERT_TRUE(result.all_finished());
  const sim::TimeSplit& s0 = result.npus[0].split;
  EXPECT_EQ(s0.compute_ns, 0u);
  EXPECT_GE(s0.p2p_wait_ns, 5000u);  // the 5 us of NPU 1's compute, plus the message
  EXPECT_GT(s0.collective_ns, 0u);
  EXPECT_EQ(s0.compute_ns + s0.collective_ns + s0.p2p_wait_ns + s0.memory_ns + s0.idle_ns, result.npus[0].finish_ns);
  EXPECT_EQ(result.npus[1].split.compute_ns, 5000u);
  EXPECT_DOUBLE_EQ(result.npus[1].split.model_flops, 5e9);
  std::ostringstream summary;
  report::print_summary(summary, result);
  EXPECT_NE(summary.str().find("p2p waits and pipeline bubbles"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("by group kind: all NPUs"), std::string::npos) << summary.str();
  // 5e9 FLOP over 2 NPUs in the run time; MFU against 10 TFLOP/s.
  EXPECT_NE(summary.str().find("MFU"), std::string::npos) << summary.str();
  const std::string json = report::results_json(result);
  EXPECT_NE(json.find("\"p2p_wait_ns\""), std::string::npos);
  EXPECT_NE(json.find("\"collective_by_group_kind_ns\": {\n          \"all NPUs\": " +
                      std::to_string(s0.collective_ns)),
            std::string::npos)
      << json;
}

}  // namespace
}  // namespace chakrasim::test
