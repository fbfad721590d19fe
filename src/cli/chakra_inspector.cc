// `chakrasim chakra inspect` (placeholder: being written).
#include "cli/chakra_tools.h"
#include "core/error.h"

namespace chakrasim::cli {

Command add_inspect(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("inspect", "A readable summary of a Chakra ET and its problems");
  return [app]() -> int {
    if (!app->parsed()) return -1;
    fail("chakra inspect: not implemented yet");
  };
}

}  // namespace chakrasim::cli
