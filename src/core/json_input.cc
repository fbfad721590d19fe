#include "core/json_input.h"

namespace chakrasim {

std::string json_parse_error_text(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    if (const std::size_t end = what.find("] "); end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  if (what.starts_with("parse error at ")) what.remove_prefix(15);
  return std::string(what);
}

std::optional<std::size_t> json_too_deep_at(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kJsonMaxDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

void check_json_depth(std::string_view text, const std::string& source) {
  if (const auto at = json_too_deep_at(text)) {
    fail("{}: arrays and objects nest more than {} levels deep at byte {}; expected a JSON document nested a few "
         "levels",
         source, kJsonMaxDepth, *at);
  }
}

}  // namespace chakrasim
