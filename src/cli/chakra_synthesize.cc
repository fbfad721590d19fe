// `chakrasim chakra synthesize learn|generate`: a shareable statistical model of a trace set, and
// new trace sets drawn from it.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/chakra_tools.h"
#include "core/atomic_file.h"
#include "core/output_path.h"
#include "core/read_file.h"
#include "tools/synthesize/synthesis_generator.h"
#include "tools/synthesize/synthesis_learner.h"

namespace chakrasim::cli {

Command add_synthesize(CLI::App& chakra) {
  struct Args {
    std::string input, groups, model, prefix;
    double resolution = 4;
    tools::GenerateOptions options;
  };
  auto args = std::make_shared<Args>();
  CLI::App* app = chakra.add_subcommand("synthesize", "Learn a small statistical model of a trace set (structure, "
                                                      "value distributions, groups; no names), and generate new "
                                                      "trace sets from it");
  app->require_subcommand(1);
  CLI::App* learn = app->add_subcommand("learn", "Learn a model from IN_PREFIX.<rank>.et and write it as JSON");
  learn->footer("Example:\n"
                "  chakrasim chakra synthesize learn traces/gpt --model gpt.model.json\n"
                "See docs/chakra-tools.md for what the model holds.");
  learn->add_option("input", args->input, "Input prefix: reads PREFIX.0.et, PREFIX.1.et, ...")->required();
  learn->add_option("--comm-groups", args->groups,
                    "The communicator-group file (default: INPUT.groups.json if it exists)");
  learn->add_option("--model", args->model, "The model file to write")->required();
  learn->add_option("--resolution", args->resolution,
                    "Loops repeat only nodes whose main value is within one power of R (default 4); 0: the "
                    "structure alone, values pooled over every repetition");
  CLI::App* generate = app->add_subcommand("generate", "Draw a trace set from a model: OUT_PREFIX.<rank>.et and "
                                                       "OUT_PREFIX.groups.json");
  generate->footer("Example:\n"
                   "  chakrasim chakra synthesize generate gpt.model.json --out synthetic/gpt --seed 3\n"
                   "then run it with --workload synthetic/gpt --comm-groups synthetic/gpt.groups.json.");
  generate->add_option("model", args->model, "The model file written by `synthesize learn`")->required();
  generate->add_option("--out", args->prefix, "Output prefix: writes PREFIX.<rank>.et")->required();
  generate->add_option("--seed", args->options.seed, "Seed of the draws (default 1)");
  generate->add_option("--npus", args->options.npus,
                       "NPUs of the generated job (default: the model's): another count widens or narrows the "
                       "job's axis of data-parallel replicas");
  generate->add_option("--iterations", args->options.iterations,
                       "Training steps per trace, each drawn afresh and run after the one before (default 1)");
  return [app, learn, args]() -> int {
    if (!app->parsed()) return -1;
    if (learn->parsed()) {
      tools::LearnReport report;
      const tools::SynthesisModel model = tools::learn_model(args->input, args->groups, args->resolution, report);
      const std::string text = tools::model_json(model);
      prepare_output_file(args->model, "--model");
      write_file_atomically(args->model, text, "the synthesis model");
      std::cout << fmt::format("learned {} ranks ({} nodes after fusing compute runs): {} rank classes, {} node "
                               "slots in {} loops, {} communicator groups\nwrote {} ({} bytes)\n",
                               report.ranks, report.nodes, report.classes, report.slots, report.loops, report.groups,
                               args->model, text.size());
      return 0;
    }
    const tools::SynthesisModel model =
        tools::parse_model(read_file(args->model, "model", "a synthesis model written by `synthesize learn`"),
                           args->model);
    prepare_output_prefix(args->prefix, "--out");
    const tools::GenerateReport report = tools::generate_traces(model, args->model, args->prefix, args->options);
    if (!report.caveat.empty()) std::cout << "note: " << report.caveat << "\n";
    std::cout << fmt::format("wrote {} rank files {}.<rank>.et ({} nodes)", report.ranks, args->prefix, report.nodes);
    if (!report.groups_path.empty()) std::cout << " and " << report.groups_path;
    std::cout << "\n";
    return 0;
  };
}

}  // namespace chakrasim::cli
