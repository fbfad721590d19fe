// `chakrasim chakra rescale`: a trace set rewritten for another data-parallel size.
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/output_path.h"
#include "tools/rescale/rescaler.h"

namespace chakrasim::cli {

Command add_rescale(CLI::App& chakra) {
  struct Args {
    std::string input, groups, prefix;
    tools::RescaleOptions options;
  };
  auto args = std::make_shared<Args>();
  CLI::App* app = chakra.add_subcommand("rescale", "Rewrite a trace set for another data-parallel size: DP groups "
                                                   "resized, every other group and message copied per replica");
  app->footer("Example:\n"
              "  chakrasim chakra rescale traces/gpt --comm-groups traces/gpt.groups.json --dp 64 --out big/gpt\n"
              "writes big/gpt.<rank>.et, big/gpt.groups.json and big/gpt.group-names.json. The groups named DP in\n"
              "the group names file give the layout; see docs/chakra-tools.md.");
  app->add_option("input", args->input, "Input prefix: reads PREFIX.0.et, PREFIX.1.et, ...")->required();
  app->add_option("--comm-groups", args->groups,
                  "The communicator-group file, with its .group-names.json beside it (DP groups labelled DP)")
      ->required();
  app->add_option("--dp", args->options.dp, "The new data-parallel size")->required();
  app->add_option("--out", args->prefix, "Output prefix: writes PREFIX.<rank>.et and PREFIX.groups.json")->required();
  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    prepare_output_prefix(args->prefix, "--out");
    const tools::RescaleReport report = tools::rescale_files(args->input, args->groups, args->prefix, args->options);
    std::cout << tools::describe(report);
    std::cout << "wrote " << report.ranks_out << " rank files " << args->prefix << ".<rank>.et and " << args->prefix
              << ".groups.json\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
