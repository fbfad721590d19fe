// `chakrasim chakra link` (placeholder: being written).
#include "cli/chakra_tools.h"
#include "core/error.h"

namespace chakrasim::cli {

Command add_link(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("link", "PyTorch host ET + Kineto device trace -> ET+ JSON");
  return [app]() -> int {
    if (!app->parsed()) return -1;
    fail("chakra link: not implemented yet");
  };
}

}  // namespace chakrasim::cli
