// Text helpers the Chakra tools share: decoding UTF-8, Python's repr() of a float (the reference
// tools are Python programs, so their outputs hold what Python prints), and a short excerpt of a
// JSON value for error messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace chakrasim::tools {

// One character of UTF-8 text: its code point and how many bytes it takes.
struct Utf8Char {
  char32_t code_point = 0;
  std::size_t length = 0;
};

// The character that starts at byte `at` (< text.size()), or nullopt where the bytes there are
// not UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing above U+10FFFF and
// no sequence cut short by the end of the text.
std::optional<Utf8Char> decode_utf8(std::string_view text, std::size_t at);

// Python's repr() of a finite double, which is also what json.dumps prints: the shortest digits
// that read back as the same value, in positional notation when the decimal exponent is -4 to
// 15 (with ".0" on a whole number), else as d.ddde+XX.
std::string python_float_repr(double value);

}  // namespace chakrasim::tools
