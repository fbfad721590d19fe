// The bit-packed values of the system layer, each with a named pack and unpack and its layout:
// message tags (point-to-point, collective streams, rendezvous go-aheads), and the 64-bit
// arguments that timers and pending operations carry back to the system layer.
#pragma once

#include <cstdint>

#include "core/types.h"

namespace chakrasim::system::tags {

// Message tags. Bits 61 and 62 say which space a tag is in, so point-to-point tags, collective
// stream tags and go-aheads never share a value and no two kinds of message can be paired:
//   point-to-point  the trace's comm_tag, bits 0-60
//   collective      bit 61 | group id << 32 | the NPU's stream counter on that group (bits 0-31);
//                   the world group (id 0) counts its streams in bits 0-60
//   custom channel  a collective tag | (channel & 0xffff) << 40: custom algorithms run on the
//                   world group, whose counters stay below 2^40, so channels keep their own bits
//   go-ahead        bit 62 | the tag of the message it lets go
inline constexpr std::uint64_t kMask = (1ull << 61) - 1;
inline constexpr std::uint64_t kCollective = 1ull << 61;
inline constexpr std::uint64_t kGoAhead = 1ull << 62;

// A trace's comm_tag in the point-to-point space.
inline std::uint64_t p2p(std::int64_t tag) { return static_cast<std::uint64_t>(tag) & kMask; }

// The tag of a world collective's stream: the NPU's counter of world streams.
inline std::uint64_t world_stream(std::uint64_t counter) { return kCollective | counter; }
// The tag of a group collective's stream: group ids and per-group counters fit 29 and 32 bits.
inline std::uint64_t group_stream(std::uint32_t group_id, std::uint64_t counter) {
  return kCollective | (static_cast<std::uint64_t>(group_id) << 32) | counter;
}
// A custom algorithm's channel within its stream's tag.
inline std::uint64_t custom_channel(std::uint64_t stream_tag, std::int64_t channel) {
  return stream_tag | ((static_cast<std::uint64_t>(channel) & 0xffff) << 40);
}

}  // namespace chakrasim::system::tags

namespace chakrasim::system {

// Key of an NPU's stream counter on a communicator group: npu << 32 | group id.
inline std::uint64_t npu_group_key(NpuId npu, std::uint32_t group_id) {
  return (static_cast<std::uint64_t>(npu) << 32) | group_id;
}

// A step's endpoint-delay timer: the stream (bits 1-32) and whether the step reduces (bit 0).
struct StepTimerArg {
  std::uint32_t stream = 0;
  bool reduce = false;

  std::uint64_t pack() const { return (static_cast<std::uint64_t>(stream) << 1) | (reduce ? 1u : 0u); }
  static StepTimerArg unpack(std::uint64_t arg) { return {static_cast<std::uint32_t>(arg >> 1), (arg & 1u) != 0}; }
};

// A node of a stream's custom algorithm ET: the stream (high 32 bits) and the node (low 32).
struct CustomNodeRef {
  std::uint32_t stream = 0;
  std::uint32_t node = 0;

  std::uint64_t pack() const { return (static_cast<std::uint64_t>(stream) << 32) | node; }
  static CustomNodeRef unpack(std::uint64_t value) {
    return {static_cast<std::uint32_t>(value >> 32), static_cast<std::uint32_t>(value)};
  }
};

}  // namespace chakrasim::system
