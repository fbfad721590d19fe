// The compute models behind compute::ComputeModel: the registry, replay, and the roofline's
// closed form, checks and utilisation.
#include "compute/compute_model.h"

#include <gtest/gtest.h>

#include "chakra/trace_builder.h"
#include "support/test_support.h"

namespace chakrasim::compute {
namespace {

using chakra::NodeType;

// Node 0: GPU gemm, 1e12 FLOP over 1e9 B (intensity 1000), recorded 7 us.
// Node 1: GPU copy, 1e9 FLOP over 1e9 B (intensity 1), recorded 3 us.
// Node 2: CPU op, recorded 0 us.
// Node 3: GPU node with tensor_size 0.
// Node 4: GPU node without num_ops.
chakra::Graph sample_graph() {
  chakra::TraceBuilder b;
  b.node(NodeType::kComp, "gemm")
      .duration_micros(7)
      .attr(chakra::make_uint64("num_ops", 1'000'000'000'000))
      .attr(chakra::make_uint64("tensor_size", 1'000'000'000));
  b.node(NodeType::kComp, "copy")
      .duration_micros(3)
      .attr(chakra::make_uint64("num_ops", 1'000'000'000))
      .attr(chakra::make_uint64("tensor_size", 1'000'000'000));
  b.node(NodeType::kComp, "host").is_cpu_op(true);
  b.node(NodeType::kComp, "empty").attr(chakra::make_uint64("num_ops", 5)).attr(chakra::make_uint64("tensor_size", 0));
  b.node(NodeType::kComp, "no-ops").attr(chakra::make_uint64("tensor_size", 8));
  return chakra::Graph::build(b.trace(), "sample.et");
}

ComputeSpec roofline(double tflops, double gbps) {
  ComputeSpec spec;
  spec.model = "roofline";
  spec.peak_perf_tflops = tflops;
  spec.local_mem_bw_gb_per_s = gbps;
  return spec;
}

TEST(ComputeModels, TheRegistryListsReplayRooflineAndSystolic) {
  ASSERT_EQ(compute_models().size(), 3u);
  EXPECT_STREQ(compute_models()[0].name, "replay");
  EXPECT_STREQ(compute_models()[1].name, "roofline");
  EXPECT_STREQ(compute_models()[2].name, "systolic");
  ComputeSpec spec;
  spec.model = "systolic-someday";
  EXPECT_EQ(test::error_of([&] { make_compute_model(spec); }), "unknown compute model \"systolic-someday\"; valid "
                                                               "models are: replay, roofline, systolic");
}

TEST(ComputeModels, ReplayTakesTheRecordedDurationAndOneNsForNone) {
  const chakra::Graph g = sample_graph();
  const auto model = make_compute_model(ComputeSpec{});
  EXPECT_EQ(model->duration(g, 0), Tick{7000});
  EXPECT_EQ(model->duration(g, 2), Tick{1});
  EXPECT_EQ(model->check(g, 4), "");
  EXPECT_FALSE(model->utilization(g, 0));
  EXPECT_FALSE(model->reports_utilization());
}

// 1000 TFLOP/s peak, 2000 GB/s memory:
//  gemm: min(2e12 B/s x 1000, 1e15) = 1e15 FLOP/s (compute bound): 1e12 / 1e15 s = 1 ms.
//  copy: min(2e12 x 1, 1e15) = 2e12 FLOP/s (memory bound): 1e9 / 2e12 s = 500 us; it reaches
//        2e12 / 1e15 = 0.2% of peak compute and all of the memory bandwidth.
TEST(ComputeModels, RooflineTimesGpuNodesByTheirIntensity) {
  const chakra::Graph g = sample_graph();
  const auto model = make_compute_model(roofline(1000, 2000));
  EXPECT_EQ(model->duration(g, 0), Tick{1'000'000});
  EXPECT_EQ(model->duration(g, 1), Tick{500'000});
  EXPECT_EQ(model->duration(g, 2), Tick{1});       // CPU ops keep their recorded time
  EXPECT_EQ(model->duration(g, 3), std::nullopt);  // tensor_size 0: skipped
  const auto gemm = model->utilization(g, 0);
  ASSERT_TRUE(gemm);
  EXPECT_TRUE(gemm->compute_bound);
  EXPECT_DOUBLE_EQ(gemm->compute, 1.0);
  EXPECT_DOUBLE_EQ(gemm->memory, 0.5);  // 1e15 / 1000 B/s of 2e12
  EXPECT_DOUBLE_EQ(gemm->intensity, 1000.0);
  const auto copy = model->utilization(g, 1);
  ASSERT_TRUE(copy);
  EXPECT_FALSE(copy->compute_bound);
  EXPECT_DOUBLE_EQ(copy->compute, 0.002);
  EXPECT_DOUBLE_EQ(copy->memory, 1.0);
  EXPECT_FALSE(model->utilization(g, 2));  // CPU op
  EXPECT_FALSE(model->utilization(g, 3));  // no tensor
  EXPECT_TRUE(model->reports_utilization());
}

TEST(ComputeModels, RooflineNeedsNumOpsAndTensorSizeOnGpuNodes) {
  const chakra::Graph g = sample_graph();
  const auto model = make_compute_model(roofline(1000, 2000));
  EXPECT_EQ(model->check(g, 0), "");
  EXPECT_EQ(model->check(g, 2), "");  // CPU op
  EXPECT_EQ(model->check(g, 4), "roofline-enabled is set, so a GPU compute node needs the attributes \"num_ops\" and "
                                "\"tensor_size\"");
}

}  // namespace
}  // namespace chakrasim::compute
