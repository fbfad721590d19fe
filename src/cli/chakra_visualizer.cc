// `chakrasim chakra visualize`: a Chakra ET's dependency graph as DOT, GraphML, SVG or PDF.
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/output_path.h"
#include "tools/visualize/visualizer.h"

namespace chakrasim::cli {

Command add_visualize(CLI::App& chakra) {
  struct VisualizeArgs {
    std::string input, output;
  };
  auto args = std::make_shared<VisualizeArgs>();
  CLI::App* app = chakra.add_subcommand("visualize", "Draw a Chakra ET's dependency graph: DOT, GraphML, SVG or PDF");
  app->footer("Example:\n"
              "  chakrasim chakra visualize trace.0.et trace.0.graphml\n"
              "The output's extension picks the format: .dot and .graphml are written directly; .svg and\n"
              "  .pdf are drawn by graphviz's `dot` program (install graphviz), which is slow on big traces.\n"
              "Nodes are named by id and labelled with the node's name. Data dependencies are edges with\n"
              "  a normal arrowhead (GraphML: dependency=\"data\"), control ones a tee (\"control\"); a parent\n"
              "  that is both gets both edges.");
  app->add_option("input", args->input, "Chakra ET file (.et)")->required();
  app->add_option("output,--out", args->output, "Output file: .dot, .graphml, .svg or .pdf")->required();
  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    prepare_output_file(args->output, "--out");
    tools::visualize_file(args->input, args->output);
    std::cout << "wrote " << args->output << "\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
