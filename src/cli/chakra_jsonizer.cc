// `chakrasim chakra jsonize` (placeholder: being written).
#include "cli/chakra_tools.h"
#include "core/error.h"

namespace chakrasim::cli {

Command add_jsonize(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("jsonize", "Chakra ET <-> JSON (jsonize and dejsonize)");
  return [app]() -> int {
    if (!app->parsed()) return -1;
    fail("chakra jsonize: not implemented yet");
  };
}

}  // namespace chakrasim::cli
