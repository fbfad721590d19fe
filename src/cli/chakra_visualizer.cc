// `chakrasim chakra visualize` (placeholder: being written).
#include "cli/chakra_tools.h"
#include "core/error.h"

namespace chakrasim::cli {

Command add_visualize(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("visualize", "Chakra ET -> DOT, GraphML, SVG or PDF");
  return [app]() -> int {
    if (!app->parsed()) return -1;
    fail("chakra visualize: not implemented yet");
  };
}

}  // namespace chakrasim::cli
