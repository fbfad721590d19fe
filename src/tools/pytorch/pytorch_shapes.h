// The operation shapes of a PyTorch trace's matrix products and convolutions, from the input
// shapes and values the execution-trace observer records (docs/chakra-format.md §1.6): what the
// converter attaches to the kernels they launch with --op-shapes.
#pragma once

#include <optional>

#include "chakra/op_shape.h"
#include "tools/pytorch/pytorch_ops.h"

namespace chakrasim::tools::pytorch {

// The shape of `op` when it is aten::mm, addmm, bmm, baddbmm, linear, or a 2-D convolution
// (convolution, _convolution, conv2d) without groups, dilation or transposition, and its inputs
// give every dimension; nullopt otherwise. A convolution's padding is added to its ifmap.
std::optional<chakra::OpShape> shape_of_op(const Op& op);

}  // namespace chakrasim::tools::pytorch
