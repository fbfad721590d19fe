// Byte sizes as people write them: "64MiB", "1GB", "1.5 GiB", "512kib", "100B", "4096".
// KB, MB, GB, TB are powers of 1000 and KiB, MiB, GiB, TiB powers of 1024 (a lone K, M, G, T
// too is 1000-based); case and a space before the unit do not matter.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace chakrasim {

// The bytes `text` says; nullopt unless it is a number (decimals allowed) with an optional unit
// that makes a whole number of bytes below 2^63.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace chakrasim
