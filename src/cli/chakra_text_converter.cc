// `chakrasim chakra convert text`: an ASTRA-sim 1.0 text workload -> per-rank Chakra ETs.
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "compute/systolic/scalesim_files.h"
#include "core/error.h"
#include "core/output_path.h"
#include "core/read_file.h"
#include "tools/text/text_converter.h"

namespace chakrasim::cli {
namespace {

// The shapes of a SCALE-sim topology's layers: a convolution as itself, an M, N, K row as a GEMM.
std::vector<chakra::OpShape> layer_shapes(const std::string& path, bool gemm) {
  const std::string text = read_file(path, "--shapes", "a SCALE-sim topology file", kDescriptionFileMaxBytes);
  std::vector<chakra::OpShape> shapes;
  for (const compute::systolic::Layer& l : compute::systolic::parse_scalesim_topology(text, path, gemm)) {
    chakra::OpShape s;
    if (gemm) {
      s.dims = {l.ifmap_h, l.filters, l.ifmap_w, 1};  // SCALE-sim lays M, N, K out as H = M, W = K, N filters
    } else {
      s.kind = chakra::OpShape::Kind::kConv;
      s.dims = {l.ifmap_h, l.ifmap_w, l.filter_h, l.filter_w, l.channels, l.filters, l.stride_h, l.stride_w, 1};
    }
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace

Command add_convert_text(CLI::App& convert) {
  struct TextArgs {
    std::string input, prefix, shapes;
    bool gemm = false;
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
  app->add_option("--shapes", args->shapes,
                  "A SCALE-sim topology file (.csv) with one row per layer, in order: each layer's compute nodes "
                  "get its shape (attributes conv or gemm, and pass) for the systolic compute model");
  app->add_flag("--gemm", args->gemm, "--shapes is in SCALE-sim's M, N, K form (its -i gemm)");

  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    // 0 is the options' "not given": given, it would silently mean the default.
    if (app->count("--model-parallel-group") > 0 && args->options.model_parallel_group == 0)
      fail("--model-parallel-group is 0; expected at least 1 NPU (leave the flag out for the default)");
    if (args->gemm && args->shapes.empty()) fail("--gemm: expected --shapes, whose form it gives");
    if (!args->shapes.empty()) args->options.layer_shapes = layer_shapes(args->shapes, args->gemm);
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
