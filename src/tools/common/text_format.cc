#include "tools/common/text_format.h"

#include <array>
#include <charconv>
#include <cstdlib>
#include <iterator>

#include <fmt/format.h>

namespace chakrasim::tools {

std::optional<Utf8Char> decode_utf8(std::string_view text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  if (lead < 0x80) return Utf8Char{lead, 1};
  // C0, C1 and F5..FF never start a character; 80..BF only continue one.
  const std::size_t length = lead >= 0xc2 && lead <= 0xdf   ? 2
                             : lead >= 0xe0 && lead <= 0xef ? 3
                             : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                            : 0;
  if (length == 0 || at + length > text.size()) return std::nullopt;
  char32_t code_point = lead & (0x7fu >> length);
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[at + k]);
    if ((next & 0xc0) != 0x80) return std::nullopt;
    code_point = (code_point << 6) | (next & 0x3fu);
  }
  constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};  // below it, the form is overlong
  if (code_point < kSmallest[length] || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) {
    return std::nullopt;
  }
  return Utf8Char{code_point, length};
}

std::string python_float_repr(double value) {
  // to_chars gives the shortest round-trip digits; only the layout is Python's.
  std::array<char, 64> buffer;
  const auto end =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::scientific).ptr;
  std::string_view text(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
  std::string out;
  if (text.front() == '-') {
    out += '-';
    text.remove_prefix(1);
  }
  const std::size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  std::string_view exponent_text = text.substr(e + 1);
  const bool negative_exponent = exponent_text.front() == '-';
  exponent_text.remove_prefix(1);  // to_chars always writes the exponent's sign
  int exponent = 0;
  std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);
  if (negative_exponent) exponent = -exponent;
  const auto count = static_cast<int>(digits.size());
  const int point = exponent + 1;  // the value is 0.DIGITS x 10^point
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out.append("0.").append(static_cast<std::size_t>(-point), '0').append(digits);
    } else if (point >= count) {
      out.append(digits).append(static_cast<std::size_t>(point - count), '0').append(".0");
    } else {
      const auto whole = static_cast<std::size_t>(point);
      out.append(digits, 0, whole).append(1, '.').append(digits, whole);
    }
    return out;
  }
  out += digits[0];
  if (count > 1) out.append(1, '.').append(digits, 1);
  fmt::format_to(std::back_inserter(out), "e{}{:02}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

}  // namespace chakrasim::tools
