// The text converter's layer shapes (tools/text/text_shapes.cc and `convert text --shapes`):
// every compute node of a layer gets the layer's shape with its phase's pass, in the reference's
// modes and the hybrid ones; a count or name that cannot match is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "support/test_support.h"
#include "tools/text/text_converter.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kData = "DATA\n2\nconv1 -1 10 NONE 0 11 NONE 0 12 ALLREDUCE 8 1\n"
                              "fc -1 20 NONE 0 21 NONE 0 22 ALLREDUCE 8 1\n";

std::vector<chakra::OpShape> shapes() {
  chakra::OpShape conv;
  conv.kind = chakra::OpShape::Kind::kConv;
  conv.dims = {32, 32, 3, 3, 8, 16, 1, 1, 1};
  chakra::OpShape fc;
  fc.dims = {64, 10, 256, 1};
  return {conv, fc};
}

TEST(TextShapes, EachPhaseGetsItsLayersShapeAndPass) {
  tools::TextOptions o{2, 1, 0, shapes()};
  const std::vector<chakra::Trace> traces = tools::convert_text(kData, "w.txt", o);
  ASSERT_EQ(traces.size(), 2u);
  const chakra::Graph g = chakra::Graph::build(traces[1], "w.1.et");
  std::size_t shaped = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    if (g.type(i) != chakra::NodeType::kComp) continue;
    const chakra::OpShape* s = g.op_shape(i);
    ASSERT_NE(s, nullptr) << g.name(i);
    ++shaped;
    const std::string& name = g.name(i);
    EXPECT_EQ(s->kind,
              name.find("conv1") != std::string::npos ? chakra::OpShape::Kind::kConv : chakra::OpShape::Kind::kGemm)
        << name;
    const chakra::OpShape::Pass pass = name.ends_with("_BWD_IG")   ? chakra::OpShape::Pass::kInputGradient
                                       : name.ends_with("_BWD_WG") ? chakra::OpShape::Pass::kWeightGradient
                                                                   : chakra::OpShape::Pass::kForward;
    EXPECT_EQ(s->pass, pass) << name;
  }
  // DATA writes the forward of both layers and both gradients of each (the first layer's input
  // gradient is not run): 5 compute nodes.
  EXPECT_EQ(shaped, 5u);
  // The recorded durations stay: other compute models still replay them.
  EXPECT_EQ(traces[0].nodes[0].duration_micros(), 10u);
}

TEST(TextShapes, HybridKindsGetThemToo) {
  const std::string text = "HYBRID_TRANSFORMER model_parallel_NPU_group: 2\n2\n"
                           "conv1 -1 10 ALLREDUCE 8 11 ALLREDUCE 8 12 ALLREDUCE 8 1\n"
                           "fc -1 20 ALLREDUCE 8 21 ALLREDUCE 8 22 ALLREDUCE 8 1\n";
  const std::vector<chakra::Trace> traces = tools::convert_text(text, "h.txt", tools::TextOptions{4, 1, 0, shapes()});
  const chakra::Graph g = chakra::Graph::build(traces[0], "h.0.et");
  std::size_t compute_nodes = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    if (g.type(i) == chakra::NodeType::kComp) {
      ++compute_nodes;
      EXPECT_NE(g.op_shape(i), nullptr) << g.name(i);
    }
  }
  EXPECT_GE(compute_nodes, 5u);
}

TEST(TextShapes, ShapesThatCannotMatchAreRefused) {
  std::vector<chakra::OpShape> one = shapes();
  one.pop_back();
  EXPECT_THAT(error_of([&] {
                tools::convert_text(kData, "w.txt", tools::TextOptions{1, 1, 0, one});
              }),
              HasSubstr("w.txt: 2 layers, but the shapes give 1; expected one shape per layer"));
  const std::string twice = "DATA\n2\nfc -1 10 NONE 0 11 NONE 0 12 NONE 0 1\nfc -1 20 NONE 0 21 NONE 0 22 NONE 0 1\n";
  EXPECT_THAT(error_of([&] {
                tools::convert_text(twice, "w.txt", tools::TextOptions{1, 1, 0, shapes()});
              }),
              HasSubstr("w.txt: line 4: layer \"fc\" has the name of an earlier layer"));
}

TEST(TextShapes, TheCliReadsAScaleSimTopology) {
  const auto dir = temp_dir("text_shapes_cli");
  write_bytes(dir / "w.txt", kData);
  write_bytes(dir / "t.csv", "Layer,M,N,K,\nconv1,900,16,72,\nfc,64,10,256,\n");
  const CommandResult r =
      run_binary({"chakra", "convert", "text", (dir / "w.txt").string(), "--npus", "1", "--passes", "1", "--out",
                  (dir / "w").string(), "--shapes", (dir / "t.csv").string(), "--gemm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const chakra::Graph g = chakra::Graph::parse(file_bytes(dir / "w.0.et"), "w.0.et");
  const chakra::OpShape::Gemm fwd = g.op_shape(0)->gemm();  // conv1's forward, as M, N, K
  EXPECT_EQ(fwd.m, 900u);
  EXPECT_EQ(fwd.n, 16u);
  EXPECT_EQ(fwd.k, 72u);
  const CommandResult gemm_alone = run_binary({"chakra", "convert", "text", (dir / "w.txt").string(), "--npus", "1",
                                               "--passes", "1", "--out", (dir / "x").string(), "--gemm"});
  EXPECT_EQ(gemm_alone.exit_code, 1);
  EXPECT_THAT(gemm_alone.err, HasSubstr("--gemm: expected --shapes"));
}

}  // namespace
}  // namespace chakrasim::test
