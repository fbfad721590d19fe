// A number written as a whole piece of text ("4096", "-1", "0.25"), as std::from_chars reads
// it: no leading spaces or '+', no "0x", nothing after it; a floating type also takes "inf",
// "infinity" and "nan" in any case, as from_chars does (a reader that wants finite numbers checks
// for them). Readers of every layer call this and say in their own words what they expected where
// it gives nothing.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace chakrasim {

// The number `text` is, all of it; nothing if it is empty, is not one, or is out of Number's range.
template <typename Number>
std::optional<Number> parse_number(std::string_view text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace chakrasim
