// `chakrasim chakra convert text`: an ASTRA-sim 1.0 text workload -> per-rank Chakra ETs.
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/error.h"
#include "core/output_path.h"
#include "tools/text/text_converter.h"

namespace chakrasim::cli {

Command add_convert_text(CLI::App& convert) {
  struct TextArgs {
    std::string input, prefix;
    tools::TextOptions options;
  };
  auto args = std::make_shared<TextArgs>();
  CLI::App* app = convert.add_subcommand("text", "Convert an ASTRA-sim 1.0 text workload into per-rank Chakra ETs");
  app->footer("Parallelisms: MICRO, DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_DLRM, "
              "HYBRID_DLRM_ENHANCED\n"
              "(as the Chakra converter), and HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_CUSTOMIZED\n"
              "(ASTRA-sim 1.0's, whose collectives run over model- and data-parallel communicator groups).\n"
              "Example:\n"
              "  chakrasim chakra convert text Resnet50_DataParallel.txt --npus 8 --passes 2 --out resnet\n"
              "writes resnet.0.et .. resnet.7.et (node ids run on from one file to the next), to be run with\n"
              "  chakrasim run --workload resnet --system system.json --network network.yml\n"
              "The hybrid kinds also write PREFIX.groups.json; add --comm-groups PREFIX.groups.json to the run.");
  app->add_option("input", args->input, "ASTRA-sim 1.0 text workload file")->required();
  app->add_option("--npus", args->options.npus, "Number of NPUs: one trace file per NPU (at least 1)")->required();
  app->add_option("--passes", args->options.passes, "Training iterations in each trace (at least 1)")->required();
  app->add_option("--out", args->prefix, "Output prefix: writes PREFIX.<rank>.et")->required();
  app->add_option("--model-parallel-group", args->options.model_parallel_group,
                  "HYBRID_TRANSFORMER* and HYBRID_CUSTOMIZED: NPUs in a model-parallel group, where line 1 has no "
                  "model_parallel_NPU_group: (HYBRID_CUSTOMIZED's default: all NPUs)");

  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    // 0 is the options' "not given": given, it would silently mean the default.
    if (app->count("--model-parallel-group") > 0 && args->options.model_parallel_group == 0)
      fail("--model-parallel-group is 0; expected at least 1 NPU (leave the flag out for the default)");
    prepare_output_prefix(args->prefix, "--out");
    const tools::TextFiles files = tools::convert_text_file(args->input, args->prefix, args->options);
    std::cout << "wrote " << files.ranks << " rank files " << args->prefix << ".<rank>.et\n";
    if (!files.groups_path.empty()) {
      std::cout << "wrote the communicator groups " << files.groups_path << " (run with --comm-groups "
                << files.groups_path << ")\n";
    }
    return 0;
  };
}

}  // namespace chakrasim::cli
