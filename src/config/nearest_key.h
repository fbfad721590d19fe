// Suggestions for misspelt keys: the valid key nearest to an unknown one by edit distance, when
// it is near enough to be a likely typo ("bandwith" -> "bandwidth").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace chakrasim::config {

// Levenshtein distance: the fewest single-character insertions, deletions and substitutions that
// turn `a` into `b`.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The key of `valid` nearest to `key` (case-insensitively; the first on a tie), if it is within
// max(2, half the length of `key`) edits; nullopt otherwise.
std::optional<std::string> nearest_key(const std::string& key, const std::vector<std::string>& valid);

}  // namespace chakrasim::config
