// `chakrasim chakra visualize`: a Chakra ET's dependency graph as DOT, GraphML, SVG or PDF.
#include <charconv>
#include <iostream>
#include <memory>

#include "cli/chakra_tools.h"
#include "core/error.h"
#include "core/output_path.h"
#include "tools/visualize/visualizer.h"

namespace chakrasim::cli {

Command add_visualize(CLI::App& chakra) {
  struct VisualizeArgs {
    std::string input, output, range;
    tools::NodeSelection selection;
    bool quiet = false;
  };
  auto args = std::make_shared<VisualizeArgs>();
  CLI::App* app = chakra.add_subcommand("visualize", "Draw a Chakra ET's dependency graph: DOT, GraphML, SVG or PDF");
  app->footer("Example:\n"
              "  chakrasim chakra visualize trace.0.et trace.0.graphml\n"
              "The output's extension picks the format: .dot and .graphml are written directly; .svg and\n"
              "  .pdf are drawn by graphviz's `dot` program (install graphviz), which is slow on big traces.\n"
              "Nodes are named by id and labelled with the node's name. Data dependencies are edges with\n"
              "  a normal arrowhead (GraphML: dependency=\"data\"), control ones a tee (\"control\"); a parent\n"
              "  that is both gets both edges.\n"
              "Big traces: --max-nodes 2000 draws the first 2000 nodes, --nodes 5000-5999 the nodes with those\n"
              "  ids; dependencies on nodes left out are dropped.");
  app->add_option("input", args->input, "Chakra ET file (.et)")->required();
  app->add_option("output,--out", args->output, "Output file: .dot, .graphml, .svg or .pdf")->required();
  app->add_option("--max-nodes", args->selection.max_nodes, "Draw at most this many nodes, the first in the file");
  app->add_option("--nodes", args->range, "Draw only the nodes with ids FROM-TO (inclusive), e.g. 5000-5999");
  app->add_flag("-q,--quiet", args->quiet, "No progress messages");
  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    if (!args->range.empty()) {
      const std::size_t dash = args->range.find('-');
      std::uint64_t first = 0, last = 0;
      const char* text = args->range.c_str();
      const bool ok =
          dash != std::string::npos && std::from_chars(text, text + dash, first).ptr == text + dash &&
          std::from_chars(text + dash + 1, text + args->range.size(), last).ptr == text + args->range.size() &&
          dash > 0 && dash + 1 < args->range.size() && first <= last;
      if (!ok) fail("--nodes: \"{}\" is not a range of node ids; expected FROM-TO such as 5000-5999", args->range);
      args->selection.first_id = first;
      args->selection.last_id = last;
    }
    prepare_output_file(args->output, "--out");
    tools::VisualizeProgress progress;
    if (!args->quiet) progress = [](const std::string& text) { std::cerr << "visualize: " << text << "\n"; };
    tools::visualize_file(args->input, args->output, args->selection, progress);
    std::cout << "wrote " << args->output << "\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
