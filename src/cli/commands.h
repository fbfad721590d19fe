// The `chakrasim` subcommands. Each registers its flags on the CLI11 app and returns the
// function that runs it; the function returns the process exit code.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace chakrasim::cli {

using Command = std::function<int()>;

Command add_run_command(CLI::App& app);
Command add_demo_command(CLI::App& app);
Command add_chakra_command(CLI::App& app);
Command add_generate_command(CLI::App& app);
Command add_nccl_tests_command(CLI::App& app);
Command add_compute_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);

// "" when every subcommand `args` (in command-line order) names exists and none is missing;
// else a message naming the unknown word, or the command that needs one, and the valid ones.
std::string unknown_subcommand(CLI::App& app, const std::vector<std::string>& args);

}  // namespace chakrasim::cli
