// `chakrasim nccl-tests COLL -b MIN -e MAX -f 2 --gpu H100 --gpus-per-node 8 --nodes N`: what
// nccl-tests would print on a machine named by presets, from NCCL's choice of algorithm and
// protocol timed by chakrasim's model of what NCCL achieves (system/nccl/, docs/nccl.md).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "config/network_config.h"
#include "config/system_config.h"
#include "core/error.h"
#include "core/parse_number.h"
#include "core/read_file.h"
#include "core/units.h"
#include "system/nccl/measured_sweep.h"
#include "system/nccl/nccl_collectives.h"
#include "system/nccl/sweep.h"
#include "system/nccl/sweep_comparison.h"

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
      const std::string number = text.substr(0, text.size() - 1);
      const std::uint64_t scale = std::uint64_t{1} << (10 * (power + 1));
      if (const auto whole = parse_byte_size(number)) {
        if (*whole <= kLargestSweepBytes / scale) return *whole * scale;
      } else if (const auto fraction = parse_number<double>(number)) {
        // 1.5K is 1.5 x 1024 bytes, as the unit says, where it is a whole number of bytes.
        const double bytes = *fraction * static_cast<double>(scale);
        if (bytes >= 0 && bytes == std::floor(bytes) && bytes <= static_cast<double>(kLargestSweepBytes))
          return static_cast<std::uint64_t>(bytes);
        throw Error(
            fmt::format("{} \"{}\" is {} bytes; expected a whole number of bytes from 0 to 2^62", option, text, bytes));
      }
    }
  }
  if (const auto bytes = parse_byte_size(text)) return *bytes;
  throw Error(fmt::format("{} \"{}\" is not a size; expected bytes, or a number with K, M or G (powers of 1024, as "
                          "nccl-tests reads them), e.g. 8, 1K, 128M",
                          option, text));
}

struct Options {
  std::string collective, min_size = "8", max_size = "128M", gpu = "H100", nic, algo, proto, system, network;
  std::string compare;                 // a real run's output to set the model beside
  bool leave_out_spikes = false;       // --compare's noise spikes out of its means
  bool gpus_per_thread_given = false;  // -g on the command line (--compare checks it against the log's)
  // --gpus-per-node and --nodes on the command line: a system or network file may not say otherwise.
  bool gpus_per_node_given = false, nodes_given = false;
  std::string type = "float", op = "sum";
  int root = 0;  // -1: each rank in turn, as nccl-tests runs it
  // nccl-tests' run controls (threads and GPUs per process, iterations, warm-up, data check,
  // parallel init, which rank's time, timeout): taken so that a real run's command line works.
  // Only the GPUs a thread drives change a figure: the thread launches each one's kernel in turn
  // (--gpus-per-node and --nodes give the ranks).
  std::int64_t threads = 1, gpus_per_thread = 1, iters = 20, warmup = 5, check = 1, parallel_init = 0, average = 1,
               timeout = 0;
  // A host thread's time to launch one GPU's call, us: the median of seven single-process runs'
  // flat small sizes (2, 4 and 8 GPUs a thread; H100, A100 and RTX 4090 hosts: 3.8-6.0 us a GPU);
  // docs/nccl.md.
  double host_launch_us = 4.5;
  // nccl-tests' options that change what it measures in ways this model does not follow: refused
  // away from their defaults (CUDA graphs 0, aggregated calls 1, run cycles 1, CPU time 0), saying
  // why, rather than ignored.
  std::int64_t graph_launches = 0, agg_iters = 1, run_cycles = 1, cputime = 0;
  std::uint64_t factor = 2, step = 0;
  std::uint32_t gpus_per_node = 8, nodes = 1;
  std::optional<std::uint32_t> nics_per_node;  // unset: one per GPU
  int nvls = -1;                               // NCCL_NVLS_ENABLE: -1 as NCCL decides
  int pxn = 1;                                 // NCCL_PXN_DISABLE=0
  double platform_latency_us = 0;
  bool collnet = false, amd_cpu = false;
  system::NcclSpec calibration;  // only its efficiencies and fixed costs
};

constexpr std::size_t kRowLimit = 100000;  // a table far beyond any real run's, short of a blow-up

// nccl-tests' -d and -o: one name, or "all" for each in its order.
template <typename T>
std::vector<T> named_or_all(const std::string& text, std::size_t count, std::optional<T> (*parse)(std::string_view),
                            const std::string& names, const char* option) {
  if (text == "all") {
    std::vector<T> all;
    for (std::size_t i = 0; i < count; ++i) all.push_back(static_cast<T>(i));
    return all;
  }
  if (const auto one = parse(text)) return {*one};
  throw Error(fmt::format("{} \"{}\": expected one of {}, or all (nccl-tests' names)", option, text, names));
}

// The bandwidth a GPU has out of one network dimension, 10^9 B/s: a switch's link, a ring's two
// neighbours, a fully connected group's n-1 peers.
double gpu_gb_per_s(const network::DimensionSpec& d) {
  const double link = d.bandwidth_gib_per_s * 1073741824.0 / 1e9;
  switch (d.kind) {
    case network::DimensionKind::kSwitch: return link;
    case network::DimensionKind::kRing: return d.npus > 2 ? 2 * link : link;
    case network::DimensionKind::kFullyConnected: return link * (d.npus - 1);
  }
  return link;
}

// A file's figure where the command line gave one too: they must agree, or which one counts is a
// guess the user did not make.
void agree(const std::string& first, std::uint64_t first_value, const std::string& second, std::uint64_t second_value) {
  if (!first.empty() && first_value != second_value) {
    throw Error(fmt::format("{}: {}; {}: {}; expected the same, or one of them left out", first, first_value, second,
                            second_value));
  }
}

// Options the system and network files give instead of the presets: the NCCL model's keys of the
// system JSON, and the network's first dimension as the node (its bandwidth the GPU's scale-up),
// the others as the nodes (the second's bandwidth each GPU's NIC).
void apply_files(Options& o, GpuPreset& gpu, NicPreset& nic, std::uint32_t& nodes) {
  std::string gpus_per_node_from = o.gpus_per_node_given ? "--gpus-per-node" : "";
  if (!o.system.empty()) {
    const config::SystemConfig config = config::load_system(o.system, {});
    for (const std::string& w : config.warnings) {  // keys it does not know; not the system layer's defaults
      if (w.find("unknown key") != std::string::npos) std::cerr << "warning: " << w << "\n";
    }
    const system::NcclSpec& spec = config.system.nccl;
    o.gpu = spec.gpu;
    gpu = gpu_preset(o.gpu);
    if (!spec.nic.empty()) o.nic = spec.nic;
    if (spec.gpus_per_node != 0) {
      const std::string key = o.system + "'s nccl-gpus-per-node";
      agree(gpus_per_node_from, o.gpus_per_node, key, spec.gpus_per_node);
      o.gpus_per_node = spec.gpus_per_node;
      gpus_per_node_from = key;
    }
    if (spec.nics_per_node != 0) o.nics_per_node = spec.nics_per_node;
    if (!spec.algo.empty()) o.algo = spec.algo;
    if (!spec.proto.empty()) o.proto = spec.proto;
    if (!spec.nvls) o.nvls = 0;
    o.collnet = o.collnet || spec.collnet;
    if (!spec.pxn) o.pxn = 0;
    if (spec.platform_latency_us != 0) o.platform_latency_us = spec.platform_latency_us;
    if (!spec.datatype.empty()) o.type = spec.datatype;
    if (!spec.reduce_op.empty()) o.op = spec.reduce_op;
    for (auto field :
         {&system::NcclSpec::ring_efficiency, &system::NcclSpec::nvls_efficiency,
          &system::NcclSpec::nvls_tree_efficiency, &system::NcclSpec::nvls_chunk_us, &system::NcclSpec::tree_message_us,
          &system::NcclSpec::ll_channel_efficiency, &system::NcclSpec::ll_proxy_scan_ns,
          &system::NcclSpec::nic_efficiency, &system::NcclSpec::nic_p2p_efficiency,
          &system::NcclSpec::p2p_channel_gb_per_s, &system::NcclSpec::all_to_all_efficiency}) {
      if (spec.*field) o.calibration.*field = spec.*field;
    }
  }
  nic = nic_preset(o.nic.empty() ? gpu.default_nic : o.nic);
  if (o.network.empty()) return;
  std::vector<std::string> warnings;
  const network::TopologySpec net = config::load_network(o.network, &warnings);
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
  if (net.dims.empty()) throw Error(o.network + ": no dimension; expected the node's first");
  const double scale_up = gpu_gb_per_s(net.dims[0]);
  gpu.nccl_link_gb_per_s *= scale_up / gpu.scale_up_gb_per_s();  // NCCL's figure, in proportion
  gpu.link_gb_per_s = scale_up / gpu.scale_up_links;
  agree(gpus_per_node_from, o.gpus_per_node, o.network + "'s first dimension", net.dims[0].npus);
  o.gpus_per_node = net.dims[0].npus;
  gpu.domain = std::max(gpu.domain, o.gpus_per_node);  // the file's node is the machine's
  std::uint64_t network_nodes = 1;
  for (std::size_t d = 1; d < net.dims.size(); ++d) network_nodes *= net.dims[d].npus;
  agree(o.nodes_given ? "--nodes" : "", nodes, o.network + "'s other dimensions", network_nodes);
  nodes = static_cast<std::uint32_t>(std::min<std::uint64_t>(network_nodes, UINT32_MAX));
  if (net.dims.size() > 1) nic.line_gb_per_s = gpu_gb_per_s(net.dims[1]);
}

// The nccl-tests options refused (Options' second group), each with what to do instead.
void refuse_unmodelled(const Options& o) {
  const std::tuple<const char*, std::int64_t, std::int64_t, const char*> refused[] =
      {{"-G", o.graph_launches, 0,
        "CUDA graphs take the host's launches away and shorten the GPUs' own, which NCCL's latencies include; the "
        "model does not follow that (-g 1, or a smaller --host-launch-us, leaves the launches out)"},
       {"-m", o.agg_iters, 1, "the model times one call at a time, not calls aggregated in a group"},
       {"-N", o.run_cycles, 1, "the model's table is the same every cycle"},
       {"-C", o.cputime, 0, "the model reports the GPUs' time, not the CPU's"}};
  for (const auto& [flag, value, fine, why] : refused) {
    if (value != fine)
      throw Error(fmt::format("{} {}: {}; expected {}, or the option left out", flag, value, why, fine));
  }
}

// The values of the flags that set the model's constants and the host's launches (a system
// file's were checked as it was read).
void check_flags(const Options& o) {
  if (o.threads < 1 || o.gpus_per_thread < 1 || o.threads > o.gpus_per_node ||
      o.gpus_per_thread > o.gpus_per_node / o.threads) {
    throw Error(fmt::format("-t {} -g {}: a process drives threads x GPUs a thread of one node's {} GPUs "
                            "(--gpus-per-node); expected each 1 or more, their product at most {}",
                            o.threads, o.gpus_per_thread, o.gpus_per_node, o.gpus_per_node));
  }
  const auto share = [](const std::optional<double>& v, const char* flag, const char* of = "the link's rate") {
    if (v && !(*v > 0 && *v <= 1)) {
      throw Error(fmt::format("{} {}: expected a share of {}, above 0 and at most 1", flag, *v, of));
    }
  };
  const auto cost = [](const std::optional<double>& v, const char* flag, const char* unit = "us") {
    if (v && !(*v >= 0 && std::isfinite(*v))) throw Error(fmt::format("{} {}: expected {}, 0 or more", flag, *v, unit));
  };
  const auto rate = [](const std::optional<double>& v, const char* flag) {
    if (v && !(*v > 0 && std::isfinite(*v)))
      throw Error(fmt::format("{} {}: expected a rate in GB/s, above 0", flag, *v));
  };
  share(o.calibration.ring_efficiency, "--ring-efficiency");
  share(o.calibration.nvls_efficiency, "--nvls-efficiency");
  share(o.calibration.nvls_tree_efficiency, "--nvls-tree-efficiency", "NVLS's NVLink rate");
  share(o.calibration.nic_efficiency, "--nic-efficiency");
  share(o.calibration.nic_p2p_efficiency, "--nic-p2p-efficiency");
  share(o.calibration.all_to_all_efficiency, "--all-to-all-efficiency");
  share(o.calibration.ll_channel_efficiency, "--ll-channel-efficiency", "NCCL's per-channel LL128 ceiling");
  cost(o.calibration.nvls_chunk_us, "--nvls-chunk-us");
  cost(o.calibration.tree_message_us, "--tree-message-us");
  cost(o.calibration.ll_proxy_scan_ns, "--ll-proxy-scan-ns", "ns");
  cost(o.host_launch_us, "--host-launch-us");
  rate(o.calibration.p2p_channel_gb_per_s, "--p2p-channel-gb-per-s");
}

// `--compare FILE`: a real run's table beside the model's times for its rows (measured_sweep.h).
// Its sizes, types, operations and roots are the file's, and so is its -g where it prints one;
// the machine is the options', and must be the one the log's "# Rank" lines name.
int compare(const Options& o, Collective collective, const Machine& machine, const Enabled& enabled) {
  // A log with NCCL's INFO lines may run to megabytes: a description file's cap.
  const std::string text =
      read_file(o.compare, "nccl-tests output (--compare)", "nccl-tests' printed table", kDescriptionFileMaxBytes);
  const MeasuredRun run = read_nccl_tests_log(text, o.compare, collective);
  if (run.hosts && (*run.hosts != machine.nodes || *run.ranks_per_host != machine.gpus_per_node)) {
    throw Error(fmt::format("{}: a run of {} ranks on {} host(s), {} on the busiest (its \"# Rank\" lines); the "
                            "machine "
                            "has {} node(s) x {} GPUs; expected --nodes {} --gpus-per-node {}",
                            o.compare, *run.ranks, *run.hosts, *run.ranks_per_host, machine.nodes,
                            machine.gpus_per_node, *run.hosts, *run.ranks_per_host));
  }
  if (run.ranks && *run.ranks != machine.ranks()) {
    throw Error(fmt::format("{}: a run of {} ranks (its \"# Rank\" lines); the machine has {} (--gpus-per-node x "
                            "--nodes); expected the same",
                            o.compare, *run.ranks, machine.ranks()));
  }
  if (const GpuPreset* preset = gpu_preset_in(run.gpu_name);
      preset != nullptr && std::string_view(preset->name) != machine.gpu->name) {
    throw Error(fmt::format("{}: a run on {} (its \"# Rank\" lines); the machine's GPU is {}; expected --gpu {}",
                            o.compare, run.gpu_name, machine.gpu->name, preset->name));
  }
  if (run.gpus_per_thread) {
    if (o.gpus_per_thread_given && o.gpus_per_thread != *run.gpus_per_thread) {
      throw Error(fmt::format("-g {}: the log {} ran with nGpus {}; expected -g left out, or the same",
                              o.gpus_per_thread, o.compare, *run.gpus_per_thread));
    }
    if (*run.gpus_per_thread > machine.gpus_per_node) {
      throw Error(fmt::format("{}: nGpus {}: a thread drives GPUs of one node, {} here (--gpus-per-node)", o.compare,
                              *run.gpus_per_thread, machine.gpus_per_node));
    }
  }
  CompareOptions options;
  options.gpus_per_thread = run.gpus_per_thread.value_or(o.gpus_per_thread);
  options.host_launch_us = o.host_launch_us;
  options.leave_out_spikes = o.leave_out_spikes;
  const Comparison c =
      compare_with_model(run, o.compare, collective, machine, enabled, efficiencies_of(o.calibration), options);
  std::cout << comparison_table(c, collective, machine, o.compare);
  return 0;
}

int run(Options o) {
  refuse_unmodelled(o);
  GpuPreset gpu = gpu_preset(o.gpu);
  NicPreset nic;
  std::uint32_t nodes = o.nodes;
  apply_files(o, gpu, nic, nodes);
  const auto collective = parse_collective(o.collective);
  if (!collective) {
    throw Error(fmt::format("unknown collective \"{}\"; expected all_reduce, all_gather, reduce_scatter, alltoall, "
                            "sendrecv, broadcast or reduce",
                            o.collective));
  }
  Machine machine;
  machine.gpu = &gpu;
  machine.gpus_per_node = o.gpus_per_node;
  machine.nodes = nodes;
  machine.nic = &nic;
  if (o.nics_per_node == 0u) throw Error("--nics-per-node is 0; expected 1 or more (leave it out for one a GPU)");
  machine.nics_per_node = o.nics_per_node.value_or(o.gpus_per_node);
  machine.collnet = o.collnet;
  machine.pxn = o.pxn != 0;
  machine.platform_latency_us = o.platform_latency_us;
  machine.amd_cpu = o.amd_cpu;
  Enabled enabled = Enabled::all();
  if (!o.algo.empty()) apply_enable_list(enabled, o.algo, true, "--algo");
  if (!o.proto.empty()) apply_enable_list(enabled, o.proto, false, "--proto");
  if (o.nvls == 0) {
    for (auto& row : enabled.algorithms) {
      row[static_cast<std::size_t>(Algorithm::kNvls)] = row[static_cast<std::size_t>(Algorithm::kNvlsTree)] = false;
    }
  }
  check_machine(machine);
  check_flags(o);
  if (!o.compare.empty()) return compare(o, *collective, machine, enabled);
  SweepOptions sweep;
  sweep.collective = *collective;
  sweep.min_bytes = nccl_tests_size(o.min_size, "-b");
  sweep.max_bytes = nccl_tests_size(o.max_size, "-e");
  sweep.factor = o.step > 0 ? 0 : o.factor;
  sweep.step_bytes = o.step;
  std::vector<DataType> types = named_or_all(o.type, kDataTypes, parse_data_type, data_type_names(), "-d");
  if (o.type == "all" && gpu.compute_capability < 90) {
    // nccl-tests leaves 8-bit floats out of "all" before Hopper.
    std::erase_if(types, is_float8);
  }
  // Collectives that take no operation run nccl-tests' first (printed "none"); -o is read anyway.
  std::vector<ReduceOp> ops = named_or_all(o.op, kReduceOps, parse_reduce_op, reduce_op_names(), "-o");
  if (!takes_op(sweep.collective)) ops = {ReduceOp::kSum};
  // The roots, first to last; nccl-tests reads -r for a broadcast and a reduce only.
  std::uint32_t first_root = 0, last_root = 0;
  if (rooted(sweep.collective)) {
    if (o.root < -1 || o.root >= static_cast<std::int64_t>(machine.ranks())) {
      throw Error(
          fmt::format("-r {}: expected a root rank from 0 to {}, or -1 for each in turn", o.root, machine.ranks() - 1));
    }
    first_root = o.root == -1 ? 0 : static_cast<std::uint32_t>(o.root);
    last_root = o.root == -1 ? machine.ranks() - 1 : first_root;
  }
  sweep.host_issue_us = static_cast<double>(o.gpus_per_thread) * o.host_launch_us;
  // One sweep per type, operation and root, in nccl-tests' order, under one table. Each type and
  // operation leaves NCCL its own algorithms.
  std::vector<SweepRow> rows;
  for (const DataType type : types) {
    check_call(sweep.collective, type, machine);
    for (const ReduceOp op : ops) {
      Enabled call = enabled;
      restrict_to_call(call, sweep.collective, type, op, machine);
      const AchievedModel model(machine, call, efficiencies_of(o.calibration));
      for (std::uint32_t root = first_root; root <= last_root; ++root) {
        sweep.type = type;
        sweep.op = op;
        sweep.root = root;
        std::vector<SweepRow> more = run_sweep(model, sweep);
        rows.insert(rows.end(), more.begin(), more.end());
        if (rows.size() > kRowLimit) {
          throw Error(fmt::format("more than {} rows; expected fewer types (-d), operations (-o), roots (-r) or "
                                  "sizes",
                                  kRowLimit));
        }
      }
    }
  }
  // The table's head names the machine: any of the models would.
  std::cout << sweep_table(AchievedModel(machine, enabled, efficiencies_of(o.calibration)), sweep, rows, true);
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
  // What a sweep's rows are; --compare takes them from its file instead.
  const std::vector<CLI::Option*> row_options =
      {cmd->add_option("-b,--minbytes", o->min_size, "Smallest size (bytes; K, M, G are powers of 1024)")
           ->capture_default_str(),
       cmd->add_option("-e,--maxbytes", o->max_size, "Largest size")->capture_default_str(),
       cmd->add_option("-f,--stepfactor", o->factor, "Each size this many times the last")->capture_default_str(),
       cmd->add_option("-i,--stepbytes", o->step, "Each size this many bytes more than the last (instead of -f)"),
       cmd->add_option("-d,--datatype", o->type,
                       "Element type as nccl-tests names it (" + data_type_names() + "), or all")
           ->capture_default_str(),
       cmd->add_option("-o,--op", o->op, "Reduction as nccl-tests names it (" + reduce_op_names() + "), or all")
           ->capture_default_str(),
       cmd->add_option("-r,--root", o->root, "Broadcast's and reduce's root rank, or -1 for each in turn")
           ->capture_default_str()};
  for (const auto& [flags, field] :
       {std::pair{"-t,--nthreads", &Options::threads}, std::pair{"-n,--iters", &Options::iters},
        std::pair{"-w,--warmup_iters", &Options::warmup}, std::pair{"-c,--check", &Options::check},
        std::pair{"-p,--parallel_init", &Options::parallel_init}, std::pair{"-a,--average", &Options::average},
        std::pair{"-T,--timeout", &Options::timeout}}) {
    cmd->add_option(flags, (*o).*field, "As nccl-tests takes it; the model's figures do not depend on it");
  }
  CLI::Option* gpus_per_thread = cmd->add_option("-g,--ngpus", o->gpus_per_thread,
                                                 "GPUs a thread drives, as nccl-tests takes it: the thread launches "
                                                 "each one's call in turn, so a "
                                                 "call takes at least -g x --host-launch-us")
                                     ->capture_default_str();
  for (const auto& [flags, field] :
       {std::pair{"-G,--cudagraph", &Options::graph_launches}, std::pair{"-m,--agg_iters", &Options::agg_iters},
        std::pair{"-N,--run_cycles", &Options::run_cycles}, std::pair{"-C,--report_cputime", &Options::cputime}}) {
    cmd->add_option(flags, (*o).*field, "nccl-tests' option, refused with what to use instead");
  }
  cmd->add_option("--gpu", o->gpu, "GPU preset (" + gpu_preset_names() + ")")->capture_default_str();
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs in each node's scale-up domain")->capture_default_str();
  cmd->add_option("--nodes", o->nodes, "Nodes")->capture_default_str();
  cmd->add_option("--nic", o->nic, "NIC preset (" + nic_preset_names() + "); default: the GPU's usual one");
  cmd->add_option("--nics-per-node", o->nics_per_node, "NICs in each node (default: one per GPU)");
  cmd->add_option("--algo", o->algo,
                  "As NCCL_ALGO: e.g. Ring, \"Tree,Ring\", ^NVLS, \"allreduce:NVLS;allgather:Ring\"");
  cmd->add_option("--proto", o->proto, "As NCCL_PROTO: e.g. Simple, ^LL128");
  cmd->add_option("--nvls", o->nvls, "As NCCL_NVLS_ENABLE: 0 switches NVLS off (1 and 2: as NCCL decides)")
      ->check(CLI::IsMember({0, 1, 2}));
  cmd->add_option("--pxn", o->pxn, "0 as NCCL_PXN_DISABLE=1: all-to-all across nodes straight to the peer's NIC")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 1}));
  cmd->add_option("--platform-latency-us", o->platform_latency_us,
                  "Added to every call's time, not to NCCL's choice: an 8-byte call's measured time less this "
                  "table's")
      ->capture_default_str();
  cmd->add_option("--host-launch-us", o->host_launch_us,
                  "A host thread's time to launch one GPU's call, us: a call takes at least -g times this")
      ->capture_default_str();
  cmd->add_option("--ring-efficiency", o->calibration.ring_efficiency,
                  "The share of NVLink's rate rings reach (default: the GPU preset's, 0.816 on H100; docs/nccl.md)");
  cmd->add_option("--nvls-efficiency", o->calibration.nvls_efficiency,
                  "The share of NVLink's rate NVLS reaches before each loop's fixed cost (default: the GPU preset's, "
                  "0.744 on H100)");
  cmd->add_option("--nvls-tree-efficiency", o->calibration.nvls_tree_efficiency,
                  "NVLS-tree's NVLink side across nodes as a share of NVLS's rate in one node (default 0.91)");
  cmd->add_option("--nvls-chunk-us", o->calibration.nvls_chunk_us,
                  "NVLS's fixed cost per chunk of a loop, us (default: the GPU preset's, 0.6 on H100, 1.217 on B200)");
  cmd->add_option("--tree-message-us", o->calibration.tree_message_us,
                  "A tree's fixed cost per network message, us (default: the GPU preset's, 0.27 on H100, 0.548 on "
                  "B200)");
  cmd->add_option("--ll-channel-efficiency", o->calibration.ll_channel_efficiency,
                  "An LL channel's data rate as a share of NCCL's per-channel LL128 ceiling (default 0.327)");
  cmd->add_option("--ll-proxy-scan-ns", o->calibration.ll_proxy_scan_ns,
                  "A send proxy's time to read a byte of LL's lines before they cross the network, ns (default 0.3)");
  cmd->add_option("--p2p-channel-gb-per-s", o->calibration.p2p_channel_gb_per_s,
                  "A send or receive's channel's data rate, GB/s (default 21; across nodes at most NCCL's 14)");
  cmd->add_option("--all-to-all-efficiency", o->calibration.all_to_all_efficiency,
                  "The share of NVLink's rate an all-to-all through the NVSwitches reaches with many channels a peer "
                  "(default: the GPU preset's, 0.776 on H100)");
  cmd->add_option("--nic-efficiency", o->calibration.nic_efficiency,
                  "The share of a NIC's line rate NCCL's collectives reach (default: the NIC preset's, NDR 0.96)");
  cmd->add_option("--nic-p2p-efficiency", o->calibration.nic_p2p_efficiency,
                  "The share of a NIC's line rate all-to-all and send/receive reach (default: the NIC preset's, NDR "
                  "0.92, or with --nic-efficiency the preset's ratio to it)");
  cmd->add_flag("--collnet", o->collnet, "As NCCL_COLLNET_ENABLE=1: the network reduces (SHARP)");
  cmd->add_flag("--amd-cpu", o->amd_cpu, "Hosts with AMD CPUs (NCCL's LL ceiling and post overhead differ)");
  CLI::Option* compare = cmd->add_option("--compare", o->compare,
                                         "A real nccl-tests output (a log of one or several collectives): print the "
                                         "model's time beside each of its rows "
                                         "of this collective (their sizes, types, operations and roots; its -g) and "
                                         "the geomean error in time");
  for (CLI::Option* row_option : row_options) compare->excludes(row_option);
  cmd->add_flag("--leave-out-spikes", o->leave_out_spikes,
                "With --compare: leave rows over 1.2 times both neighbours' time (noise) out of the means and "
                "the shape, as docs/nccl.md's figures do")
      ->needs(compare);
  cmd->add_option("--system", o->system,
                  "A system JSON whose nccl-* keys (GPU, NIC, NCCL_ALGO, ...) replace the options above");
  cmd->add_option("--network", o->network,
                  "A network YAML instead of the presets' bandwidths: its first dimension is a node (its bandwidth "
                  "each GPU's scale-up), the rest the nodes (the second's bandwidth each GPU's NIC)");
  return [cmd, o, gpus_per_thread]() -> int {
    if (!cmd->parsed()) return -1;
    o->gpus_per_thread_given = gpus_per_thread->count() > 0;
    o->gpus_per_node_given = cmd->count("--gpus-per-node") > 0;
    o->nodes_given = cmd->count("--nodes") > 0;
    return run(*o);
  };
}

}  // namespace chakrasim::cli
