// `chakrasim chakra convert pytorch` (placeholder: being written).
#include "cli/chakra_tools.h"
#include "core/error.h"

namespace chakrasim::cli {

Command add_convert_pytorch(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("pytorch", "PyTorch host ET or ET+ JSON -> Chakra ET");
  return [app]() -> int {
    if (!app->parsed()) return -1;
    fail("chakra pytorch: not implemented yet");
  };
}

}  // namespace chakrasim::cli
