#include "cli/sweep_runner.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "chakra/workload_files.h"
#include "cli/generators.h"
#include "cli/run_inputs.h"
#include "config/network_config.h"
#include "config/other_configs.h"
#include "config/system_config.h"
#include "core/error.h"
#include "core/read_file.h"
#include "network/network.h"
#include "network/topology.h"
#include "report/analysis.h"
#include "report/node_log.h"
#include "sim/simulation.h"

namespace chakrasim::cli {

namespace {

using Graphs = std::vector<std::shared_ptr<const chakra::Graph>>;

// A value built once by the first point that needs it, waited for by the others; a failure is
// every waiting point's error.
template <typename T>
class OnceMap {
 public:
  template <typename Build>
  std::shared_ptr<const T> get(const std::string& key, Build build) {
    std::promise<std::shared_ptr<const T>> promise;
    std::shared_future<std::shared_ptr<const T>> future;
    bool mine = false;
    {
      std::lock_guard lock(mutex_);
      const auto it = map_.find(key);
      if (it != map_.end()) {
        future = it->second;
      } else {
        future = promise.get_future().share();
        map_.emplace(key, future);
        mine = true;
      }
    }
    if (mine) {
      try {
        promise.set_value(std::make_shared<const T>(build()));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    }
    return future.get();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_future<std::shared_ptr<const T>>> map_;
};

// What one point runs with, before it is parsed.
struct PointSetup {
  sweep::Value flags = sweep::Value::object();  // run flags (base, then the point's)
  std::vector<std::pair<std::string, sweep::Value>> system_keys, network_keys, generator_flags;
};

// "--dp 8 --tp 4" style flags as a list, a base given as one string or a list.
std::vector<std::string> flag_list(const sweep::Value& v) {
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const auto& item : v) out.push_back(sweep::cell_text(item));
    return out;
  }
  std::istringstream words(sweep::cell_text(v));
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

// Sets or replaces --FLAG in a generator's flags; true: the bare flag, false: removed.
void set_flag(std::vector<std::string>& flags, const std::string& name, const sweep::Value& value) {
  const std::string flag = "--" + name;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] != flag) continue;
    const bool has_value = i + 1 < flags.size() && flags[i + 1].rfind("--", 0) != 0;
    flags.erase(flags.begin() + static_cast<std::ptrdiff_t>(i),
                flags.begin() + static_cast<std::ptrdiff_t>(i + (has_value ? 2 : 1)));
    break;
  }
  if (value.is_boolean()) {
    if (value.get<bool>()) flags.push_back(flag);
    return;
  }
  flags.push_back(flag);
  flags.push_back(sweep::cell_text(value));
}

// "bandwidth[1]" -> ("bandwidth", 1); "topology" -> ("topology", -1).
std::pair<std::string, long> indexed_key(const std::string& key) {
  const std::size_t open = key.find('[');
  if (open == std::string::npos || key.back() != ']') return {key, -1};
  const std::string digits = key.substr(open + 1, key.size() - open - 2);
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) {
    fail("network.{}: expected KEY or KEY[i] with i a whole number", key);
  }
  return {key.substr(0, open), std::stol(digits)};
}

YAML::Node yaml_of(const sweep::Value& v) {
  if (v.is_array()) {
    YAML::Node seq(YAML::NodeType::Sequence);
    for (const auto& item : v) seq.push_back(yaml_of(item));
    return seq;
  }
  if (v.is_object()) {
    YAML::Node map(YAML::NodeType::Map);
    for (auto it = v.begin(); it != v.end(); ++it) map[it.key()] = yaml_of(it.value());
    return map;
  }
  return YAML::Node(sweep::cell_text(v));
}

// The network YAML with the point's entries set.
std::string network_text(const std::string& base, const std::string& source,
                         const std::vector<std::pair<std::string, sweep::Value>>& keys) {
  if (keys.empty()) return base;
  YAML::Node root = YAML::Load(base);
  for (const auto& [key, value] : keys) {
    const auto [name, index] = indexed_key(key);
    if (index < 0) {
      root[name] = yaml_of(value);
      continue;
    }
    YAML::Node list = root[name];
    if (!list.IsSequence() || static_cast<std::size_t>(index) >= list.size()) {
      fail("network.{}: {} has no entry {}; expected an index below {}", key, source, index,
           list.IsSequence() ? list.size() : 0);
    }
    list[static_cast<std::size_t>(index)] = yaml_of(value);
  }
  YAML::Emitter out;
  out << root;
  return out.c_str();
}

// Warnings about a key the point set are errors: a misspelt key would silently run the base.
void refuse_ignored(const std::vector<std::string>& warnings,
                    const std::vector<std::pair<std::string, sweep::Value>>& keys, const char* prefix) {
  for (const std::string& w : warnings) {
    for (const auto& [key, value] : keys) {
      const std::string name = indexed_key(key).first;
      if (w.find("\"" + name + "\"") != std::string::npos) fail("{}{}: {}", prefix, key, w);
    }
  }
}

double bytes_weighted_busbw(const std::vector<report::CollectiveRow>& rows, const std::string& kind) {
  double bytes = 0, weighted = 0;
  for (const report::CollectiveRow& r : rows) {
    if (r.kind != kind || r.duration == 0) continue;
    bytes += static_cast<double>(r.comm_size);
    weighted += static_cast<double>(r.comm_size) * r.busbw_gb_per_s;
  }
  return bytes > 0 ? weighted / bytes : -1;
}

std::string number(double v) { return v < 0 ? "" : fmt::format("{:.6g}", v); }

}  // namespace

struct SweepRunner::Caches {
  OnceMap<std::string> files;                        // by path
  OnceMap<tools::llm::InMemoryIteration> generated;  // by flags
  OnceMap<Graphs> workloads;                         // by prefix and NPU count
  OnceMap<system::CommGroups> groups;                // by path and NPU count
  std::mutex ns3;                                    // ns-3 runs one at a time
};

SweepRunner::SweepRunner(sweep::SweepSpec spec)
    : spec_(std::move(spec)),
      header_(sweep::table_header(sweep::columns(spec_))),
      points_(sweep::point_count(spec_)),
      caches_(std::make_unique<Caches>()) {}

SweepRunner::~SweepRunner() = default;

std::vector<std::string> SweepRunner::axis_cells(std::size_t point) const {
  std::vector<std::string> cells;
  for (const sweep::Value& v : sweep::point_at(spec_, point).values)
    cells.push_back(v.is_null() ? "" : sweep::cell_text(v));
  return cells;
}

sweep::Row SweepRunner::run(std::size_t index) const {
  const auto start = std::chrono::steady_clock::now();
  const sweep::Point point = sweep::point_at(spec_, index);
  const std::vector<std::string> axes = sweep::columns(spec_);
  std::map<std::string, std::string> figure;
  auto read = [&](const std::string& path) {
    return *caches_->files.get(path, [&] { return read_file(path, "sweep input", "a file the sweep's base names"); });
  };
  try {
    if (!point.error.empty()) fail("{}", point.error);
    PointSetup setup;
    for (auto it = spec_.base.begin(); it != spec_.base.end(); ++it) setup.flags[it.key()] = it.value();
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::string& key = axes[i];
      const sweep::Value& v = point.values[i];
      if (key.starts_with("system.")) setup.system_keys.emplace_back(key.substr(7), v);
      else if (key.starts_with("network.")) setup.network_keys.emplace_back(key.substr(8), v);
      else if (key.starts_with("generate.")) setup.generator_flags.emplace_back(key.substr(9), v);
      else setup.flags[key] = v;
    }
    const sweep::Value& f = setup.flags;
    auto flag = [&](const char* key) { return f.contains(key) ? sweep::cell_text(f[key]) : std::string(); };
    // The workload: generated (shared by every point with the same generator flags) or files.
    std::shared_ptr<const tools::llm::InMemoryIteration> generated;
    if (f.contains("generate")) {
      std::vector<std::string> flags = flag_list(f["generate"]);
      if (flags.empty() || flags.front() != "llm") {
        fail("base.generate: \"{}\": expected the generator llm and its flags, e.g. \"llm --model gpt3-13b --dp 8\"",
             sweep::cell_text(f["generate"]));
      }
      flags.erase(flags.begin());
      for (const auto& [name, value] : setup.generator_flags) set_flag(flags, name, value);
      std::string key;
      for (const std::string& w : flags) key += w + " ";
      generated = caches_->generated.get(key, [&] { return generate_llm_from_flags(flags); });
    } else if (!setup.generator_flags.empty()) {
      fail("generate.{}: the base has no generate: expected base.generate to name the generator",
           setup.generator_flags[0].first);
    }
    if (!generated && flag("workload").empty()) fail("base: expected workload (a trace prefix) or generate");
    config::SystemFlags system_flags;
    if (f.contains("num-queues-per-dim")) {
      const sweep::Value& q = f["num-queues-per-dim"];
      if (!q.is_number_unsigned() || q.get<std::uint64_t>() == 0 || q.get<std::uint64_t>() > 1024) {
        fail("num-queues-per-dim: {} is invalid; expected a whole number from 1 to 1024", sweep::cell_text(q));
      }
      system_flags.num_queues_per_dim = q.get<std::uint32_t>();
    }
    if (f.contains("injection-scale")) {
      const sweep::Value& scale = f["injection-scale"];
      if (!scale.is_number() || !(scale.get<double>() > 0) || !std::isfinite(scale.get<double>())) {
        fail("injection-scale: {} is invalid; expected a positive number", sweep::cell_text(scale));
      }
      system_flags.injection_scale = scale.get<double>();
    }
    sim::Inputs inputs;
    inputs.backend = flag("backend").empty() ? "congestion-unaware" : flag("backend");
    network::find_backend(inputs.backend);
    // The network and the system: the base's files (or the generator's), with the point's keys.
    const std::string network_source = flag("network").empty() ? "the generated network" : flag("network");
    const std::string network_base =
        flag("network").empty() ? (generated ? generated->network_yaml : "") : read(flag("network"));
    if (network_base.empty()) fail("base: expected network (a network YAML) or generate");
    std::vector<std::string> warnings;
    inputs.network = config::parse_network(network_text(network_base, network_source, setup.network_keys),
                                           network_source, &warnings);
    refuse_ignored(warnings, setup.network_keys, "network.");
    const std::string system_source = flag("system").empty() ? "the generated system" : flag("system");
    std::string system_text = flag("system").empty() ? (generated ? generated->system_json : "") : read(flag("system"));
    if (system_text.empty()) fail("base: expected system (a system JSON) or generate");
    if (!setup.system_keys.empty()) {
      nlohmann::json j = nlohmann::json::parse(system_text, nullptr, false);
      if (!j.is_object()) fail("{}: expected a JSON object", system_source);
      for (const auto& [key, value] : setup.system_keys) j[key] = value;
      system_text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    const config::SystemConfig system = config::parse_system(system_text, system_source, system_flags);
    refuse_ignored(system.warnings, setup.system_keys, "system.");
    apply_system(inputs, system, system_source,
                 f.contains("rendezvous-protocol") && f["rendezvous-protocol"].is_boolean() &&
                     f["rendezvous-protocol"].get<bool>(),
                 flag("collectives"));
    if (!flag("memory").empty()) inputs.memory = config::load_memory(flag("memory"));
    const NpuId npus = network::Topology(inputs.network).npu_count();
    // Traces and groups, shared.
    if (generated) {
      if (generated->graphs.size() != npus) {
        fail("the generated job has {} GPUs and the network {} NPUs; expected as many", generated->graphs.size(), npus);
      }
      inputs.graphs = generated->graphs;
      inputs.groups = config::parse_comm_groups(generated->groups_json, "the generated groups", npus);
      inputs.group_kind_names = config::parse_group_names(generated->group_names_json, "the generated group kinds");
    } else {
      const std::string prefix = flag("workload");
      inputs.graphs = *caches_->workloads.get(fmt::format("{}\n{}", prefix, npus),
                                              [&] { return chakra::load_workload(prefix, npus, "workload"); });
      const std::string groups = flag("comm-groups");
      if (!groups.empty() && groups != "empty") {
        inputs.groups = *caches_->groups.get(fmt::format("{}\n{}", groups, npus),
                                             [&] { return config::load_comm_groups(groups, npus); });
        inputs.groups_source = groups;
      }
    }
    for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
      const std::string& prefix = inputs.system.custom_prefixes[k];
      if (!prefix.empty()) {
        inputs.custom_algorithms[k] = *caches_->workloads.get(fmt::format("{}\n{}", prefix, npus), [&] {
          return chakra::load_workload(prefix, npus, "custom algorithm");
        });
      }
    }
    // NPU 0's collectives for busbw; with `links: true` in the base, every link's busy time.
    std::vector<bool> selected(npus, false);
    report::NodeLog log(npus, std::move(selected));
    const bool links =
        spec_.base.contains("links") && spec_.base["links"].is_boolean() && spec_.base["links"].get<bool>();
    report::LinkLog link_log;
    sim::Result result;
    if (inputs.backend == "ns3") {
      std::lock_guard lock(caches_->ns3);  // ns-3's simulator is one per process
      result = report::simulate_recorded(inputs, log, links ? &link_log : nullptr);
    } else {
      result = report::simulate_recorded(inputs, log, links ? &link_log : nullptr);
    }
    const Tick finish = result.max_finish_ns();
    std::size_t finished = 0, slowest = 0;
    double flops = 0;
    for (std::size_t r = 0; r < result.npus.size(); ++r) {
      finished += result.npus[r].finished ? 1 : 0;
      flops += result.npus[r].split.model_flops;
      if (result.npus[r].finish_ns > result.npus[slowest].finish_ns) slowest = r;
    }
    figure["status"] = result.all_finished() ? "ok" : "deadlock";
    if (!result.all_finished()) figure["error"] = fmt::format("{} of {} NPUs did not finish", npus - finished, npus);
    figure["iteration_ns"] = std::to_string(finish);
    figure["npus"] = std::to_string(npus);
    figure["finished_npus"] = std::to_string(finished);
    const sim::TimeSplit& split = result.npus[slowest].split;
    figure["compute_ns"] = std::to_string(split.compute_ns);
    figure["exposed_collective_ns"] = std::to_string(split.collective_ns);
    figure["p2p_wait_ns"] = std::to_string(split.p2p_wait_ns);
    figure["memory_ns"] = std::to_string(split.memory_ns);
    figure["idle_ns"] = std::to_string(split.idle_ns);
    if (result.peak_flops_per_s > 0 && finish > 0 && flops > 0) {
      const double per_gpu = flops / static_cast<double>(npus) / (static_cast<double>(finish) * 1e-9);
      figure["mfu"] = number(per_gpu / result.peak_flops_per_s);
    }
    const std::vector<report::CollectiveRow> rows = report::collective_rows(inputs, log, 0);
    figure["busbw_all_reduce_gbps"] = number(bytes_weighted_busbw(rows, "all-reduce"));
    figure["busbw_all_gather_gbps"] = number(bytes_weighted_busbw(rows, "all-gather"));
    figure["busbw_reduce_scatter_gbps"] = number(bytes_weighted_busbw(rows, "reduce-scatter"));
    figure["busbw_all_to_all_gbps"] = number(bytes_weighted_busbw(rows, "all-to-all"));
    if (links && finish > 0) {
      double peak = 0;
      for (std::uint32_t l = 0; l < link_log.links(); ++l) {
        peak = std::max(peak, static_cast<double>(link_log.busy_total(l)) / static_cast<double>(finish));
      }
      figure["link_peak_util"] = number(peak);
    }
  } catch (const Error& e) {
    figure["status"] = "error";
    figure["error"] = e.what();
  } catch (const std::exception& e) {
    figure["status"] = "error";
    figure["error"] = e.what();
  }
  figure["wall_s"] =
      fmt::format("{:.4f}", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  sweep::Row row;
  row.point = index;
  row.cells.push_back(std::to_string(index));
  for (const sweep::Value& v : point.values) row.cells.push_back(v.is_null() ? "" : sweep::cell_text(v));
  for (const std::string& c : sweep::figure_columns()) row.cells.push_back(figure.count(c) ? figure[c] : "");
  return row;
}

void run_points_on_threads(const SweepRunner& runner, const std::vector<std::size_t>& todo, std::size_t threads,
                           const std::function<void(sweep::Row)>& on_row) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < todo.size(); i = next++) {
      sweep::Row row = runner.run(todo[i]);
      std::lock_guard lock(mutex);
      on_row(std::move(row));
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(threads, todo.size()); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace chakrasim::cli
