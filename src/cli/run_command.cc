#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "chakra/workload_files.h"
#include "cli/commands.h"
#include "cli/custom_size_check.h"
#include "cli/progress_line.h"
#include "cli/run_inputs.h"
#include "cli/run_output.h"
#include "config/network_config.h"
#include "config/other_configs.h"
#include "config/system_config.h"
#include "core/error.h"
#include "core/output_path.h"
#include "core/resources.h"
#include "core/units.h"
#include "network/network.h"
#include "network/topology.h"
#include "report/analysis.h"
#include "report/html_report.h"
#include "report/node_log.h"
#include "report/summary.h"
#include "report/timeline.h"
#include "sim/simulation.h"

namespace chakrasim::cli {
namespace {

struct RunOptions {
  std::string workload;
  std::string system;
  std::string network;
  std::string memory;
  std::string comm_groups;
  std::string backend = "congestion-unaware";
  std::string json;
  std::uint32_t num_queues_per_dim = 1;
  double injection_scale = 1;
  double comm_scale = 1;
  double compute_scale = 1;
  bool rendezvous = false;
  bool no_folding = false;
  std::string collectives;  // --collectives: overrides the system JSON's "collectives"
  std::string logging_configuration;
  std::string logging_folder;
  bool quiet = false;
  bool progress = false;  // --progress: a progress line even when stderr is not a terminal
  bool astra_stats = false;
  std::string timeline;
  std::string timeline_npus;
  std::string timeline_window;
  std::string group_names;
  std::string stats_csv;
  std::string flows_csv;
  std::string report_dir;
};

// Timelines of more NPUs than this are hard to use; without --timeline-npus the first ones are shown.
constexpr NpuId kDefaultTimelineNpus = 256;

// "2ms:5ms" -> [2 ms, 5 ms); either side may be empty ("10ms:" is from 10 ms on).
report::TimeWindow parse_time_window(const std::string& text) {
  report::TimeWindow window;
  if (text.empty()) return window;
  const std::size_t colon = text.find(':');
  auto bound = [&](const std::string& part, Tick& out) {
    if (part.empty()) return;
    const auto ns = parse_duration_ns(part);
    if (!ns) {
      fail("--timeline-window: \"{}\" in \"{}\" is not a time; expected FROM:TO with units such as 2ms:5ms or "
           "1500us:2.5ms",
           part, text);
    }
    out = *ns;
  };
  if (colon == std::string::npos) {
    fail("--timeline-window: \"{}\" has no ':'; expected FROM:TO such as 2ms:5ms", text);
  }
  bound(text.substr(0, colon), window.from_ns);
  bound(text.substr(colon + 1), window.to_ns);
  if (window.from_ns >= window.to_ns) {
    fail("--timeline-window: \"{}\" is empty; expected FROM before TO", text);
  }
  return window;
}

// "0-7,12,100-103" -> those NPUs, ascending and without repeats.
std::vector<NpuId> parse_npu_list(const std::string& text, NpuId npus) {
  std::vector<bool> chosen(npus, false);
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    unsigned long first = 0, last = 0;
    char extra = 0;
    const int fields = std::sscanf(item.c_str(), "%lu-%lu%c", &first, &last, &extra);
    const bool single = fields == 1 && item.find('-') == std::string::npos;
    if (single) last = first;
    if (!(single || fields == 2) || item.empty() || item.find_first_not_of("0123456789-") != std::string::npos ||
        first > last || last >= npus) {
      fail("--timeline-npus: \"{}\" is not an NPU or a range of NPUs like 0-7 within 0-{}", item, npus - 1);
    }
    for (unsigned long n = first; n <= last; ++n) chosen[n] = true;
    at = comma + 1;
  }
  std::vector<NpuId> list;
  for (NpuId n = 0; n < npus; ++n) {
    if (chosen[n]) list.push_back(n);
  }
  return list;
}

// Reads every input file the options name, each checked as it is read.
sim::Inputs load_inputs(const RunOptions& o, ProgressLine& progress) {
  config::SystemFlags flags;
  flags.num_queues_per_dim = o.num_queues_per_dim;
  flags.injection_scale = o.injection_scale;
  network::find_backend(o.backend);  // an unknown name fails before any file is read

  sim::Inputs inputs;
  inputs.backend = o.backend;
  std::vector<std::string> network_warnings;
  inputs.network = config::load_network(o.network, &network_warnings);
  const config::SystemConfig system = config::load_system(o.system, flags);
  // Warnings are printed even under --quiet: an ignored key changes what was simulated.
  for (const std::string& w : network_warnings) std::cerr << "warning: " << w << "\n";
  for (const std::string& w : system.warnings) std::cerr << "warning: " << w << "\n";
  apply_system(inputs, system, o.system, o.rendezvous, o.collectives);
  inputs.allow_symmetry = !o.no_folding;
  const network::Topology topology(inputs.network);
  // Before reading one trace: can the machine hold this many NPUs at all?
  require_memory(sim::network_state_bytes(topology.npu_count()),
                 fmt::format("{}: a network of {} NPUs", o.network, topology.npu_count()));
  if (!o.memory.empty()) inputs.memory = config::load_memory(o.memory);
  // "empty" is the reference's word for no groups; any other value is a file, read (or refused).
  if (!o.comm_groups.empty() && o.comm_groups != "empty") {
    inputs.groups = config::load_comm_groups(o.comm_groups, topology.npu_count());
    inputs.groups_source = o.comm_groups;
    // The kinds of the groups (TP, DP, ...) for the summary and report: --group-names, or the
    // file generate llm writes beside the group file.
    std::string names = o.group_names;
    if (names.empty()) {
      const std::string beside = config::group_names_path_for(o.comm_groups);
      std::error_code ec;
      if (!beside.empty() && std::filesystem::exists(beside, ec)) names = beside;
    }
    if (!names.empty()) inputs.group_kind_names = config::load_group_names(names);
  }
  inputs.graphs = chakra::load_workload(o.workload, topology.npu_count(), "workload",
                                        [&progress](std::size_t loaded, std::size_t ranks, std::uint64_t bytes) {
                                          progress.show(fmt::format("loading traces: {} of {} ranks ({})", loaded,
                                                                    ranks, format_bytes(bytes)));
                                        });
  progress.clear();
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    const std::string& prefix = inputs.system.custom_prefixes[k];
    if (!prefix.empty())
      inputs.custom_algorithms[k] = chakra::load_workload(prefix, topology.npu_count(), "custom algorithm");
  }
  for (const std::string& w : custom_size_warnings(inputs)) std::cerr << "warning: " << w << "\n";
  return inputs;
}

// The NPUs the timeline and the CSV show: those of --timeline-npus, else the first few.
std::vector<NpuId> shown_npus(const RunOptions& o, NpuId npus) {
  if (!o.timeline_npus.empty()) return parse_npu_list(o.timeline_npus, npus);
  std::vector<NpuId> shown;
  for (NpuId n = 0; n < npus && (o.timeline.empty() || n < kDefaultTimelineNpus); ++n) shown.push_back(n);
  if (!o.timeline.empty() && npus > kDefaultTimelineNpus && !o.quiet) {
    std::cerr << fmt::format("note: the timeline shows NPUs 0-{} of {}; choose others with --timeline-npus\n",
                             kDefaultTimelineNpus - 1, npus);
  }
  return shown;
}

// Every output is checked (and its folders created) before the inputs are read.
void prepare_outputs(const RunOptions& o) {
  if (!o.json.empty()) prepare_output_file(o.json, "--json");
  if (!o.stats_csv.empty()) prepare_output_file(o.stats_csv, "--stats");
  if (!o.flows_csv.empty()) prepare_output_file(o.flows_csv, "--flows");
  if (!o.timeline.empty()) prepare_output_file(o.timeline, "--timeline");
  if (!o.report_dir.empty()) prepare_output_dir(o.report_dir, "--report");
}

int run(const RunOptions& o) {
  if (!o.flows_csv.empty() && !network::find_backend(o.backend).has_flows) {
    std::string which;
    for (const network::BackendInfo& b : network::backends()) {
      if (b.has_flows) which += std::string(which.empty() ? "" : " or ") + "--backend " + b.name;
    }
    fail("--flows {}: the {} backend does not carry messages as flows; expected a backend that does ({})", o.flows_csv,
         o.backend, which);
  }
  prepare_outputs(o);
  const report::TimeWindow window = parse_time_window(o.timeline_window);
  ProgressLine progress(ProgressLine::mode_for(o.quiet, o.progress, isatty(STDERR_FILENO) != 0));
  const sim::Inputs inputs = load_inputs(o, progress);
  OutputOptions out;
  out.json_path = o.json;
  out.quiet = o.quiet;
  const NpuId npus = network::Topology(inputs.network).npu_count();
  const std::vector<NpuId> shown = shown_npus(o, npus);
  if (!o.timeline.empty() && o.timeline_window.empty()) {
    // Said before the run, which may take minutes, so that it can be stopped and narrowed.
    const std::string warning =
        report::timeline_size_warning(report::estimate_timeline_bytes(inputs, shown), shown.size());
    if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
  }
  const bool report = !o.report_dir.empty();
  // NPU 0 is always recorded (NodeLog keeps it whatever the selection): its collectives go into
  // the JSON and are checked against what their links can carry.
  std::vector<bool> selected;  // the statistics and the report want every NPU
  if (!o.astra_stats && !report) {
    selected.assign(npus, false);
    if (!o.timeline.empty() || !o.stats_csv.empty()) {
      for (const NpuId n : shown) selected[n] = true;
    }
  }
  report::NodeLog log(npus, std::move(selected));
  report::LinkLog links;
  report::FlowLog flows;
  const bool has_flows = network::find_backend(inputs.backend).has_flows;
  sim::Hooks hooks;
  if (progress.on()) hooks.progress = [&progress](const sim::Progress& p) { progress.show(progress_text(p)); };
  const bool record_flows = has_flows && (report || !o.flows_csv.empty());
  const sim::Result result =
      report::simulate_recorded(inputs, log, report ? &links : nullptr, hooks, record_flows ? &flows : nullptr);
  progress.clear();
  if (!o.timeline.empty()) report::write_timeline(o.timeline, inputs, result, log, shown, window);
  if (!o.stats_csv.empty()) report::write_node_csv(o.stats_csv, inputs, log, shown);
  if (!o.flows_csv.empty()) report::write_flow_csv(o.flows_csv, flows);
  if (report) {
    const std::string page =
        report::write_html_report(o.report_dir, inputs, result, log, &links, {o.workload, o.system, o.network},
                                  record_flows ? &flows : nullptr);
    if (!o.quiet) std::cerr << "report: " << page << "\n";
  }
  if (o.astra_stats) {
    out.inputs = &inputs;
    out.log = &log;
  }
  out.collectives = report::collective_rows(inputs, log, 0);
  out.backend = inputs.backend;
  return print_run(result, out);
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate per-NPU Chakra traces on a described system");
  cmd->footer("Example:\n"
              "  chakrasim run --workload traces/allreduce --system system.json --network network.yml\n"
              "ASTRA-sim's flags (--workload-configuration=..., --system-configuration=..., "
              "--network-configuration=..., --remote-memory-configuration=..., "
              "--comm-group-configuration=...) are accepted too, and `chakrasim --workload-configuration=...` "
              "without `run` works as in the reference.\n"
              "System JSON keys: chakrasim run --help-system\n"
              "Network YAML keys: chakrasim run --help-network");
  cmd->add_option("--workload,--workload-configuration", o->workload,
                  "Trace prefix: reads PREFIX.<rank>.et for every NPU")
      ->required();
  cmd->add_option("--system,--system-configuration", o->system, "System-layer JSON")->required();
  cmd->add_option("--network,--network-configuration", o->network, "Analytical network YAML")->required();
  cmd->add_option("--memory,--remote-memory-configuration", o->memory, "Remote-memory JSON (optional)");
  cmd->add_option("--comm-groups,--comm-group-configuration", o->comm_groups,
                  "Communicator-group JSON (optional; the word \"empty\", as in the reference, means none)");
  std::string backends;
  for (const network::BackendInfo& b : network::backends()) {
    backends += std::string("\n  ") + b.name + ": " + b.models + "; ignores " + b.ignores;
  }
  cmd->add_option("--backend", o->backend, "Network backend:" + backends)->capture_default_str();
  cmd->add_option("--json", o->json, "Write the per-NPU results to this JSON file");
  cmd->add_option("--num-queues-per-dim", o->num_queues_per_dim, "Scheduling queues per dimension")
      ->capture_default_str();
  cmd->add_option("--injection-scale", o->injection_scale, "Multiplies endpoint-delay when the system JSON sets it")
      ->capture_default_str();
  cmd->add_option("--comm-scale", o->comm_scale, "Accepted for compatibility; no effect (as in the reference)");
  cmd->add_option("--compute-scale", o->compute_scale, "Accepted for compatibility; no effect (as in the reference)");
  cmd->add_flag("--no-folding", o->no_folding,
                "Simulate every NPU, even when the ranks fold into classes that run the same timelines (the figures "
                "are the same; for checking, and for timing a full run)");
  cmd->add_option("--rendezvous-protocol", o->rendezvous,
                  "Every send waits for an 8192-byte go-ahead from its receiver");
  cmd->add_option("--collectives", o->collectives,
                  "How collectives are timed: astra-sim (chunked phases over the network, the default), nccl "
                  "(NCCL's choice of algorithm and protocol timed by the NCCL model, no traffic) or nccl-traffic "
                  "(NCCL's ring or NVLS run as its messages on the network); the system JSON's nccl-* keys describe "
                  "the machine: docs/nccl.md")
      ->check(CLI::IsMember({"astra-sim", "nccl", "nccl-traffic"}));
  cmd->add_option("--logging-configuration", o->logging_configuration, "Accepted for compatibility; no effect");
  cmd->add_option("--logging-folder", o->logging_folder, "Accepted for compatibility; no effect");
  cmd->add_flag("--quiet,-q", o->quiet, "Print only the per-NPU lines and warnings (no summary, notes or progress)");
  cmd->add_flag("--progress", o->progress,
                "Show progress (traces loaded, simulated time) even when stderr is not a terminal: a line every 5 s");
  cmd->add_flag("--astra-sim-stats", o->astra_stats,
                "After each NPU's finished line, print ASTRA-sim's statistics block (wall, GPU, CPU, "
                "Comm, Remote mem time, overlap, roofline figures)");
  cmd->add_option("--timeline", o->timeline,
                  "Write a Chrome/Perfetto trace of the run (open it in ui.perfetto.dev or chrome://tracing)");
  cmd->add_option("--group-names", o->group_names,
                  "JSON naming each communicator group's kind, {\"1\": \"TP\", ...}, for the time split and the "
                  "report (default: PREFIX.group-names.json beside a PREFIX.groups.json --comm-groups)");
  cmd->add_option("--timeline-window", o->timeline_window,
                  "Only what overlaps FROM:TO of simulated time in the timeline, e.g. 2ms:5ms (either side may be "
                  "empty)");
  cmd->add_option("--timeline-npus", o->timeline_npus,
                  "NPUs in the timeline and the CSV, e.g. 0-7,64 (default: all; the first 256 in a timeline)");
  cmd->add_option("--report", o->report_dir,
                  "Write DIR/index.html: a self-contained page with per-NPU breakdowns, collectives (algbw, "
                  "busbw), link utilisation and the critical path");
  cmd->add_option("--flows", o->flows_csv,
                  "Write one CSV row per message carried as a flow (src, dst, bytes, start, arrival, completion, "
                  "hops, Gb/s); flow-level backends only");
  cmd->add_option("--stats", o->stats_csv,
                  "Write one CSV row per executed node (npu, id, name, type, start, end, bytes, group)");
  cmd->add_flag_callback(
      "--help-system",
      [] {
        std::cout << "Keys of the system JSON (--system):\n" << config::describe_system_keys();
        throw CLI::Success();
      },
      "List every key of the system JSON with its type, default and meaning");
  cmd->add_flag_callback(
      "--help-network",
      [] {
        std::cout << "Keys of the network YAML (--network):\n" << config::describe_network_keys();
        throw CLI::Success();
      },
      "List every key of the network YAML with its type, unit, default, meaning and the backends that read it");
  return [o, cmd]() -> int { return cmd->parsed() ? run(*o) : -1; };
}

}  // namespace chakrasim::cli
