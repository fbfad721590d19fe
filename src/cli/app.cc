// The chakrasim command line: every subcommand registered, parsed and run (cli/app.h).
#include "cli/app.h"

#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/error.h"

namespace {

// CLI11 reads "-1" into an unsigned option as 2^64-1 (strtoull wraps), which then reaches an
// error as 18446744073709551615 or, worse, a run. Every unsigned option of every command gets a
// check that refuses a sign, so "-1" is reported as the -1 the user wrote.
void refuse_negative_counts(CLI::App& app) {
  const CLI::Validator non_negative(
      [](std::string& text) -> std::string {
        const std::size_t first = text.find_first_not_of(" \t");
        if (first != std::string::npos && text[first] == '-')
          return "value " + text + " is invalid; expected 0 or more";
        return {};
      },
      "", "non-negative");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_name() == "UINT") option->check(non_negative);
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_negative_counts(*sub);
}

// CLI11 reads an empty value ("--host-launch-us ''") as a number's 0 or a text's unset, which
// then runs as if the user had asked for it. Every option that takes a value refuses an empty one.
void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& text) -> std::string {
        if (text.find_first_not_of(" \t") == std::string::npos) return "the value is empty; expected one";
        return {};
      },
      "", "non-empty");
  for (CLI::Option* option : app.get_options()) {
    // ASTRA-sim's flags that do nothing here take what its scripts pass, empty or not.
    const bool no_effect = option->get_description().starts_with("Accepted for compatibility");
    if (option->get_type_size() != 0 && !no_effect) option->check(non_empty);
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

// What a command printed is its result: a failed write to standard output (a full disk, a closed
// file) is an error, not a success with nothing in the file.
int checked_stdout(int code) {
  std::cout.flush();
  if (code == 0 && !std::cout) {
    std::cerr << "error: could not write the output to standard output (disk full or closed?)\n";
    return 1;
  }
  return code;
}

}  // namespace

namespace chakrasim::cli {

namespace {
std::vector<std::string> program_arguments;
}

const std::vector<std::string>& arguments() { return program_arguments; }

int run_chakrasim(int argc, char** argv) {
  program_arguments.assign(argv, argv + argc);
  // ASTRA-sim's binaries take their flags without a subcommand: treat that form as `run`.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front().rfind("--", 0) == 0 && args.front() != "--help" && args.front() != "--version") {
    args.insert(args.begin(), "run");
  }

  CLI::App app{"chakrasim: simulate distributed AI systems from Chakra execution traces", "chakrasim"};
  app.set_version_flag("--version", "chakrasim 0.1.0");
  app.require_subcommand(1);
  std::vector<Command> commands = {add_run_command(app),      add_demo_command(app),       add_chakra_command(app),
                                   add_generate_command(app), add_nccl_tests_command(app), add_compute_command(app),
                                   add_sweep_command(app)};
  refuse_negative_counts(app);
  refuse_empty_values(app);
  if (const std::string unknown = unknown_subcommand(app, args); !unknown.empty()) {
    std::cerr << "error: " << unknown << "\n";
    return 1;
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::Success& e) {  // --help, --version, --help-system: printed, exit 0
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Argument errors read like every other error: "error: ...", exit 1.
    std::cerr << "error: " << e.what() << "\nRun with --help for more information.\n";
    return 1;
  }
  try {
    for (const Command& command : commands) {
      int code = command();
      if (code >= 0) return checked_stdout(code);
    }
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory\n";
    return 1;
  }
  return checked_stdout(0);
}

}  // namespace chakrasim::cli
