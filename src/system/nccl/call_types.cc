#include "system/nccl/call_types.h"

#include <array>

#include <fmt/format.h>

#include "core/error.h"
#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::array<const char*, kDataTypes> kDataTypeNames = {"int8",   "uint8",    "int32",  "uint32",
                                                                "int64",  "uint64",   "half",   "float",
                                                                "double", "bfloat16", "f8e4m3", "f8e5m2"};
constexpr std::array<std::uint32_t, kDataTypes> kElementBytes = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
constexpr std::array<const char*, kReduceOps> kReduceOpNames = {"sum", "prod", "max", "min", "avg", "mulsum"};

// The NVSwitches' reductions (the header's first rule).
bool nvls_reduces(DataType type, ReduceOp op) {
  const bool min_max = op == ReduceOp::kMax || op == ReduceOp::kMin;
  switch (type) {
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kHalf:
    case DataType::kBfloat16: return op == ReduceOp::kSum || min_max;
    case DataType::kFloat:
    case DataType::kDouble: return op == ReduceOp::kSum;
    default: return false;  // 8-bit integers and floats
  }
}

// SHARP's reductions, as NCCL asks for them (the header's second rule).
bool sharp_reduces(DataType type, ReduceOp op, const NicPreset& nic) {
  if (op == ReduceOp::kProd || is_float8(type)) return false;
  const bool sharp_v3_type = type == DataType::kBfloat16 || element_bytes(type) == 1;
  return !sharp_v3_type || nic.sharp_v3;
}

template <std::size_t N>
std::string joined(const std::array<const char*, N>& names) {
  std::string out;
  for (const char* name : names) out.append(out.empty() ? "" : ", ").append(name);
  return out;
}

// `text` as one of `names` exactly (nccl-tests compares with strcmp).
template <typename T, std::size_t N>
std::optional<T> named(const std::array<const char*, N>& names, std::string_view text) {
  for (std::size_t i = 0; i < N; ++i) {
    if (text == names[i]) return static_cast<T>(i);
  }
  return std::nullopt;
}

void switch_off(Enabled& enabled, Collective c, Algorithm a) {
  enabled.algorithms[static_cast<std::size_t>(c)][static_cast<std::size_t>(a)] = false;
}

}  // namespace

const char* data_type_name(DataType t) { return kDataTypeNames[static_cast<std::size_t>(t)]; }
const char* reduce_op_name(ReduceOp op) { return kReduceOpNames[static_cast<std::size_t>(op)]; }
std::uint32_t element_bytes(DataType t) { return kElementBytes[static_cast<std::size_t>(t)]; }
bool is_float8(DataType t) { return t == DataType::kFloat8E4M3 || t == DataType::kFloat8E5M2; }

bool reduces(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}
bool takes_op(Collective c) { return reduces(c) || c == Collective::kSendRecv; }
bool rooted(Collective c) { return c == Collective::kBroadcast || c == Collective::kReduce; }

std::string data_type_names() { return joined(kDataTypeNames); }
std::string reduce_op_names() { return joined(kReduceOpNames); }
std::optional<DataType> parse_data_type(std::string_view text) { return named<DataType>(kDataTypeNames, text); }
std::optional<ReduceOp> parse_reduce_op(std::string_view text) { return named<ReduceOp>(kReduceOpNames, text); }

void restrict_to_call(Enabled& enabled, Collective c, DataType type, ReduceOp op, const Machine& machine) {
  // Of the collectives that reduce nothing, only the all-gather has NVLS.
  if (c != Collective::kAllGather && !nvls_reduces(type, op)) {
    switch_off(enabled, c, Algorithm::kNvls);
    switch_off(enabled, c, Algorithm::kNvlsTree);
  }
  if (machine.collnet && reduces(c) && !sharp_reduces(type, op, *machine.nic)) {
    switch_off(enabled, c, Algorithm::kCollNetDirect);
    switch_off(enabled, c, Algorithm::kCollNetChain);
  }
  if (c == Collective::kReduceScatter && (op == ReduceOp::kAvg || op == ReduceOp::kMulSum)) {
    switch_off(enabled, c, Algorithm::kPat);
  }
  enabled.ring_last = is_float8(type) && machine.ranks() > 8;
  enabled.element_bytes = element_bytes(type);
  // RCCL's MSCCL schedules reduce with sum, product, min and max only (not avg or premulsum).
  if (op == ReduceOp::kAvg || op == ReduceOp::kMulSum) switch_off(enabled, c, Algorithm::kMsccl);
}

void check_call(Collective c, DataType type, const Machine& machine) {
  if (reduces(c) && is_float8(type) && machine.gpu->compute_capability < 90) {
    throw Error(fmt::format("{} of {} on {}: NCCL reduces 8-bit floats from Hopper on; expected a 16-bit or wider "
                            "type, or a Hopper or later GPU",
                            collective_name(c), data_type_name(type), machine.gpu->name));
  }
}

}  // namespace chakrasim::system::nccl
