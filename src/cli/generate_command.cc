// `chakrasim generate <generator>`: synthetic workloads as Chakra ETs, one subcommand per
// generator (src/generate/). `chakrasim chakra generate <generator>` is the same command under
// its older spelling.
#include <vector>

#include "cli/generators.h"

namespace chakrasim::cli {

std::vector<Command> add_generators(CLI::App& parent, const std::string& alias_of) {
  auto alias = [&](const char* name) {
    return alias_of.empty() ? std::string() : " (same as `" + alias_of + " " + name + "`)";
  };
  return {add_generate_llm(parent, "One training iteration of a transformer under data, tensor, pipeline, context and "
                                   "expert parallelism" +
                                       alias("llm")),
          add_generate_micro(parent, "Microbenchmark Chakra ETs: the reference generator's 14 families, or one "
                                     "collective" +
                                         alias("micro")),
          add_generate_fabric(parent, "A cluster fabric (fat-tree, leaf-spine, rails, planes, torus) as a topology "
                                      "file for topology: [ Custom ]" +
                                          alias("fabric"))};
}

Command add_generate_command(CLI::App& app) {
  CLI::App* generate = app.add_subcommand("generate", "Generate synthetic workloads as Chakra ETs (llm, micro) and "
                                                      "cluster fabrics (fabric)");
  generate->require_subcommand(1);
  const std::vector<Command> generators = add_generators(*generate, "");
  return [generate, generators]() -> int {
    if (!generate->parsed()) return -1;
    for (const Command& g : generators) {
      const int code = g();
      if (code >= 0) return code;
    }
    return 0;
  };
}

}  // namespace chakrasim::cli
