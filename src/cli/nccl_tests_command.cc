// `chakrasim nccl-tests COLL -b MIN -e MAX -f 2 --gpu H100 --gpus-per-node 8 --nodes N`: what
// nccl-tests would print on a machine named by presets, from NCCL's choice of algorithm and
// protocol timed by chakrasim's model of what NCCL achieves (system/nccl/, docs/nccl.md).
#include <cctype>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/units.h"
#include "system/nccl/sweep.h"

namespace chakrasim::cli {
namespace {

using namespace chakrasim::system::nccl;

// nccl-tests' sizes: bytes, with K, M, G (and T) as powers of 1024, as its -b and -e take them;
// chakrasim's other spellings (64MiB, 1GB) too.
std::uint64_t nccl_tests_size(const std::string& text, const char* option) {
  if (text.size() >= 2 && std::isdigit(static_cast<unsigned char>(text[text.size() - 2])) != 0) {
    static constexpr std::string_view kUnits = "kmgt";
    const std::size_t power = kUnits.find(static_cast<char>(std::tolower(static_cast<unsigned char>(text.back()))));
    if (power != std::string_view::npos) {
      if (const auto number = parse_byte_size(text.substr(0, text.size() - 1))) {
        const std::uint64_t scale = std::uint64_t{1} << (10 * (power + 1));
        if (*number <= (std::uint64_t{1} << 62) / scale) return *number * scale;
      }
    }
  }
  if (const auto bytes = parse_byte_size(text)) return *bytes;
  throw Error(fmt::format("{} \"{}\" is not a size; expected bytes, or a number with K, M or G (powers of 1024, as "
                          "nccl-tests reads them), e.g. 8, 1K, 128M",
                          option, text));
}

struct Options {
  std::string collective, min_size = "8", max_size = "128M", gpu = "H100", nic, algo, proto;
  std::uint64_t factor = 2, step = 0;
  std::uint32_t gpus_per_node = 8, nodes = 1, nics_per_node = 0;
  int nvls = -1;  // NCCL_NVLS_ENABLE: -1 as NCCL decides
  bool collnet = false, amd_cpu = false;
};

int run(const Options& o) {
  const auto collective = parse_collective(o.collective);
  if (!collective) {
    throw Error(fmt::format("unknown collective \"{}\"; expected all_reduce, all_gather, reduce_scatter, alltoall, "
                            "sendrecv, broadcast or reduce",
                            o.collective));
  }
  Machine machine;
  machine.gpu = &gpu_preset(o.gpu);
  machine.gpus_per_node = o.gpus_per_node;
  machine.nodes = o.nodes;
  machine.nic = &nic_preset(o.nic.empty() ? machine.gpu->default_nic : o.nic);
  machine.nics_per_node = o.nics_per_node == 0 ? o.gpus_per_node : o.nics_per_node;
  machine.collnet = o.collnet;
  machine.amd_cpu = o.amd_cpu;
  Enabled enabled = Enabled::all();
  if (!o.algo.empty()) apply_enable_list(enabled, o.algo, true, "--algo");
  if (!o.proto.empty()) apply_enable_list(enabled, o.proto, false, "--proto");
  if (o.nvls == 0) {
    for (auto& row : enabled.algorithms) {
      row[static_cast<std::size_t>(Algorithm::kNvls)] = row[static_cast<std::size_t>(Algorithm::kNvlsTree)] = false;
    }
  }
  SweepOptions sweep;
  sweep.collective = *collective;
  sweep.min_bytes = nccl_tests_size(o.min_size, "-b");
  sweep.max_bytes = nccl_tests_size(o.max_size, "-e");
  sweep.factor = o.step > 0 ? 0 : o.factor;
  sweep.step_bytes = o.step;
  const AchievedModel model(machine, enabled);
  std::cout << sweep_table(model, sweep, run_sweep(model, sweep), true);
  return 0;
}

}  // namespace

Command add_nccl_tests_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("nccl-tests", "Print what nccl-tests would print for a collective on a machine "
                                                   "named by presets: NCCL 2.30's "
                                                   "choice of algorithm and protocol, timed by chakrasim's model of "
                                                   "what NCCL reaches");
  cmd->footer(fmt::format("GPUs: {}. NICs: {}.\nExamples:\n  chakrasim nccl-tests all_reduce -b 8 -e 16G -f 2 --gpu "
                          "H100 "
                          "--gpus-per-node 8 --nodes 1\n  chakrasim nccl-tests all_gather -b 1M -e 1G --gpu H100 "
                          "--nodes 4 "
                          "--nic ndr400 --algo Ring --proto Simple",
                          gpu_preset_names(), nic_preset_names()));
  auto o = std::make_shared<Options>();
  cmd->add_option("collective", o->collective,
                  "all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, broadcast or reduce")
      ->required();
  cmd->add_option("-b,--minbytes", o->min_size, "Smallest size (bytes; K, M, G are powers of 1024)");
  cmd->add_option("-e,--maxbytes", o->max_size, "Largest size");
  cmd->add_option("-f,--stepfactor", o->factor, "Each size this many times the last");
  cmd->add_option("-i,--stepbytes", o->step, "Each size this many bytes more than the last (instead of -f)");
  cmd->add_option("--gpu", o->gpu, "GPU preset (" + gpu_preset_names() + ")");
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs in each node's scale-up domain");
  cmd->add_option("--nodes", o->nodes, "Nodes");
  cmd->add_option("--nic", o->nic, "NIC preset (" + nic_preset_names() + "); default: the GPU's usual one");
  cmd->add_option("--nics-per-node", o->nics_per_node, "NICs in each node (default: one per GPU)");
  cmd->add_option("--algo", o->algo,
                  "As NCCL_ALGO: e.g. Ring, \"Tree,Ring\", ^NVLS, \"allreduce:NVLS;allgather:Ring\"");
  cmd->add_option("--proto", o->proto, "As NCCL_PROTO: e.g. Simple, ^LL128");
  cmd->add_option("--nvls", o->nvls, "As NCCL_NVLS_ENABLE: 0 switches NVLS off");
  cmd->add_flag("--collnet", o->collnet, "As NCCL_COLLNET_ENABLE=1: the network reduces (SHARP)");
  cmd->add_flag("--amd-cpu", o->amd_cpu, "Hosts with AMD CPUs (NCCL's LL ceiling and post overhead differ)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run(*o);
  };
}

}  // namespace chakrasim::cli
