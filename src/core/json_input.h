// Parsing a JSON input, and quoting a JSON value in an error message, with both bounded.
//
// nlohmann's parser is iterative, but printing, copying and comparing a value recurse once per
// level: a file nested 100k levels deep would overflow the stack the first time an error message
// quoted it. Inputs are therefore refused above kJsonMaxDepth levels before they are parsed, and
// messages quote at most a short excerpt of a value, however large it is.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace chakrasim {

// Deeper than any input the product reads (PyTorch attribute values nest a few levels), far
// shallower than what exhausts a thread's stack.
inline constexpr std::size_t kJsonMaxDepth = 256;

// The byte offset at which arrays and objects in `text` nest deeper than kJsonMaxDepth, if they do
// (strings are skipped; the text need not be valid JSON otherwise).
std::optional<std::size_t> json_too_deep_at(std::string_view text);

// Throws Error naming `source` when arrays and objects in `text` nest deeper than kJsonMaxDepth.
void check_json_depth(std::string_view text, const std::string& source);

// nlohmann's exception text without its "[json.exception.parse_error.101] parse error at " tag:
// "line 1, column 1: syntax error while parsing value - invalid literal; last read: 'k'".
std::string json_parse_error_text(std::string_view what);

// `text` parsed, after check_json_depth. Syntax errors and out-of-range numbers fail as
// "<source>: invalid JSON (expected <expected>): <where and why>".
template <typename JsonT = nlohmann::json>
JsonT parse_json_input(std::string_view text, const std::string& source, std::string_view expected) {
  check_json_depth(text, source);
  try {
    return JsonT::parse(text);
  } catch (const typename JsonT::exception& e) {
    fail("{}: invalid JSON (expected {}): {}", source, expected, json_parse_error_text(e.what()));
  }
}

// The JSON text of `value`, cut to 57 characters and "..." when it is longer than 60. Values
// that hold many elements are summarised by their size instead of being printed whole.
template <typename JsonT>
std::string json_excerpt(const JsonT& value) {
  if ((value.is_array() || value.is_object()) && value.size() > 16) {
    return fmt::format("{} of {} elements", value.is_array() ? "an array" : "an object", value.size());
  }
  const std::string text = value.dump();
  if (text.size() <= 60) return text;
  // Written through a view: GCC 12 at -O3 warns falsely (-Warray-bounds) when "..." is added to
  // a std::string that is a copy of part of another.
  return fmt::format("{}...", std::string_view(text).substr(0, 57));
}

}  // namespace chakrasim
