#include <iostream>
#include <memory>

#include "chakra/trace_builder.h"
#include "cli/commands.h"
#include "cli/run_output.h"
#include "sim/simulation.h"

namespace chakrasim::cli {
namespace {

// ASTRA-sim's tutorial demo: a 1 MiB all-reduce on 8 NPUs connected in a 50 GB/s, 500 ns ring;
// ring algorithm, 4 chunks, one chunk active at a time, endpoint delay 10 ns, localBWAware,
// local memory 50 GB/s. The reference prints 117780 cycles on every NPU.
sim::Inputs tutorial_demo() {
  sim::Inputs in;
  in.network.dims.push_back({network::DimensionKind::kRing, 8, 50.0, 500.0});
  in.system.scheduling_policy = system::SchedulingPolicy::kLifo;
  in.system.collective_optimization = system::CollectiveOptimization::kLocalBwAware;
  in.system.endpoint_delay_ns = 10;
  in.system.active_chunks_per_dimension = 1;
  in.system.preferred_dataset_splits = 4;
  in.system.local_mem_bw_gbps = 50;
  for (auto& impl : in.system.implementations) impl = {system::AlgorithmChoice{}};
  chakra::TraceBuilder builder;
  builder.collective("all_reduce_1MiB", chakra::CommType::kAllReduce, 1 << 20);
  auto graph = std::make_shared<const chakra::Graph>(chakra::Graph::build(builder.trace(), "<tutorial demo>"));
  in.graphs.assign(8, graph);
  return in;
}

}  // namespace

Command add_demo_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "demo", "Simulate the built-in tutorial example (1 MiB all-reduce on an 8-NPU ring); needs no files");
  cmd->footer("Example:\n  chakrasim demo");
  return [cmd]() -> int {
    if (!cmd->parsed()) return -1;
    std::cout << "chakrasim demo: 1 MiB all-reduce on 8 NPUs, ring 50 GB/s 500 ns per link,\n"
                 "ring algorithm, 4 chunks, 1 active, endpoint delay 10 ns, localBWAware, local memory 50 GB/s.\n\n";
    return print_run(sim::simulate(tutorial_demo()), OutputOptions{});
  };
}

}  // namespace chakrasim::cli
