// The process groups a PyTorch trace's METADATA node describes. Its inputs.values holds the
// Python repr of a one-element list around a JSON list, e.g. ['[{"pg_name": "1", "ranks": [0, 1]}]'].
// Read by the simulator (which registers them) and by the synthesizer (which learns them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace chakrasim::chakra {

struct ProcessGroupDescription {
  std::string name;                  // pg_name; a value that is not a string as its JSON text
  bool has_ranks = false;            // "ranks" is a list
  std::vector<std::uint64_t> ranks;  // its entries that are whole numbers, in order
  bool ranks_whole = true;           // every entry was one
};

// Every entry of the list with a pg_name. Like the reference, text that does not parse (or nests
// too deeply to quote safely) describes nothing.
std::vector<ProcessGroupDescription> describe_process_groups(std::string_view inputs_values);

}  // namespace chakrasim::chakra
