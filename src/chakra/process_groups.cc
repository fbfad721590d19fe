#include "chakra/process_groups.h"

#include <nlohmann/json.hpp>

#include "core/json_input.h"

namespace chakrasim::chakra {

std::vector<ProcessGroupDescription> describe_process_groups(std::string_view inputs_values) {
  std::vector<ProcessGroupDescription> out;
  if (inputs_values.size() < 4) return out;
  // Two characters at each end are the Python list and string around the JSON.
  const std::string_view list = inputs_values.substr(2, inputs_values.size() - 4);
  if (json_too_deep_at(list)) return out;  // would overflow the stack when quoted
  const nlohmann::json groups = nlohmann::json::parse(list, nullptr, false);
  if (!groups.is_array()) return out;
  for (const nlohmann::json& pg : groups) {
    if (!pg.is_object() || !pg.contains("pg_name")) continue;
    ProcessGroupDescription d;
    const nlohmann::json& name = pg["pg_name"];
    d.name = name.is_string() ? name.get<std::string>() : json_excerpt(name);
    if (pg.contains("ranks") && pg["ranks"].is_array()) {
      d.has_ranks = true;
      for (const nlohmann::json& rank : pg["ranks"]) {
        if (rank.is_number_unsigned()) d.ranks.push_back(rank.get<std::uint64_t>());
        else d.ranks_whole = false;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace chakrasim::chakra
