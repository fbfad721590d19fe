// `chakrasim chakra generate micro` (placeholder: being written).
#include "cli/chakra_tools.h"
#include "core/error.h"

namespace chakrasim::cli {

Command add_generate_micro(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("micro", "Microbenchmark Chakra ETs");
  return [app]() -> int {
    if (!app->parsed()) return -1;
    fail("chakra micro: not implemented yet");
  };
}

}  // namespace chakrasim::cli
