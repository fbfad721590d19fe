#include <iostream>
#include <memory>

#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "cli/commands.h"
#include "cli/run_output.h"
#include "config/config_writers.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_path.h"
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
  in.system.local_mem_bw_gb_per_s = 50;
  for (auto& impl : in.system.implementations) impl = {system::AlgorithmChoice{}};
  chakra::TraceBuilder builder;
  builder.collective("all_reduce_1MiB", chakra::CommType::kAllReduce, 1 << 20);
  auto graph = std::make_shared<const chakra::Graph>(chakra::Graph::build(builder.trace(), "<tutorial demo>"));
  in.graphs.assign(8, graph);
  return in;
}

void write_text(const std::string& path, const std::string& text) {
  write_file_atomically(path, text, "the example's input");
}

// The same example as files a user can edit and run with `chakrasim run`.
void write_inputs(const std::string& dir) {
  prepare_output_dir(dir, "--write-inputs");
  chakra::TraceBuilder builder;
  builder.collective("all_reduce_1MiB", chakra::CommType::kAllReduce, 1 << 20);
  for (int r = 0; r < 8; ++r) chakra::write_trace(chakra::rank_path(dir + "/all_reduce", r), builder.trace());
  const sim::Inputs demo = tutorial_demo();
  write_text(dir + "/network.yml", config::network_yaml(demo.network, "ASTRA-sim's tutorial network: an 8-NPU ring, "
                                                                      "500 ns per hop, 50 GiB/s "
                                                                      "per link and direction\n(the file's \"GB/s\" is "
                                                                      "the reference's "
                                                                      "2^30 B/s: 53.7 GB/s of 10^9 B)"));
  config::SystemConfig system;
  system.system = demo.system;
  system.compute = demo.compute;
  write_text(dir + "/system.json", config::system_json(system));
  std::cout << "wrote " << dir << "/all_reduce.{0..7}.et, " << dir << "/system.json and " << dir
            << "/network.yml; run them with\n  chakrasim run --workload " << dir << "/all_reduce --system " << dir
            << "/system.json --network " << dir << "/network.yml\n";
}

}  // namespace

Command add_demo_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("demo", "Simulate the built-in tutorial example (1 MiB all-reduce on an 8-NPU "
                                             "ring); needs no files");
  cmd->footer("Examples:\n  chakrasim demo\n  chakrasim demo --write-inputs demo   # the same example as files to "
              "edit");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("--write-inputs", *dir, "Write the example's traces and configuration files into DIR instead");
  return [cmd, dir]() -> int {
    if (!cmd->parsed()) return -1;
    if (!dir->empty()) {
      write_inputs(*dir);
      return 0;
    }
    std::cout << "chakrasim demo: 1 MiB all-reduce on 8 NPUs, ring 50 GiB/s (53.7 GB/s) 500 ns per link,\n"
                 "ring algorithm, 4 chunks, 1 active, endpoint delay 10 ns, localBWAware, local memory 50 GB/s.\n\n";
    return print_run(sim::simulate(tutorial_demo()), OutputOptions{});
  };
}

}  // namespace chakrasim::cli
