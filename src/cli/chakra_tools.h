// The tools under `chakrasim chakra`, one registrar per tool (src/cli/chakra_<tool>.cc). Each
// adds its subcommand to `parent` (`chakra`, or `chakra convert` / `chakra generate`) and
// returns the function that runs it: -1 when its subcommand was not the one given, else the exit
// code. The work itself lives in src/tools; these files only parse flags and print.
#pragma once

#include "cli/commands.h"

namespace chakrasim::cli {

Command add_msccl(CLI::App& chakra);
Command add_convert_text(CLI::App& convert);
Command add_convert_pytorch(CLI::App& convert);
Command add_link(CLI::App& chakra);
Command add_jsonize(CLI::App& chakra);  // registers `jsonize` and `dejsonize`
Command add_visualize(CLI::App& chakra);
Command add_inspect(CLI::App& chakra);
Command add_obfuscate(CLI::App& chakra);
Command add_rescale(CLI::App& chakra);
Command add_synthesize(CLI::App& chakra);  // `synthesize learn` and `synthesize generate`

}  // namespace chakrasim::cli
