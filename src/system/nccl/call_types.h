// What a collective call reduces and in which element type (nccl-tests' -d and -o). The element's
// size sets nccl-tests' counts; the pair decides which algorithms NCCL may run (NCCL 2.30):
//
//   - NVLS and NVLS-tree reduce in the NVSwitches, which add 32- and 64-bit integers and 16-, 32-
//     and 64-bit floats, and take max / min of those integers and the 16-bit floats; nothing of 8
//     bits. NCCL's "avg" and a pre-multiplied sum are other operations to the switch (device.h,
//     ncclNvlsSupported). An all-gather reduces nothing and keeps NVLS.
//   - CollNet reduces in the InfiniBand switches (SHARP): sum, max and min of 16/32/64-bit types;
//     bfloat16 and 8-bit integers need SHARP v3 (Quantum-2, NDR, and later); never a product or
//     an 8-bit float (NVIDIA's SHARP plugin, typeConvert / opConvert). NCCL hands "avg" and a
//     pre-multiplied sum to the network as a sum. Only reductions ask.
//   - PAT has no reduce-scatter that scales ("avg", pre-multiplied sum).
//   - An 8-bit float call over more than 8 ranks ranks the ring last, whatever the collective
//     (NCCL asks the type alone): a long chain of roundings loses precision, so NCCL multiplies
//     the ring's predicted time by 1024.
//   - 8-bit floats reduce only from Hopper on; NCCL refuses the call before (InvalidArgument).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

struct Machine;

// nccl-tests' types, in its order.
enum class DataType : std::uint8_t {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kFloat,
  kDouble,
  kBfloat16,
  kFloat8E4M3,
  kFloat8E5M2
};
inline constexpr std::size_t kDataTypes = 12;
// nccl-tests' reduction operations, in its order ("mulsum": a sum of inputs each multiplied by a
// scalar first, ncclRedOpCreatePreMulSum).
enum class ReduceOp : std::uint8_t { kSum, kProd, kMax, kMin, kAvg, kMulSum };
inline constexpr std::size_t kReduceOps = 6;

// nccl-tests' spellings: "bfloat16", "f8e4m3", "mulsum". Parsing is exact, as nccl-tests' is.
const char* data_type_name(DataType t);
const char* reduce_op_name(ReduceOp op);
// "int8, uint8, ..." and "sum, prod, ...", in nccl-tests' order, for help and errors.
std::string data_type_names();
std::string reduce_op_names();
std::optional<DataType> parse_data_type(std::string_view text);
std::optional<ReduceOp> parse_reduce_op(std::string_view text);
std::uint32_t element_bytes(DataType t);
bool is_float8(DataType t);
// Collectives that reduce: the operation matters to them alone.
bool reduces(Collective c);
// nccl-tests runs its operations for these (send/receive too, which reduces nothing; the others
// print "none"), and its roots for a broadcast and a reduce.
bool takes_op(Collective c);
bool rooted(Collective c);

// Switches off in `enabled` what NCCL 2.30 would not run for collective `c` of `type` and `op`
// on `machine` (the header comment's rules), and sets its ring-last rule.
void restrict_to_call(Enabled& enabled, Collective c, DataType type, ReduceOp op, const Machine& machine);
// Throws Error where NCCL refuses the call: an 8-bit float reduction before Hopper.
void check_call(Collective c, DataType type, const Machine& machine);

}  // namespace chakrasim::system::nccl
