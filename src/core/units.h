// Sizes and durations as people write them on a command line.
//
// Byte sizes: "64MiB", "1GB", "1.5 GiB", "512kib", "100B", "4096". KB, MB, GB, TB are powers of
// 1000 and KiB, MiB, GiB, TiB powers of 1024 (a lone K, M, G, T too is 1000-based); case and
// spaces do not matter.
//
// Durations: "2.5ms", "300us" (or µs), "10s", "1500ns", "1500" (ns).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace chakrasim {

// The bytes `text` says; nullopt unless it is a number (decimals allowed) with an optional unit
// that makes a whole number of bytes below 2^63.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

// The nanoseconds `text` says, rounded to the nearest; nullopt unless it is a number with an
// optional unit ns, us, µs, ms or s and below 2^63 ns.
std::optional<std::uint64_t> parse_duration_ns(std::string_view text);

}  // namespace chakrasim
