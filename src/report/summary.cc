#include "report/summary.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/resources.h"
#include "network/network.h"

namespace chakrasim::report {

std::string format_duration(Tick ns) {
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.3f} µs", static_cast<double>(ns) / 1e3);
  if (ns < 1000000000) return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

std::string finish_line(std::size_t npu, const sim::NpuResult& result) {
  return fmt::format("sys[{}] finished, {} cycles, exposed communication {} cycles.\n", npu, result.finish_ns,
                     result.exposed_comm_ns);
}

void print_finish_lines(std::ostream& out, const sim::Result& result) {
  std::string text;
  for (std::size_t r = 0; r < result.npus.size(); ++r) {
    if (result.npus[r].finished) text += finish_line(r, result.npus[r]);
  }
  out << text;
}

namespace {

std::string percent_of(Tick part, Tick whole) {
  return whole == 0 ? "0%" : fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// "  Time split of NPU 3: compute 1.200 ms (40.0%), exposed collectives 1.000 ms (33.3%), p2p waits
// and pipeline bubbles 800 µs (26.7%), exposed memory 0 ns, idle 0 ns." and the collectives' part
// per group kind on a line of its own.
std::string time_split_line(const sim::Result& result, NpuId npu) {
  const sim::TimeSplit& s = result.npus[npu].split;
  const Tick finish = result.npus[npu].finish_ns;
  std::string kinds;
  for (std::size_t k = 0; k < s.by_group_kind_ns.size() && k < result.group_kinds.size(); ++k) {
    if (s.by_group_kind_ns[k] == 0) continue;
    kinds += fmt::format("{}{} {}", kinds.empty() ? ": " : ", ", result.group_kinds[k],
                         format_duration(s.by_group_kind_ns[k]));
  }
  std::string text =
      fmt::format("  Time split of NPU {}: compute {} ({}), exposed collectives {} ({}), p2p waits and pipeline "
                  "bubbles {} ({}), "
                  "exposed memory {}, idle {}.\n",
                  npu, format_duration(s.compute_ns), percent_of(s.compute_ns, finish),
                  format_duration(s.collective_ns), percent_of(s.collective_ns, finish), format_duration(s.p2p_wait_ns),
                  percent_of(s.p2p_wait_ns, finish), format_duration(s.memory_ns), format_duration(s.idle_ns));
  if (!kinds.empty()) text += fmt::format("    exposed collectives by group kind{}.\n", kinds);
  return text;
}

// Model FLOP/s per GPU (the trace's num_ops over the run time, averaged over NPUs) and MFU
// against the system file's peak-perf; nothing when the trace carries no FLOPs.
std::string flops_line(const sim::Result& result, Tick run_ns) {
  double flops = 0;
  for (const sim::NpuResult& n : result.npus) flops += n.split.model_flops;
  if (flops <= 0 || run_ns == 0 || result.npus.empty()) return "";
  const double per_gpu = flops / static_cast<double>(result.npus.size()) / (static_cast<double>(run_ns) * 1e-9);
  std::string text = fmt::format("  Model FLOP/s per GPU: {:.1f} TFLOP/s (num_ops of the GPU compute nodes over the "
                                 "run time)",
                                 per_gpu / 1e12);
  if (result.peak_flops_per_s > 0) {
    text += fmt::format("; MFU {:.1f}% of a {:.1f} TFLOP/s peak ({})", 100 * per_gpu / result.peak_flops_per_s,
                        result.peak_flops_per_s / 1e12,
                        result.peak_is_mfu_peak   ? "the system's mfu-peak-perf"
                        : result.peak_is_systolic ? "the systolic arrays'"
                                                  : "the system's peak-perf");
  }
  return text + ".\n";
}

}  // namespace

void print_summary(std::ostream& out, const sim::Result& result) {
  std::size_t finished = 0;
  Tick max_finish = 0, min_finish = kNeverTick;
  NpuId slowest = 0;
  Tick compute_at_slowest = 0, exposed_at_slowest = 0;
  for (std::size_t r = 0; r < result.npus.size(); ++r) {
    const sim::NpuResult& n = result.npus[r];
    if (!n.finished) continue;
    ++finished;
    min_finish = std::min(min_finish, n.finish_ns);
    if (n.finish_ns > max_finish || finished == 1) {
      max_finish = n.finish_ns;
      slowest = static_cast<NpuId>(r);
      compute_at_slowest = n.gpu_compute_ns;
      exposed_at_slowest = n.exposed_comm_ns;
    }
  }
  out << fmt::format("\nSummary: {} of {} NPUs finished", finished, result.npus.size());
  if (finished == 0) {
    out << ".\n";
    return;
  }
  out << fmt::format("; the run takes {} (NPU {} is the last to finish", format_duration(max_finish), slowest);
  if (min_finish != max_finish) out << fmt::format("; the first finishes at {}", format_duration(min_finish));
  out << ").\n";
  out << fmt::format("  NPU {}: GPU compute {}, exposed communication {}.\n", slowest,
                     format_duration(compute_at_slowest), format_duration(exposed_at_slowest));
  out << time_split_line(result, slowest);
  out << flops_line(result, max_finish);
  if (!result.compute_fallback.empty()) {
    out << fmt::format("  Compute: {} of {} GPU compute nodes had no shape (gemm, conv) and were timed by the {}.\n",
                       result.fallback_nodes, result.gpu_compute_nodes, result.compute_fallback);
  }
  if (result.symmetric) {
    out << fmt::format("  Every NPU runs the same timeline, so NPU 0 alone was simulated: {} events, {} network "
                       "messages.\n",
                       result.events, result.messages);
  } else if (result.classes_simulated > 0) {
    out << fmt::format("  The NPUs fall into {} classes that run the same timelines, so one NPU of each was simulated: "
                       "{} events, {} network messages.\n",
                       result.classes_simulated, result.events, result.messages);
  } else {
    out << fmt::format("  {} events, {} network messages.\n", result.events, result.messages);
  }
}

void print_deadlock(std::ostream& out, const sim::Result& result) {
  if (result.all_finished()) return;
  std::size_t stuck_npus = 0;
  for (const sim::NpuResult& n : result.npus) stuck_npus += n.finished ? 0 : 1;
  out << fmt::format("error: deadlock: no event is left but {} NPU(s) have unfinished nodes.\n", stuck_npus);
  constexpr std::size_t kShownPerNpu = 8;
  NpuId current = ~0u;
  std::size_t shown = 0, hidden = 0;
  auto flush_hidden = [&] {
    if (hidden > 0) out << fmt::format("    ... and {} more\n", hidden);
    hidden = 0;
  };
  for (const sim::StuckNode& s : result.stuck) {
    if (s.npu != current) {
      flush_hidden();
      current = s.npu;
      shown = 0;
      const sim::NpuResult& n = result.npus[s.npu];
      out << fmt::format("  NPU {}: {} of {} nodes finished\n", s.npu, n.nodes_done, n.nodes);
    }
    if (shown == kShownPerNpu) {
      ++hidden;
      continue;
    }
    ++shown;
    out << fmt::format("    node {} (\"{}\", {}): ", s.id, s.name, s.type);
    if (s.issued) {
      out << s.detail << "\n";
    } else if (!s.waiting_for.empty()) {
      std::string parents;
      for (std::size_t k = 0; k < s.waiting_for.size() && k < 8; ++k) {
        parents += (k ? ", " : "") + std::to_string(s.waiting_for[k]);
      }
      out << fmt::format("waits for node(s) {}\n", parents);
    } else {
      out << "ready, waiting for its resource slot\n";
    }
  }
  flush_hidden();
}

void print_bandwidth_warnings(std::ostream& out, const std::vector<CollectiveRow>& rows, const std::string& backend,
                              std::size_t limit) {
  std::size_t count = 0;
  for (const CollectiveRow& r : rows) {
    if (!r.exceeds_links()) continue;
    if (++count > limit) continue;
    out << fmt::format("warning: {} {} (node {} on NPU 0, {} NPUs) reaches a bus bandwidth of {:.1f} GB/s, above "
                       "the {:.1f} GB/s its links can carry (10^9 B/s)\n",
                       r.kind, format_bytes(r.bytes), r.node_id, r.npus, r.busbw_gb_per_s, r.links_gb_per_s);
  }
  if (count == 0) return;
  if (count > limit) out << fmt::format("warning: ... and {} more collectives like these\n", count - limit);
  out << "warning: " << bandwidth_explanation(backend) << "\n";
}

std::string bandwidth_explanation(const std::string& backend) {
  if (network::find_backend(backend).has_links) {
    // A step ends when its data has arrived, and a late NPU's peers may have sent theirs long
    // before it began: its span then holds little of the transfers, which did take the links.
    return fmt::format("the {} backend shares the links, so NPU 0 began these collectives after its peers had sent "
                       "it their data: its span is shorter than the transfers, which the links carried at their "
                       "rates (the bus bandwidth of one NPU's span is not the collective's)",
                       backend);
  }
  return fmt::format("the {} backend serves every message in flight at full link rate, so these times are lower "
                     "bounds; --backend congestion-aware shares the links (docs/network.md)",
                     backend);
}

std::string results_json(const sim::Result& result, const std::vector<CollectiveRow>* collectives) {
  nlohmann::ordered_json root;
  root["npus"] = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < result.npus.size(); ++r) {
    const sim::NpuResult& n = result.npus[r];
    nlohmann::ordered_json j;
    j["npu"] = r;
    j["finished"] = n.finished;
    j["finish_ns"] = n.finish_ns;
    j["gpu_compute_ns"] = n.gpu_compute_ns;
    j["cpu_compute_ns"] = n.cpu_compute_ns;
    j["exposed_comm_ns"] = n.exposed_comm_ns;
    nlohmann::ordered_json split;
    split["compute_ns"] = n.split.compute_ns;
    split["collective_ns"] = n.split.collective_ns;
    nlohmann::ordered_json kinds = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < n.split.by_group_kind_ns.size() && k < result.group_kinds.size(); ++k) {
      if (n.split.by_group_kind_ns[k] != 0) kinds[result.group_kinds[k]] = n.split.by_group_kind_ns[k];
    }
    split["collective_by_group_kind_ns"] = std::move(kinds);
    split["p2p_wait_ns"] = n.split.p2p_wait_ns;
    split["memory_ns"] = n.split.memory_ns;
    split["idle_ns"] = n.split.idle_ns;
    split["model_flops"] = n.split.model_flops;
    j["time_split"] = std::move(split);
    j["nodes"] = n.nodes;
    j["nodes_done"] = n.nodes_done;
    root["npus"].push_back(std::move(j));
  }
  root["max_finish_ns"] = result.max_finish_ns();
  root["all_finished"] = result.all_finished();
  root["events"] = result.events;
  // NPUs simulated for all: 1 in a symmetric run, one per class in a folded one, 0 in a full run.
  root["classes_simulated"] = result.classes_simulated;
  if (!result.compute_fallback.empty()) {
    root["gpu_compute_nodes"] = result.gpu_compute_nodes;
    root["fallback_compute_nodes"] = result.fallback_nodes;
  }
  root["messages"] = result.messages;
  if (collectives != nullptr) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const CollectiveRow& c : *collectives) {
      nlohmann::ordered_json j;
      j["npu"] = 0;
      j["node_id"] = c.node_id;
      j["name"] = c.name;
      j["kind"] = c.kind;
      j["group"] = c.group;
      j["npus"] = c.npus;
      j["comm_size_bytes"] = c.comm_size;
      j["size_bytes"] = c.bytes;
      j["size_is"] = c.size_is;
      j["algorithm"] = c.algorithm;
      j["start_ns"] = c.start;
      j["time_ns"] = c.duration;
      j["exposed_ns"] = c.exposed;
      j["algbw_gb_per_s"] = c.algbw_gb_per_s;
      j["busbw_gb_per_s"] = c.busbw_gb_per_s;
      rows.push_back(std::move(j));
    }
    root["collectives"] = std::move(rows);
  }
  return root.dump(2) + "\n";
}

void write_results_json(const std::string& path, const sim::Result& result,
                        const std::vector<CollectiveRow>* collectives) {
  write_file_atomically(path, results_json(result, collectives), "the JSON results file");
}

}  // namespace chakrasim::report
