// The range of simulated time, and the one checked way from a computed duration to ticks.
//
// Time is a 64-bit count of nanoseconds. A run may reach kMaxSimulatedNs (2^62 ns, 146 years);
// every duration a model computes is checked against it when it becomes ticks, and every event
// time when it is scheduled, so that adding a duration to a time never wraps and a float that is
// infinite, NaN or beyond the range (bandwidth 1e-300, --injection-scale inf) never reaches an
// undefined float-to-integer conversion. A figure is either exact or refused with a message.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/types.h"

namespace chakrasim {

inline constexpr Tick kMaxSimulatedNs = Tick{1} << 62;

// Sizes of one message, tensor or collective a trace may give: 2^53 bytes (8 PiB). Doubles hold
// every such size exactly, so a time computed from one in floating point is exact to the byte.
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 53;

// How a message states the limit.
inline std::string simulated_time_limit_text() { return "4611686018427387904 ns (2^62 ns, 146 years)"; }

// `ns` truncated to whole nanoseconds, as the reference truncates. Throws Error, starting with
// `describe()` (what takes that long: "a message of 64 bytes from NPU 0 to NPU 1"), when `ns` is
// not a number, negative or beyond kMaxSimulatedNs.
template <typename Describe>
Tick ticks_from_ns(double ns, Describe&& describe) {
  if (!(ns >= 0) || !(ns <= static_cast<double>(kMaxSimulatedNs))) {
    fail("{} would take {} ns; expected a time from 0 to {} (check the sizes, bandwidths and latencies that "
         "give it)",
         describe(), ns, simulated_time_limit_text());
  }
  return static_cast<Tick>(ns);
}

// now + delay, when it stays within kMaxSimulatedNs; Error from `describe()` otherwise.
template <typename Describe>
Tick time_after(Tick now, Tick delay, Describe&& describe) {
  if (delay > kMaxSimulatedNs || now > kMaxSimulatedNs - delay) {
    fail("{} would end at {} + {} ns, beyond the simulated time a run can reach, {}", describe(), now, delay,
         simulated_time_limit_text());
  }
  return now + delay;
}

}  // namespace chakrasim
