// The vocabulary of NCCL's collectives, as NCCL names them: the operations, the algorithms that
// run them and the protocols that move their bytes. Shared by the selection model (tuning.h),
// the achieved-time model (achieved.h) and the nccl-tests command.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace chakrasim::system::nccl {

// nccl-tests' names (all_reduce, ...). Broadcast to AllReduce in NCCL's own order.
enum class Collective : std::uint8_t {
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kAllToAll,
  kSendRecv
};
inline constexpr std::size_t kCollectives = 7;
// NCCL's algorithms, in its order (ncclAlgoStr).
// kMsccl: RCCL's MSCCL schedules (msccl.h), which run before RCCL's own choice where they apply.
enum class Algorithm : std::uint8_t { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat, kMsccl };
inline constexpr std::size_t kAlgorithms = 8;
// NCCL's protocols: LL (8-byte stores, half of them flags), LL128 (128-byte lines, 8 bytes of
// flag each) and Simple (bulk copies with a fence per chunk).
enum class Protocol : std::uint8_t { kLL, kLL128, kSimple };
inline constexpr std::size_t kProtocols = 3;

// "all_reduce" (nccl-tests), "Ring" and "LL128" (NCCL's spellings).
const char* collective_name(Collective c);
const char* algorithm_name(Algorithm a);
const char* protocol_name(Protocol p);
// Case-insensitive, as NCCL reads NCCL_ALGO and NCCL_PROTO; collectives also as NCCL names
// them ("allreduce") and as nccl-tests does ("all_reduce", its binary "all_reduce_perf").
std::optional<Collective> parse_collective(std::string_view text);
std::optional<Algorithm> parse_algorithm(std::string_view text);
std::optional<Protocol> parse_protocol(std::string_view text);

// `text` in lower case: names here are read case-insensitively, as NCCL reads its variables.
std::string lowercase(std::string_view text);

// Which (algorithm, protocol) pairs a run may use, per collective: NCCL_ALGO and NCCL_PROTO, and
// what a call's element type and reduction leave (call_types.h).
struct Enabled {
  std::array<std::array<bool, kAlgorithms>, kCollectives> algorithms{};
  std::array<std::array<bool, kProtocols>, kCollectives> protocols{};
  // NCCL ranks the ring last (its predicted time x 1024) for an 8-bit float call over more than
  // 8 ranks: a long ring of roundings loses precision (call_types.h sets it).
  bool ring_last = false;
  // NCCL_PROTO was given: a library that keeps LL128 off by default (RCCL on MI300X) then runs it
  // where the list leaves it on.
  bool protocols_set = false;
  // The call's element size: an MSCCL schedule needs a whole number of elements in each chunk.
  std::uint32_t element_bytes = 4;
  // The call writes its result over its input (nccl-tests' in-place column; PyTorch's all-reduce):
  // RCCL's MSCCL keeps schedules apart for such calls, and a ring all-gather does not copy its
  // own shard.
  bool in_place = false;
  static Enabled all();
};
// Applies an NCCL_ALGO (`algorithms` true) or NCCL_PROTO value as NCCL 2.30 reads it: a comma
// list ("Ring,Tree"), "^" to exclude instead ("^LL128"), and per-collective entries after the
// first, "allreduce:tree,ring;broadcast:ring". Throws Error naming `what` and the bad token.
void apply_enable_list(Enabled& enabled, std::string_view value, bool algorithms, const std::string& what);

}  // namespace chakrasim::system::nccl
