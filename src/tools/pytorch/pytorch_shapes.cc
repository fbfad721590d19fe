#include "tools/pytorch/pytorch_shapes.h"

#include <vector>

namespace chakrasim::tools::pytorch {
namespace {

// Input `index`'s shape ("inputs"."shapes"[index]) as positive integers; nullopt if absent or not.
std::optional<std::vector<std::uint64_t>> input_shape(const Op& op, std::size_t index) {
  const Json& shapes = (*op.json)["inputs"]["shapes"];
  if (!shapes.is_array() || index >= shapes.size() || !shapes[index].is_array()) return std::nullopt;
  std::vector<std::uint64_t> dims;
  for (const Json& d : shapes[index]) {
    const std::optional<std::uint64_t> v = as_uint64(d);
    if (!v || *v == 0) return std::nullopt;
    dims.push_back(*v);
  }
  return dims;
}

// Input `index`'s value as a list of integers (a stride, a padding), or one integer repeated.
std::optional<std::vector<std::int64_t>> input_ints(const Op& op, std::size_t index, std::size_t count) {
  const Json& values = (*op.json)["inputs"]["values"];
  if (!values.is_array() || index >= values.size()) return std::nullopt;
  const Json& v = values[index];
  std::vector<std::int64_t> out;
  if (v.is_array()) {
    for (const Json& x : v) {
      const std::optional<std::int64_t> i = as_int64(x);
      if (!i) return std::nullopt;
      out.push_back(*i);
    }
  } else if (const std::optional<std::int64_t> i = as_int64(v)) {
    out.assign(count, *i);
  }
  if (out.size() == 1) out.assign(count, out[0]);
  if (out.size() != count) return std::nullopt;
  return out;
}

chakra::OpShape gemm(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint64_t count) {
  chakra::OpShape s;
  s.dims = {m, n, k, count};
  return s;
}

// C = A B from A's and B's shapes, [.., M, K] and [.., K, N] with `batched` leading dimensions.
std::optional<chakra::OpShape> product(const Op& op, std::size_t a_index, std::size_t b_index, bool batched) {
  const auto a = input_shape(op, a_index), b = input_shape(op, b_index);
  const std::size_t rank = batched ? 3 : 2;
  if (!a || !b || a->size() != rank || b->size() != rank || (*a)[rank - 1] != (*b)[rank - 2]) return std::nullopt;
  if (batched && (*a)[0] != (*b)[0]) return std::nullopt;
  return gemm((*a)[rank - 2], (*b)[rank - 1], (*a)[rank - 1], batched ? (*a)[0] : 1);
}

// y = x W^T + b: x [.., K], W [N, K]; every leading dimension of x is a row.
std::optional<chakra::OpShape> linear(const Op& op) {
  const auto x = input_shape(op, 0), w = input_shape(op, 1);
  if (!x || !w || x->empty() || w->size() != 2 || x->back() != (*w)[1]) return std::nullopt;
  std::uint64_t rows = 1;
  for (std::size_t i = 0; i + 1 < x->size(); ++i) rows *= (*x)[i];
  return gemm(rows, (*w)[0], x->back(), 1);
}

// aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups) and _convolution (the same, then flags); conv2d(input, weight, bias, stride, padding,
// dilation, groups).
std::optional<chakra::OpShape> convolution(const Op& op, std::size_t groups_index, bool has_transposed) {
  const auto x = input_shape(op, 0), w = input_shape(op, 1);
  if (!x || !w || x->size() != 4 || w->size() != 4 || (*x)[1] != (*w)[1]) return std::nullopt;  // groups
  const auto stride = input_ints(op, 3, 2), padding = input_ints(op, 4, 2), dilation = input_ints(op, 5, 2);
  const auto groups = input_ints(op, groups_index, 1);
  if (!stride || !padding || !dilation || !groups || (*groups)[0] != 1) return std::nullopt;
  if ((*dilation)[0] != 1 || (*dilation)[1] != 1 || (*stride)[0] < 1 || (*stride)[1] < 1) return std::nullopt;
  if ((*padding)[0] < 0 || (*padding)[1] < 0) return std::nullopt;
  if (has_transposed) {
    const Json& values = (*op.json)["inputs"]["values"];
    if (values.size() <= 6 || !values[6].is_boolean() || values[6].get<bool>()) return std::nullopt;
  }
  chakra::OpShape s;
  s.kind = chakra::OpShape::Kind::kConv;
  const std::uint64_t h = (*x)[2] + 2 * static_cast<std::uint64_t>((*padding)[0]);
  const std::uint64_t wd = (*x)[3] + 2 * static_cast<std::uint64_t>((*padding)[1]);
  if ((*w)[2] > h || (*w)[3] > wd) return std::nullopt;
  s.dims = {h,
            wd,
            (*w)[2],
            (*w)[3],
            (*x)[1],
            (*w)[0],
            static_cast<std::uint64_t>((*stride)[0]),
            static_cast<std::uint64_t>((*stride)[1]),
            (*x)[0]};
  return s;
}

}  // namespace

std::optional<chakra::OpShape> shape_of_op(const Op& op) {
  const std::string& n = op.name;
  if (n == "aten::mm") return product(op, 0, 1, false);
  if (n == "aten::addmm") return product(op, 1, 2, false);
  if (n == "aten::bmm") return product(op, 0, 1, true);
  if (n == "aten::baddbmm") return product(op, 1, 2, true);
  if (n == "aten::linear") return linear(op);
  if (n == "aten::convolution" || n == "aten::_convolution") return convolution(op, 8, true);
  if (n == "aten::conv2d") return convolution(op, 6, false);
  return std::nullopt;
}

}  // namespace chakrasim::tools::pytorch
