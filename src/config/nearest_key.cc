#include "config/nearest_key.h"

#include <algorithm>
#include <cctype>

namespace chakrasim::config {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // One row of the dynamic-programming table at a time: row[j] = distance(a[0..i), b[0..j)).
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // distance(a[0..i-1), b[0..j-1))
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_key(const std::string& key, const std::vector<std::string>& valid) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string wanted = lower(key);
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, key.size() / 2) + 1;
  for (const std::string& candidate : valid) {
    const std::size_t d = edit_distance(wanted, lower(candidate));
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace chakrasim::config
