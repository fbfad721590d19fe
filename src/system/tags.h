// Message tag spaces of the system layer: point-to-point tags, collective stream tags and
// rendezvous go-aheads never share a value, so no two kinds of message can ever be paired.
#pragma once

#include <cstdint>

namespace chakrasim::system::tags {

inline constexpr std::uint64_t kMask = (1ull << 61) - 1;
inline constexpr std::uint64_t kCollective = 1ull << 61;
inline constexpr std::uint64_t kGoAhead = 1ull << 62;

// A trace's comm_tag in the point-to-point space.
inline std::uint64_t p2p(std::int64_t tag) { return static_cast<std::uint64_t>(tag) & kMask; }

}  // namespace chakrasim::system::tags
