// `chakrasim compute`: SCALE-sim v2's inputs in, its compute and access reports out, from the
// systolic array's closed forms (compute/systolic/): a drop-in for SCALE-sim's stall-free runs.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "compute/systolic/scalesim_files.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_path.h"
#include "core/read_file.h"

namespace chakrasim::cli {
namespace {

struct ComputeOptions {
  std::string config;
  std::string topology;
  bool gemm = false;
  std::string out;
};

int run_compute(const ComputeOptions& o) {
  using namespace compute::systolic;
  prepare_output_dir(o.out, "--out");
  const auto start = std::chrono::steady_clock::now();
  const ScaleSimConfig cfg =
      parse_scalesim_config(read_file(o.config, "SCALE-sim config", "a SCALE-sim .cfg file"), o.config);
  const std::vector<Layer> layers =
      parse_scalesim_topology(read_file(o.topology, "SCALE-sim topology", "a SCALE-sim topology .csv file"), o.topology,
                              o.gemm);
  if (layers.empty()) fail("{}: no layers after the header line; expected one layer per line", o.topology);
  std::vector<LayerReport> reports;
  reports.reserve(layers.size());
  std::uint64_t cycles = 0;
  std::size_t dram_estimated = 0;
  for (const Layer& layer : layers) {
    reports.push_back(analyse_layer(cfg.array, layer));
    if (cfg.user_bandwidth) {
      const double memory =
          std::ceil(memory_bound_cycles(cfg.array, layer, static_cast<double>(cfg.bandwidth_words_per_cycle)));
      const auto compute = static_cast<double>(reports.back().total_cycles);
      if (memory > compute) add_stall_cycles(reports.back(), cfg.array, static_cast<std::uint64_t>(memory - compute));
    }
    cycles += reports.back().total_cycles;
    if (!reports.back().dram_exact) ++dram_estimated;
  }
  const std::filesystem::path dir(o.out);
  write_file_atomically((dir / "COMPUTE_REPORT.csv").string(), compute_report_csv(reports), "--out");
  write_file_atomically((dir / "DETAILED_ACCESS_REPORT.csv").string(), detailed_access_report_csv(reports), "--out");
  write_file_atomically((dir / "BANDWIDTH_REPORT.csv").string(), bandwidth_report_csv(reports), "--out");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("{}: {} layers on a {} x {} {} array, {} cycles in all; wrote {}, {} and "
                           "BANDWIDTH_REPORT.csv in {:.3f} s\n",
                           cfg.run_name, layers.size(), cfg.array.rows, cfg.array.cols,
                           dataflow_name(cfg.array.dataflow), cycles, (dir / "COMPUTE_REPORT.csv").string(),
                           (dir / "DETAILED_ACCESS_REPORT.csv").string(), seconds);
  if (cfg.user_bandwidth) {
    std::cerr << "warning: " << o.config
              << ": InterfaceBandwidth USER (a finite DRAM bandwidth): the stall cycles are an approximation of "
                 "SCALE-sim's (docs/systolic.md gives its error); every other compute and SRAM figure is exact\n";
  }
  if (dram_estimated > 0) {
    std::cerr << fmt::format("warning: {} of {} layers do not fit their SRAM's working half: their DRAM columns count "
                             "each element once, "
                             "where SCALE-sim refetches what its buffers evict (the compute and SRAM columns are "
                             "exact)\n",
                             dram_estimated, layers.size());
  }
  return 0;
}

}  // namespace

Command add_compute_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("compute", "SCALE-sim v2's systolic-array reports from its own config and "
                                                "topology files, in closed form");
  cmd->footer("Example:\n  chakrasim compute --config google.cfg --topology alexnet.csv --out reports\n"
              "  chakrasim compute --config scale.cfg --topology test_mnk.csv --gemm --out reports\n"
              "Writes OUT/COMPUTE_REPORT.csv, OUT/DETAILED_ACCESS_REPORT.csv and OUT/BANDWIDTH_REPORT.csv as "
              "SCALE-sim's "
              "stall-free mode "
              "(InterfaceBandwidth: CALC) does (docs/systolic.md).");
  auto o = std::make_shared<ComputeOptions>();
  cmd->add_option("--config,-c", o->config, "SCALE-sim architecture config (.cfg)")->required();
  cmd->add_option("--topology,-t", o->topology, "SCALE-sim topology (.csv)")->required();
  cmd->add_flag("--gemm", o->gemm, "The topology lists GEMMs (name, M, N, K) instead of convolutions (as -i gemm)");
  cmd->add_option("--out,-p", o->out, "Directory for the three reports")->required();
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_compute(*o);
  };
}

}  // namespace chakrasim::cli
