// `chakrasim chakra obfuscate`: per-rank traces that simulate as the originals but reveal no model.
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/output_path.h"
#include "tools/obfuscate/obfuscator.h"

namespace chakrasim::cli {

Command add_obfuscate(CLI::App& chakra) {
  struct Args {
    std::string input, prefix, groups;
    tools::ObfuscateOptions options;
  };
  auto args = std::make_shared<Args>();
  CLI::App* app = chakra.add_subcommand("obfuscate", "Traces that simulate as the originals on any system but reveal "
                                                     "no model: names, shapes and other attributes removed, runs of "
                                                     "compute fused, ids renumbered, sizes optionally perturbed");
  app->footer("Example:\n"
              "  chakrasim chakra obfuscate trace/model --out shared/model --perturb 1 --seed 7\n"
              "writes shared/model.<rank>.et for every trace/model.<rank>.et (and shared/model.groups.json when\n"
              "trace/model.groups.json exists), then prints what it removed. See docs/chakra-tools.md.");
  app->add_option("input", args->input, "Input prefix: reads PREFIX.0.et, PREFIX.1.et, ...")->required();
  app->add_option("--out", args->prefix, "Output prefix: writes PREFIX.<rank>.et")->required();
  app->add_option("--comm-groups", args->groups,
                  "The communicator-group file to copy beside the output (default: INPUT.groups.json if it exists)");
  app->add_option("--seed", args->options.seed, "Seed of the perturbation (default 1)");
  app->add_option("--perturb", args->options.perturb_pct,
                  "Change every duration, num_ops, tensor_size and comm_size by up to +-PCT percent (0 to 50; default "
                  "0), each distinct value by one factor");
  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    prepare_output_prefix(args->prefix, "--out");
    const tools::ObfuscateReport report =
        tools::obfuscate_files(args->input, args->prefix, args->groups, args->options);
    std::cout << tools::describe(report, args->options);
    std::cout << "wrote " << report.ranks << " rank files " << args->prefix << ".<rank>.et\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
