// `chakrasim chakra convert text` (placeholder: being written).
#include "cli/chakra_tools.h"
#include "core/error.h"

namespace chakrasim::cli {

Command add_convert_text(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("text", "ASTRA-sim 1.0 text workload -> per-rank Chakra ETs");
  return [app]() -> int {
    if (!app->parsed()) return -1;
    fail("chakra text: not implemented yet");
  };
}

}  // namespace chakrasim::cli
