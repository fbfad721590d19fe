// The workload generators' subcommands. Each registers itself under `parent` (the canonical
// `chakrasim generate`, or an older spelling kept as an alias) with `description` as its help.
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"

namespace chakrasim::cli {

Command add_generate_llm(CLI::App& parent, const std::string& description);
Command add_generate_micro(CLI::App& parent, const std::string& description);
Command add_generate_fabric(CLI::App& parent, const std::string& description);

// Registers every generator under `parent`; `alias_of` names the canonical command in the help
// texts of an alias ("" for the canonical one).
std::vector<Command> add_generators(CLI::App& parent, const std::string& alias_of);

}  // namespace chakrasim::cli
