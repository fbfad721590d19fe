// The workload generators' subcommands. Each registers itself under `parent` (the canonical
// `chakrasim generate`, or an older spelling kept as an alias) with `description` as its help.
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"
#include "generate/llm/llm_generator.h"

namespace chakrasim::cli {

Command add_generate_llm(CLI::App& parent, const std::string& description);
Command add_generate_micro(CLI::App& parent, const std::string& description);
Command add_generate_fabric(CLI::App& parent, const std::string& description);

// Registers every generator under `parent`; `alias_of` names the canonical command in the help
// texts of an alias ("" for the canonical one).
std::vector<Command> add_generators(CLI::App& parent, const std::string& alias_of);

// The iteration `generate llm FLAGS` describes, built in memory (traces, groups, network YAML,
// system JSON), for sweeps; throws Error naming the flags for a bad one. The file flags (--out,
// --network-out, --system-out) and --run are refused.
tools::llm::InMemoryIteration generate_llm_from_flags(const std::vector<std::string>& flags);

}  // namespace chakrasim::cli
