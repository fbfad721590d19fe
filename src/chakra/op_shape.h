// The shape of the operation a compute node runs, for models that time it from its dimensions
// (the systolic array) rather than from num_ops and tensor_size. Three node attributes carry it
// (docs/chakra-format.md, "Operation shapes"):
//   gemm  int list [M, N, K] or [M, N, K, count]: an M x K by K x N product, `count` times over
//         independent operands (a batched GEMM; 1 when absent);
//   conv  int list [ifmap_h, ifmap_w, filter_h, filter_w, channels, filters, stride_h, stride_w]
//         or that and [batch]: `batch` images through the same filters (1 when absent);
//   pass  string "forward" (when absent), "input_gradient" or "weight_gradient": which of the
//         layer's three GEMMs the node runs. gemm and conv always give the forward layer.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "chakra/et_file.h"

namespace chakrasim::chakra {

struct OpShape {
  enum class Kind : std::uint8_t { kGemm, kConv };
  enum class Pass : std::uint8_t { kForward, kInputGradient, kWeightGradient };
  Kind kind = Kind::kGemm;
  Pass pass = Pass::kForward;
  // gemm: M, N, K, count; conv: ifmap_h, ifmap_w, filter_h, filter_w, channels, filters,
  // stride_h, stride_w, batch. Unused entries are 0.
  std::array<std::uint64_t, 9> dims{};

  // The GEMM the node runs: the forward layer as rows x columns x inner (a convolution as ofmap
  // pixels of all images x filters x window elements), transposed for the backward passes as
  // ASTRA-sim 1.0 derived them from one layer:
  //   forward          M x N, inner K  (Y = X W)
  //   input_gradient   M x K, inner N  (dX = dY W^T)
  //   weight_gradient  K x N, inner M  (dW = X^T dY)
  struct Gemm {
    std::uint64_t m = 0, n = 0, k = 0, count = 1;
  };
  Gemm gemm() const;
  // Multiply-accumulates of the whole node: M x N x K x count (saturating).
  std::uint64_t macs() const;
  // "gemm 128x64x32", "gemm 4x(128x64x32)", "conv 56x56 3x3 64->64 /1" and the pass if backward.
  std::string describe() const;

  auto operator<=>(const OpShape&) const = default;
};

// The attribute names, and the pass's spellings.
inline constexpr std::string_view kGemmAttr = "gemm";
inline constexpr std::string_view kConvAttr = "conv";
inline constexpr std::string_view kPassAttr = "pass";
const char* pass_name(OpShape::Pass pass);
std::optional<OpShape::Pass> pass_of(std::string_view name);

// Appends the attributes that give `shape` to `node` (gemm or conv, and pass unless forward).
void add_shape_attributes(Node& node, const OpShape& shape);

// The shape from the attributes' values (absent: nullopt/empty). Throws Error naming the
// attribute and what was expected for a wrong length, a value below 1, a filter larger than the
// ifmap, both gemm and conv, or pass without either.
std::optional<OpShape> make_op_shape(std::optional<std::span<const std::int64_t>> gemm,
                                     std::optional<std::span<const std::int64_t>> conv,
                                     std::optional<std::string_view> pass);

}  // namespace chakrasim::chakra
