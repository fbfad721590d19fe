// `chakrasim chakra <tool>`: the Chakra tool chain, one subcommand per tool.
#include <vector>

#include "cli/chakra_tools.h"
#include "cli/generators.h"

namespace chakrasim::cli {

Command add_chakra_command(CLI::App& app) {
  CLI::App* chakra = app.add_subcommand("chakra", "The Chakra tool chain: generate, convert, link, jsonize/dejsonize, "
                                                  "visualize, msccl, inspect, obfuscate, rescale, synthesize traces");
  chakra->require_subcommand(1);
  CLI::App* convert = chakra->add_subcommand("convert", "Convert other workload formats into Chakra ETs");
  convert->require_subcommand(1);
  CLI::App* generate = chakra->add_subcommand("generate", "Generate Chakra ETs (same as `chakrasim generate`)");
  generate->require_subcommand(1);
  std::vector<Command> tools = add_generators(*generate, "chakrasim generate");
  tools.insert(tools.end(), {add_convert_text(*convert), add_convert_pytorch(*convert), add_link(*chakra),
                             add_jsonize(*chakra), add_visualize(*chakra), add_inspect(*chakra), add_msccl(*chakra),
                             add_obfuscate(*chakra), add_rescale(*chakra), add_synthesize(*chakra)});
  return [chakra, tools]() -> int {
    if (!chakra->parsed()) return -1;
    for (const Command& tool : tools) {
      const int code = tool();
      if (code >= 0) return code;
    }
    return 0;
  };
}

}  // namespace chakrasim::cli
