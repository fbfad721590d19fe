// The chakrasim command line, apart from `main`, so that another entry point (the MPI sweep
// binary, cli/sweep_mpi_main.cc) runs the same commands.
#pragma once

#include <string>
#include <vector>

namespace chakrasim::cli {

// Parses argv and runs the subcommand it names; returns the exit code (errors are printed).
int run_chakrasim(int argc, char** argv);

// argv as run_chakrasim received it (argv[0] first).
const std::vector<std::string>& arguments();

}  // namespace chakrasim::cli
