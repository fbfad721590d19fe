// Covers chakra/op_shape.h and how graphs read the gemm, conv and pass attributes: the GEMM each
// pass runs, the checks on the values, and both readers (protobuf and the wire) agreeing.
#include "chakra/op_shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "chakra/trace_builder.h"
#include "support/test_support.h"

namespace chakrasim::chakra {
namespace {

using ::testing::HasSubstr;
using Dims = std::vector<std::int64_t>;

OpShape shape_of(std::optional<Dims> gemm, std::optional<Dims> conv = std::nullopt,
                 std::optional<std::string_view> pass = std::nullopt) {
  std::optional<std::span<const std::int64_t>> g, c;
  if (gemm) g = *gemm;
  if (conv) c = *conv;
  return make_op_shape(g, c, pass).value();
}

void expect_gemm(const OpShape::Gemm& g, std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint64_t count) {
  EXPECT_EQ(g.m, m);
  EXPECT_EQ(g.n, n);
  EXPECT_EQ(g.k, k);
  EXPECT_EQ(g.count, count);
}

TEST(OpShape, EachPassRunsItsTransposedGemm) {
  // Y[M,N] = X[M,K] W[K,N]; dX[M,K] = dY[M,N] W^T[N,K]; dW[K,N] = X^T[K,M] dY[M,N].
  expect_gemm(shape_of(Dims{128, 64, 32}).gemm(), 128, 64, 32, 1);
  expect_gemm(shape_of(Dims{128, 64, 32}, std::nullopt, "input_gradient").gemm(), 128, 32, 64, 1);
  expect_gemm(shape_of(Dims{128, 64, 32, 6}, std::nullopt, "weight_gradient").gemm(), 32, 64, 128, 6);
  EXPECT_EQ(shape_of(Dims{128, 64, 32, 6}).macs(), 128u * 64 * 32 * 6);
}

TEST(OpShape, AConvolutionIsPixelsByFiltersByWindow) {
  // 56x56 ifmap, 3x3 filters, stride 1: 54x54 ofmap pixels per image; 2 images; window 3x3x64.
  const OpShape conv = shape_of(std::nullopt, Dims{56, 56, 3, 3, 64, 128, 1, 1, 2});
  expect_gemm(conv.gemm(), 54u * 54 * 2, 128, 9u * 64, 1);
  // Stride 2 in height only: (56 - 3) / 2 + 1 = 27 rows.
  expect_gemm(shape_of(std::nullopt, Dims{56, 56, 3, 3, 64, 128, 2, 1}).gemm(), 27u * 54, 128, 9u * 64, 1);
  EXPECT_EQ(conv.describe(), "conv 56x56 3x3 64->128 /1 batch 2");
  EXPECT_EQ(shape_of(Dims{8, 4, 2, 3}, std::nullopt, "weight_gradient").describe(), "gemm 3x(8x4x2) weight_gradient");
}

TEST(OpShape, BadValuesAreRefusedWithWhatWasExpected) {
  auto error = [](std::optional<Dims> gemm, std::optional<Dims> conv, std::optional<std::string_view> pass) {
    return test::error_of([&] { shape_of(gemm, conv, pass); });
  };
  EXPECT_THAT(error(Dims{1, 2}, std::nullopt, std::nullopt), HasSubstr("\"gemm\" has 2 values; expected [M, N, K]"));
  EXPECT_THAT(error(Dims{1, 0, 2}, std::nullopt, std::nullopt), HasSubstr("value 1 is 0; every dimension"));
  EXPECT_THAT(error(Dims{1, 2, 3}, Dims{1}, std::nullopt), HasSubstr("both attributes"));
  EXPECT_THAT(error(std::nullopt, std::nullopt, "forward"), HasSubstr("without \"gemm\" or \"conv\""));
  EXPECT_THAT(error(Dims{1, 2, 3}, std::nullopt, "backward"), HasSubstr("expected forward, input_gradient"));
  EXPECT_THAT(error(std::nullopt, Dims{4, 4, 5, 1, 1, 1, 1, 1}, std::nullopt), HasSubstr("filter (5x1) is larger than "
                                                                                         "the ifmap (4x4)"));
}

Trace trace_with_shapes() {
  TraceBuilder b;
  b.node(NodeType::kComp, "mm")
      .attr(make_int64_list("gemm", {512, 256, 64}))
      .attr(make_string("pass", "input_gradient"));
  b.node(NodeType::kComp, "conv").attr(make_int64_list("conv", {8, 8, 3, 3, 4, 16, 1, 1}));
  b.node(NodeType::kComp, "mm again")
      .attr(make_int64_list("gemm", {512, 256, 64}))
      .attr(make_string("pass", "input_gradient"));
  b.node(NodeType::kComp, "plain");
  return b.trace();
}

TEST(OpShape, GraphsKeepEachDistinctShapeOnceAndBothReadersAgree) {
  const Trace t = trace_with_shapes();
  const Graph built = Graph::build(t, "s.et");
  const Graph parsed = Graph::parse(serialize_trace(t), "s.et");
  for (const Graph* g : {&built, &parsed}) {
    ASSERT_NE(g->op_shape(0), nullptr);
    expect_gemm(g->op_shape(0)->gemm(), 512, 64, 256, 1);
    EXPECT_EQ(g->op_shape(1)->kind, OpShape::Kind::kConv);
    EXPECT_EQ(g->attrs(2).shape, g->attrs(0).shape);  // one entry for both
    EXPECT_EQ(g->op_shape(3), nullptr);
  }
  for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(*built.op_shape(i), *parsed.op_shape(i));
}

TEST(OpShape, AGraphNamesTheNodeOfABadShape) {
  Trace t = trace_with_shapes();
  *t.nodes[1].mutable_attr(0) = make_int64_list("conv", {8, 8, 3});
  const std::string built = test::error_of([&] { Graph::build(t, "s.et"); });
  EXPECT_THAT(built, HasSubstr("s.et: node 1 (\"conv\"): attribute \"conv\" has 3 values"));
  EXPECT_EQ(test::error_of([&] { Graph::parse(serialize_trace(t), "s.et"); }), built);
  // Another integer list type reads the same; a scalar is the wrong type.
  Attribute u32;
  u32.set_name("gemm");
  for (const std::uint32_t v : {2u, 3u, 4u}) u32.mutable_uint32_list()->add_values(v);
  *t.nodes[1].mutable_attr(0) = u32;
  expect_gemm(Graph::parse(serialize_trace(t), "s.et").op_shape(1)->gemm(), 2, 3, 4, 1);
  *t.nodes[1].mutable_attr(0) = make_int64("gemm", 4);
  EXPECT_THAT(test::error_of([&] { Graph::parse(serialize_trace(t), "s.et"); }), HasSubstr("attribute \"gemm\" holds "
                                                                                           "int64_val 4; expected an "
                                                                                           "integer list"));
}

}  // namespace
}  // namespace chakrasim::chakra
