#include "tools/pytorch/pytorch_repr.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "tools/common/text_format.h"

namespace chakrasim::tools::pyrepr {
namespace {

// Code points above U+007F that Python's str.isprintable() rejects, as sorted inclusive ranges:
// controls, format characters, separators other than the space, surrogates, private use and
// noncharacters. Unassigned code points, which Python escapes too, print as themselves here.
constexpr std::pair<char32_t, char32_t> kUnprintable[] = {{0x80, 0xa0},       {0xad, 0xad},       {0x600, 0x605},
                                                          {0x61c, 0x61c},     {0x6dd, 0x6dd},     {0x70f, 0x70f},
                                                          {0x890, 0x891},     {0x8e2, 0x8e2},     {0x1680, 0x1680},
                                                          {0x180e, 0x180e},   {0x2000, 0x200f},   {0x2028, 0x202f},
                                                          {0x205f, 0x206f},   {0x3000, 0x3000},   {0xd800, 0xf8ff},
                                                          {0xfdd0, 0xfdef},   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},
                                                          {0xfffe, 0xffff},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
                                                          {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a},
                                                          {0xe0001, 0xe0001}, {0xe0020, 0xe007f}, {0xf0000, 0x10ffff}};

bool printable(char32_t c) {
  if ((c & 0xfffe) == 0xfffe) return false;  // U+xFFFE and U+xFFFF of every plane
  for (const auto& [first, last] : kUnprintable) {
    if (c < first) return true;
    if (c <= last) return false;
  }
  return true;
}

void append_escape(std::string& out, const char* prefix, std::uint32_t value, int digits) {
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += "0123456789abcdef"[(value >> shift) & 0xf];
}

// The text is valid UTF-8: the JSON parser checked it.
void repr_string(const std::string& s, std::string& out) {
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
    const std::optional<Utf8Char> character = decode_utf8(s, i);
    if (!character) {  // not after the JSON parser, which rejects such text; shown as an escaped byte
      append_escape(out, "\\x", lead, 2);
      ++i;
      continue;
    }
    const char32_t c = character->code_point;
    if (printable(c)) out.append(s, i, character->length);
    else if (c <= 0xff) append_escape(out, "\\x", c, 2);
    else if (c <= 0xffff) append_escape(out, "\\u", c, 4);
    else append_escape(out, "\\U", c, 8);
    i += character->length;
  }
  out += quote;
}

void repr(const nlohmann::ordered_json& v, std::string& out) {
  switch (v.type()) {
    case nlohmann::ordered_json::value_t::null: out += "None"; return;
    case nlohmann::ordered_json::value_t::boolean: out += v.get<bool>() ? "True" : "False"; return;
    case nlohmann::ordered_json::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); return;
    case nlohmann::ordered_json::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); return;
    case nlohmann::ordered_json::value_t::number_float: out += python_float_repr(v.get<double>()); return;
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

}  // namespace

std::string python_str(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  repr(v, out);
  return out;
}

}  // namespace chakrasim::tools::pyrepr
