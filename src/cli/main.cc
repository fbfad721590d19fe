// chakrasim: simulate distributed AI training and inference from Chakra execution traces.
#include "cli/app.h"

int main(int argc, char** argv) { return chakrasim::cli::run_chakrasim(argc, argv); }
