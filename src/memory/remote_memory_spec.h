// What the user says about remote (disaggregated) memory (docs/astra-sim-model.md §1.4).
#pragma once

#include <cstdint>

namespace chakrasim::memory {

enum class RemoteMemoryKind : std::uint8_t { kNone, kPerNpu, kPerNode, kPool };

struct RemoteMemorySpec {
  RemoteMemoryKind kind = RemoteMemoryKind::kNone;
  std::uint64_t latency_ns = 0;
  std::uint64_t bandwidth_gb_per_s = 0;  // integer GB/s (10^9 B/s), as the reference reads it
  std::uint32_t nodes = 0;
  std::uint32_t npus_per_node = 0;
};

}  // namespace chakrasim::memory
