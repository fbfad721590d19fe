// `chakrasim chakra rescale`: a trace set rewritten for another data-, tensor- or
// pipeline-parallel size.
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/output_path.h"
#include "tools/rescale/rescaler.h"

namespace chakrasim::cli {

Command add_rescale(CLI::App& chakra) {
  struct Args {
    std::string input, groups, prefix;
    std::uint64_t dp = 0, tp = 0, pp = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* app = chakra.add_subcommand("rescale", "Rewrite a trace set for another data-, tensor- or "
                                                   "pipeline-parallel size: groups regrouped, "
                                                   "compute and collectives re-split, stating what is not re-scaled "
                                                   "faithfully");
  app->footer("Examples:\n"
              "  chakrasim chakra rescale traces/gpt --comm-groups traces/gpt.groups.json --dp 64 --out big/gpt\n"
              "  chakrasim chakra rescale traces/gpt --comm-groups traces/gpt.groups.json --tp 8 --pp 2 --out tp8/gpt\n"
              "write OUT.<rank>.et, OUT.groups.json and OUT.group-names.json. The groups named DP, TP and PP in\n"
              "the group names file give the layout; --pp only merges stages; see docs/chakra-tools.md.");
  app->add_option("input", args->input, "Input prefix: reads PREFIX.0.et, PREFIX.1.et, ...")->required();
  app->add_option("--comm-groups", args->groups,
                  "The communicator-group file, with its .group-names.json beside it (groups labelled DP, TP, PP, ...)")
      ->required();
  app->add_option("--dp", args->dp, "The new data-parallel size");
  app->add_option("--tp", args->tp, "The new tensor-parallel size");
  app->add_option("--pp", args->pp, "The new pipeline-parallel size (a divisor of the traces')");
  app->add_option("--out", args->prefix, "Output prefix: writes PREFIX.<rank>.et and PREFIX.groups.json")->required();
  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    tools::RescaleOptions options;
    if (app->count("--dp") > 0) options.dp = args->dp;
    if (app->count("--tp") > 0) options.tp = args->tp;
    if (app->count("--pp") > 0) options.pp = args->pp;
    prepare_output_prefix(args->prefix, "--out");
    const tools::RescaleReport report = tools::rescale_files(args->input, args->groups, args->prefix, options);
    std::cout << tools::describe(report);
    std::cout << "wrote " << report.ranks_out << " rank files " << args->prefix << ".<rank>.et and " << args->prefix
              << ".groups.json\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
