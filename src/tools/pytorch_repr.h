// Python's str() of a value as Python's json.load returns it, for the text the reference PyTorch
// converter stores in a node's inputs and outputs: a string is itself, anything else is its
// repr(): ['a', "it's", 1, 2.5, 1e-05, True, None], {'k': [[]]}. Objects keep the input's key
// order, as Python's dict does.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace chakrasim::tools::pyrepr {

// Code points above U+007F that Python's str.isprintable() rejects, as sorted inclusive ranges:
// controls, format characters, separators other than the space, surrogates, private use and
// noncharacters. Unassigned code points, which Python escapes too, print as themselves here.
inline constexpr std::pair<char32_t, char32_t> kUnprintable[] = {
    {0x80, 0xa0},       {0xad, 0xad},       {0x600, 0x605},     {0x61c, 0x61c},     {0x6dd, 0x6dd},
    {0x70f, 0x70f},     {0x890, 0x891},     {0x8e2, 0x8e2},     {0x1680, 0x1680},   {0x180e, 0x180e},
    {0x2000, 0x200f},   {0x2028, 0x202f},   {0x205f, 0x206f},   {0x3000, 0x3000},   {0xd800, 0xf8ff},
    {0xfdd0, 0xfdef},   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0xfffe, 0xffff},   {0x110bd, 0x110bd},
    {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
    {0xe0020, 0xe007f}, {0xf0000, 0x10ffff}};

inline bool printable(char32_t c) {
  if ((c & 0xfffe) == 0xfffe) return false;  // U+xFFFE and U+xFFFF of every plane
  for (const auto& [first, last] : kUnprintable) {
    if (c < first) return true;
    if (c <= last) return false;
  }
  return true;
}

inline void append_escape(std::string& out, const char* prefix, std::uint32_t value, int digits) {
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += "0123456789abcdef"[(value >> shift) & 0xf];
}

// The text is valid UTF-8: the JSON parser checked it.
inline void repr_string(const std::string& s, std::string& out) {
  const bool single = s.find('\'') != std::string::npos;
  const char quote = single && s.find('"') == std::string::npos ? '"' : '\'';
  out += quote;
  for (std::size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {
      const char c = s[i++];
      if (c == quote || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (lead < 0x20 || lead == 0x7f) {
        append_escape(out, "\\x", lead, 2);
      } else {
        out += c;
      }
      continue;
    }
    const std::size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    char32_t c = lead & (length == 4 ? 0x07u : length == 3 ? 0x0fu : 0x1fu);
    for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
    if (printable(c)) out.append(s, i, length);
    else if (c <= 0xff) append_escape(out, "\\x", c, 2);
    else if (c <= 0xffff) append_escape(out, "\\u", c, 4);
    else append_escape(out, "\\U", c, 8);
    i += length;
  }
  out += quote;
}

// Python prints the shortest digits that read back as the same double, in positional notation
// when the decimal point falls within 16 digits of them, else as d.ddde+XX.
inline void repr_double(double value, std::string& out) {
  char buffer[64];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string_view sci(buffer, static_cast<std::size_t>(written.ptr - buffer));
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c == '-') out += c;
    else if (c != '.') digits += c;
  }
  int exponent = 0;
  const std::string_view exp_text = sci.substr(e + (sci[e + 1] == '+' ? 2 : 1));
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  const int point = exponent + 1;  // digits before the decimal point
  const int count = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out.append("0.").append(static_cast<std::size_t>(-point), '0').append(digits);
    } else if (point >= count) {
      out.append(digits).append(static_cast<std::size_t>(point - count), '0').append(".0");
    } else {
      const auto whole = static_cast<std::size_t>(point);
      out.append(digits, 0, whole).append(1, '.').append(digits, whole);
    }
    return;
  }
  out += digits[0];
  if (count > 1) out.append(1, '.').append(digits, 1);
  out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
}

inline void repr(const nlohmann::ordered_json& v, std::string& out) {
  switch (v.type()) {
    case nlohmann::ordered_json::value_t::null: out += "None"; return;
    case nlohmann::ordered_json::value_t::boolean: out += v.get<bool>() ? "True" : "False"; return;
    case nlohmann::ordered_json::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); return;
    case nlohmann::ordered_json::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); return;
    case nlohmann::ordered_json::value_t::number_float: repr_double(v.get<double>(), out); return;
    case nlohmann::ordered_json::value_t::string: repr_string(v.get_ref<const std::string&>(), out); return;
    case nlohmann::ordered_json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i > 0) out += ", ";
        repr(v[i], out);
      }
      out += ']';
      return;
    }
    case nlohmann::ordered_json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : v.items()) {
        if (!first) out += ", ";
        first = false;
        repr_string(key, out);
        out += ": ";
        repr(item, out);
      }
      out += '}';
      return;
    }
    default: out += "None"; return;  // binary values cannot come from JSON text
  }
}

inline std::string python_str(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  repr(v, out);
  return out;
}

}  // namespace chakrasim::tools::pyrepr
