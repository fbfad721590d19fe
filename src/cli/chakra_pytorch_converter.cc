// `chakrasim chakra convert pytorch`: a PyTorch host ET or ET+ JSON -> one rank's Chakra ET.
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/output_path.h"
#include "tools/pytorch/pytorch_converter.h"

namespace chakrasim::cli {

Command add_convert_pytorch(CLI::App& parent) {
  struct PytorchArgs {
    std::string input, output;
    tools::PytorchOptions options;
  };
  auto args = std::make_shared<PytorchArgs>();
  CLI::App* app = parent.add_subcommand("pytorch", "PyTorch host ET or ET+ (trace_link output) JSON -> Chakra ET");
  app->footer("Example:\n"
              "  chakrasim chakra convert pytorch rank0_etplus.json --out trace/model.0.et\n"
              "converts one rank, as the reference chakra_converter PyTorch does (byte-identical output);\n"
              "convert each rank R into PREFIX.R.et, then run with --workload PREFIX.\n"
              "  --fix-defects also gives each op whose caller the file lists later its ctrl dependency, and\n"
              "each SEND/RECV node the comm_src/comm_dst/comm_tag it needs to run.");
  app->add_option("input", args->input, "PyTorch ET or ET+ JSON file")->required();
  app->add_option("--out", args->output, "Output .et file (one rank)")->required();
  app->add_flag("--fix-defects", args->options.fix_defects,
                "Repair the reference converter's defects that change its output: ctrl deps dropped for "
                "children listed before their caller, SEND/RECV nodes without peers and tags");
  app->add_flag("--op-shapes", args->options.op_shapes,
                "Give the kernel of each aten::mm, addmm, bmm, baddbmm, linear and 2-D convolution its shape from "
                "the recorded inputs (attributes gemm or conv), for the systolic compute model (docs/systolic.md)");
  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    prepare_output_file(args->output, "--out");
    const std::size_t nodes = tools::convert_pytorch_file(args->input, args->output, args->options);
    std::cout << "wrote " << args->output << ": " << nodes << " nodes\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
