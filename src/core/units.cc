#include "core/units.h"

#include <cctype>
#include <cmath>
#include <string>
#include <utility>

#include "core/parse_number.h"

namespace chakrasim {
namespace {

// "1.5 GiB" -> ("1.5", "GiB"): the leading digits and dots, and the rest without spaces;
// nullopt when there is no number or it starts or ends with a dot.
std::optional<std::pair<std::string_view, std::string>> number_and_unit(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.')) ++i;
  const std::string_view number = text.substr(0, i);
  if (number.empty() || number.front() == '.' || number.back() == '.') return std::nullopt;
  std::string unit;
  for (const char c : text.substr(i)) {
    if (c != ' ') unit += c;
  }
  return std::pair{number, unit};
}

}  // namespace

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  const auto parts = number_and_unit(text);
  if (!parts) return std::nullopt;
  const std::string_view number = parts->first;
  std::string unit = parts->second;
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();  // "MiB" and "Mi", "KB" and "K", "B" and ""
  double factor = 1;
  if (!unit.empty()) {
    static constexpr std::string_view kPrefixes = "kmgt";
    const std::size_t power = kPrefixes.find(unit.front());
    const bool binary = unit.size() == 2 && unit[1] == 'i';
    if (power == std::string_view::npos || unit.size() > 2 || (unit.size() == 2 && !binary)) return std::nullopt;
    factor = std::pow(binary ? 1024.0 : 1000.0, static_cast<double>(power + 1));
  }
  if (factor == 1 && number.find('.') == std::string_view::npos) {  // exact, even beyond 2^53
    const auto whole = parse_number<std::uint64_t>(number);
    if (!whole || *whole >= (std::uint64_t{1} << 63)) return std::nullopt;
    return whole;
  }
  const auto value = parse_number<double>(number);
  if (!value) return std::nullopt;
  const double bytes = *value * factor;
  if (bytes != std::floor(bytes) || bytes >= 9223372036854775808.0) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::optional<std::uint64_t> parse_duration_ns(std::string_view text) {
  const auto parts = number_and_unit(text);
  if (!parts) return std::nullopt;
  const auto& [number, unit] = *parts;
  double factor = 0;
  if (unit.empty() || unit == "ns") factor = 1;
  if (unit == "us" || unit == "µs") factor = 1e3;
  if (unit == "ms") factor = 1e6;
  if (unit == "s") factor = 1e9;
  if (factor == 0) return std::nullopt;
  const auto value = parse_number<double>(number);
  if (!value) return std::nullopt;
  const double ns = std::round(*value * factor);
  if (ns >= 9223372036854775808.0) return std::nullopt;
  return static_cast<std::uint64_t>(ns);
}

}  // namespace chakrasim
