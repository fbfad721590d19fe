// Basic simulation types shared by every layer: simulated time and NPU ids.
#pragma once

#include <cstdint>
#include <limits>

namespace chakrasim {

// Simulated time. One tick is one nanosecond (ASTRA-sim calls it a "cycle").
using Tick = std::uint64_t;
inline constexpr Tick kNeverTick = std::numeric_limits<Tick>::max();

// Rank of an NPU, 0..N-1.
using NpuId = std::uint32_t;

}  // namespace chakrasim
