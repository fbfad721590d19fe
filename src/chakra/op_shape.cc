#include "chakra/op_shape.h"

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/trace_builder.h"
#include "core/error.h"

namespace chakrasim::chakra {
namespace {

std::uint64_t saturating_product(std::initializer_list<std::uint64_t> factors) {
  std::uint64_t product = 1;
  for (const std::uint64_t f : factors) {
    if (f != 0 && product > UINT64_MAX / f) return UINT64_MAX;
    product *= f;
  }
  return product;
}

// Copies `values` into dims after checking the count and that each is at least 1.
void take(std::string_view attr, std::span<const std::int64_t> values, std::size_t required, std::size_t optional,
          const char* layout, OpShape& shape) {
  if (values.size() != required && values.size() != required + optional) {
    fail("attribute \"{}\" has {} values; expected {}", attr, values.size(), layout);
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 1) fail("attribute \"{}\" value {} is {}; every dimension must be at least 1", attr, i, values[i]);
    shape.dims[i] = static_cast<std::uint64_t>(values[i]);
  }
  if (values.size() == required) shape.dims[required] = 1;
}

}  // namespace

const char* pass_name(OpShape::Pass pass) {
  switch (pass) {
    case OpShape::Pass::kForward: return "forward";
    case OpShape::Pass::kInputGradient: return "input_gradient";
    case OpShape::Pass::kWeightGradient: return "weight_gradient";
  }
  return "?";
}

std::optional<OpShape::Pass> pass_of(std::string_view name) {
  for (const OpShape::Pass p :
       {OpShape::Pass::kForward, OpShape::Pass::kInputGradient, OpShape::Pass::kWeightGradient}) {
    if (name == pass_name(p)) return p;
  }
  return std::nullopt;
}

OpShape::Gemm OpShape::gemm() const {
  Gemm g;
  if (kind == Kind::kGemm) {
    g = {dims[0], dims[1], dims[2], dims[3]};
  } else {
    const std::uint64_t ofmap_h = (dims[0] - dims[2]) / dims[6] + 1;
    const std::uint64_t ofmap_w = (dims[1] - dims[3]) / dims[7] + 1;
    g = {saturating_product({ofmap_h, ofmap_w, dims[8]}), dims[5], saturating_product({dims[2], dims[3], dims[4]}), 1};
  }
  switch (pass) {
    case Pass::kForward: return g;
    case Pass::kInputGradient: return {g.m, g.k, g.n, g.count};
    case Pass::kWeightGradient: return {g.k, g.n, g.m, g.count};
  }
  return g;
}

std::uint64_t OpShape::macs() const {
  const Gemm g = gemm();
  return saturating_product({g.m, g.n, g.k, g.count});
}

std::string OpShape::describe() const {
  std::string out;
  if (kind == Kind::kGemm) {
    out = dims[3] == 1 ? fmt::format("gemm {}x{}x{}", dims[0], dims[1], dims[2])
                       : fmt::format("gemm {}x({}x{}x{})", dims[3], dims[0], dims[1], dims[2]);
  } else {
    out = fmt::format("conv {}x{} {}x{} {}->{} /{}", dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6]);
    if (dims[7] != dims[6]) out += fmt::format("x{}", dims[7]);
    if (dims[8] != 1) out += fmt::format(" batch {}", dims[8]);
  }
  if (pass != Pass::kForward) out += fmt::format(" {}", pass_name(pass));
  return out;
}

void add_shape_attributes(Node& node, const OpShape& shape) {
  const std::size_t count = shape.kind == OpShape::Kind::kGemm ? 4 : 9;
  std::vector<std::int64_t> dims(shape.dims.begin(), shape.dims.begin() + static_cast<std::ptrdiff_t>(count));
  if (dims.back() == 1) dims.pop_back();  // count / batch 1 is the default
  *node.add_attr() = make_int64_list(shape.kind == OpShape::Kind::kGemm ? "gemm" : "conv", dims);
  if (shape.pass != OpShape::Pass::kForward) *node.add_attr() = make_string("pass", pass_name(shape.pass));
}

std::optional<OpShape> make_op_shape(std::optional<std::span<const std::int64_t>> gemm,
                                     std::optional<std::span<const std::int64_t>> conv,
                                     std::optional<std::string_view> pass) {
  if (gemm && conv) fail("both attributes \"gemm\" and \"conv\" are present; a node runs one operation");
  if (!gemm && !conv) {
    if (pass) fail("attribute \"pass\" is present without \"gemm\" or \"conv\" to give the layer's shape");
    return std::nullopt;
  }
  OpShape shape;
  if (pass) {
    const auto p = pass_of(*pass);
    if (!p) fail("attribute \"pass\" is \"{}\"; expected forward, input_gradient or weight_gradient", *pass);
    shape.pass = *p;
  }
  if (gemm) {
    take(kGemmAttr, *gemm, 3, 1, "[M, N, K] or [M, N, K, count]", shape);
  } else {
    shape.kind = OpShape::Kind::kConv;
    take(kConvAttr, *conv, 8, 1,
         "[ifmap_h, ifmap_w, filter_h, filter_w, channels, filters, stride_h, stride_w] and optionally batch", shape);
    if (shape.dims[2] > shape.dims[0] || shape.dims[3] > shape.dims[1]) {
      fail("attribute \"conv\": the filter ({}x{}) is larger than the ifmap ({}x{})", shape.dims[2], shape.dims[3],
           shape.dims[0], shape.dims[1]);
    }
  }
  return shape;
}

}  // namespace chakrasim::chakra
