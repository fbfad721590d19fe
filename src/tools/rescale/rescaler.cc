#include "tools/rescale/rescaler.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unordered_map>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "config/other_configs.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "tools/rescale/rescale_step.h"

namespace chakrasim::tools {
namespace rescale {

std::vector<std::uint32_t> groups_named(const TraceSet& set, std::string_view kind) {
  std::vector<std::uint32_t> out;
  for (const auto& [id, members] : set.groups) {
    const auto name = set.names.find(id);
    if (name != set.names.end() && name->second == kind) out.push_back(id);
  }
  return out;
}

std::uint64_t scaled(std::uint64_t value, double factor) {
  if (value == 0) return 0;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(static_cast<double>(value) * factor)));
}

void scale_attr(chakra::Node& node, std::string_view name, double factor) {
  for (chakra::Attribute& a : *node.mutable_attr()) {
    if (a.name() != name) continue;
    const std::uint64_t value = scaled(chakra::attr_uint(node, &a).value_or(0), factor);
    if (a.has_uint64_val()) {
      a = chakra::make_uint64(a.name(), value);
    } else {
      set_int_attr(node, name, static_cast<std::int64_t>(value));
    }
  }
}

void scale_compute(chakra::Node& node, double factor) {
  node.set_duration_micros(scaled(node.duration_micros(), factor));
  scale_attr(node, "num_ops", factor);
  scale_attr(node, "tensor_size", factor);
}

void set_int_attr(chakra::Node& node, std::string_view name, std::int64_t value) {
  for (chakra::Attribute& a : *node.mutable_attr()) {
    if (a.name() != name) continue;
    if (a.has_int32_val()) {
      a = chakra::make_int32(a.name(), static_cast<std::int32_t>(value));
    } else if (a.has_uint64_val()) {
      a = chakra::make_uint64(a.name(), static_cast<std::uint64_t>(value));
    } else {
      a = chakra::make_int64(a.name(), value);
    }
    return;
  }
  *node.add_attr() = chakra::make_int64(std::string(name), value);
}

std::optional<std::uint32_t> group_of(const chakra::Node& node, const TraceSet& set, const std::string& source) {
  const std::string pg = chakra::attr_string(node, "pg_name").value_or("");
  if (pg.empty() || pg == "0") return std::nullopt;  // every rank
  if (pg.size() > 9 || pg.find_first_not_of("0123456789") != std::string::npos ||
      !set.groups.contains(std::stoul(pg))) {
    fail("{}: node {} has pg_name \"{}\"; expected the id of a group of {}", source, node.id(), pg, set.groups_source);
  }
  return static_cast<std::uint32_t>(std::stoul(pg));
}

void set_group(chakra::Node& node, std::uint32_t id) {
  for (chakra::Attribute& a : *node.mutable_attr()) {
    if (a.name() == "pg_name") a = chakra::make_string("pg_name", std::to_string(id));
  }
}

void drop_nodes(chakra::Trace& trace, const std::unordered_set<std::uint64_t>& dropped) {
  if (dropped.empty()) return;
  std::unordered_map<std::uint64_t, const chakra::Node*> by_id;
  for (const chakra::Node& n : trace.nodes) by_id.emplace(n.id(), &n);
  // The kept nodes a dropped one stands for: its kept dependencies, or, when it has none, those
  // its dropped dependencies stand for. Stopping at the nearest kept ones keeps this linear on a
  // chain of dropped collectives (each waits on the one before) and loses nothing the compute
  // chain does not already order.
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> stands_for;
  std::function<const std::vector<std::uint64_t>&(std::uint64_t)> resolve =
      [&](std::uint64_t id) -> const std::vector<std::uint64_t>& {
    const auto known = stands_for.find(id);
    if (known != stands_for.end()) return known->second;
    std::vector<std::uint64_t> kept, through;
    const auto node = by_id.find(id);
    if (node != by_id.end()) {
      for (const auto* deps : {&node->second->data_deps(), &node->second->ctrl_deps()}) {
        for (const std::uint64_t d : *deps) (dropped.contains(d) ? through : kept).push_back(d);
      }
    }
    stands_for[id] = {};  // a cycle through dropped nodes stands for nothing more
    if (kept.empty()) {
      for (const std::uint64_t d : through) {
        const std::vector<std::uint64_t>& more = resolve(d);
        kept.insert(kept.end(), more.begin(), more.end());
      }
    }
    return stands_for[id] = std::move(kept);
  };
  std::vector<chakra::Node> out;
  out.reserve(trace.nodes.size());
  for (chakra::Node& n : trace.nodes) {
    if (dropped.contains(n.id())) continue;
    auto rewire = [&](const auto& deps) {
      std::vector<std::uint64_t> ids;
      for (const std::uint64_t d : deps) {
        if (!dropped.contains(d)) {
          ids.push_back(d);
          continue;
        }
        const std::vector<std::uint64_t>& instead = resolve(d);
        ids.insert(ids.end(), instead.begin(), instead.end());
      }
      std::vector<std::uint64_t> unique;
      for (const std::uint64_t d : ids) {
        if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
      }
      return unique;
    };
    const std::vector<std::uint64_t> data = rewire(n.data_deps()), ctrl = rewire(n.ctrl_deps());
    n.clear_data_deps();
    n.clear_ctrl_deps();
    for (const std::uint64_t d : data) n.add_data_deps(d);
    for (const std::uint64_t d : ctrl) n.add_ctrl_deps(d);
    out.push_back(std::move(n));
  }
  trace.nodes = std::move(out);
}

namespace {

struct Bucket {
  std::size_t index;  // in trace.nodes
  std::string group;
  std::int64_t round;  // the microbatch whose backward made it ready; -1 when unknown
  std::uint64_t bytes;
};

bool ends_with(const std::string& s, std::string_view tail) { return s.ends_with(tail); }

std::vector<Bucket> buckets_of(const chakra::Trace& trace, std::string_view tail_a, std::string_view tail_b) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) index.emplace(trace.nodes[i].id(), i);
  std::vector<Bucket> out;
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const chakra::Node& n = trace.nodes[i];
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE || !(ends_with(n.name(), tail_a) || ends_with(n.name(), tail_b))) {
      continue;
    }
    std::int64_t round = -1;
    for (const std::uint64_t d : n.data_deps()) {
      const auto at = index.find(d);
      if (at == index.end() || trace.nodes[at->second].type() != ChakraProtoMsg::COMP_NODE) continue;
      const std::string& name = trace.nodes[at->second].name();
      const std::size_t dot = name.find('.');
      if (name.size() > 1 && (name[0] == 'B' || name[0] == 'R') && dot != std::string::npos && dot > 1 && dot < 12 &&
          name.find_first_not_of("0123456789", 1) == dot) {
        round = std::stoll(name.substr(1, dot - 1));
      }
    }
    out.push_back(
        {i, chakra::attr_string(n, "pg_name").value_or(""), round, chakra::attr_uint(n, "comm_size").value_or(0)});
  }
  return out;
}

// Runs of consecutive buckets of one group and round.
std::vector<std::vector<Bucket>> runs_of(const std::vector<Bucket>& buckets) {
  std::vector<std::vector<Bucket>> runs;
  for (const Bucket& b : buckets) {
    if (runs.empty() || runs.back().back().group != b.group || runs.back().back().round != b.round) runs.emplace_back();
    runs.back().push_back(b);
  }
  return runs;
}

}  // namespace

BucketLimits bucket_limits(const chakra::Trace& trace) {
  BucketLimits limits;
  for (const std::vector<Bucket>& run : runs_of(buckets_of(trace, ".grad.ar", ".grad.rs"))) {
    for (std::size_t i = 0; i + 1 < run.size(); ++i) {
      const auto [at, added] = limits.try_emplace(run[i].group, run[i].bytes);
      if (!added) at->second = std::min(at->second, run[i].bytes);
    }
  }
  return limits;
}

std::uint64_t merge_buckets(chakra::Trace& trace, const BucketLimits& limits) {
  std::unordered_set<std::uint64_t> dropped;
  // Merges each group of `run` given by `ends` (the index in `run` closing each merged bucket).
  auto merge = [&](const std::vector<Bucket>& run, const std::vector<std::size_t>& ends) {
    std::size_t start = 0;
    for (const std::size_t end : ends) {
      std::uint64_t bytes = 0;
      for (std::size_t i = start; i <= end; ++i) {
        bytes += run[i].bytes;
        if (i < end) dropped.insert(trace.nodes[run[i].index].id());
      }
      set_int_attr(trace.nodes[run[end].index], "comm_size", static_cast<std::int64_t>(bytes));
      start = end + 1;
    }
  };
  std::map<std::string, std::pair<std::size_t, std::vector<std::size_t>>> first_run;  // group -> (buckets, ends)
  for (const std::vector<Bucket>& run : runs_of(buckets_of(trace, ".grad.ar", ".grad.rs"))) {
    const auto limit = limits.find(run.front().group);
    std::vector<std::size_t> ends;
    std::uint64_t held = 0;
    for (std::size_t i = 0; i < run.size(); ++i) {
      held += run[i].bytes;
      if (i + 1 == run.size() || limit == limits.end() || held >= limit->second) {
        ends.push_back(i);
        held = 0;
      }
    }
    first_run.try_emplace(run.front().group, run.size(), ends);
    merge(run, ends);
  }
  // ZeRO's parameter all-gathers: one per bucket of the first round, in the same order.
  std::map<std::string, std::vector<Bucket>> gathers;
  for (const Bucket& b : buckets_of(trace, ".param.ag", ".param.ag")) gathers[b.group].push_back(b);
  for (const auto& [group, list] : gathers) {
    const auto run = first_run.find(group);
    if (run != first_run.end() && run->second.first == list.size()) merge(list, run->second.second);
  }
  drop_nodes(trace, dropped);
  return dropped.size();
}

NewGroups::NewGroups(const TraceSet& in) : in_(in) {
  for (const auto& [id, members] : in.groups) {
    const auto name = in.names.find(id);
    if (name != in.names.end()) first_of_kind_.try_emplace(name->second, id);
  }
}

void NewGroups::add(std::uint32_t old_id, std::uint64_t copy, std::vector<NpuId> members) {
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  if (members.size() < 2) return;  // a group of one is no group
  const auto name = in_.names.find(old_id);
  const std::uint32_t kind = name == in_.names.end() ? old_id : first_of_kind_.at(name->second);
  made_.push_back({kind, old_id, copy, std::move(members)});
}

void NewGroups::finish(TraceSet& out) {
  std::sort(made_.begin(), made_.end(), [](const Made& a, const Made& b) {
    return std::tie(a.kind, a.members, a.old_id, a.copy) < std::tie(b.kind, b.members, b.old_id, b.copy);
  });
  std::map<std::pair<std::uint32_t, std::vector<NpuId>>, std::uint32_t> by_members;
  std::uint32_t next = 1;
  for (Made& m : made_) {
    auto [at, added] = by_members.try_emplace({m.kind, m.members}, next);
    if (added) {
      const auto name = in_.names.find(m.old_id);
      if (name != in_.names.end()) out.names[next] = name->second;
      out.groups[next++] = m.members;
    }
    ids_[{m.old_id, m.copy}] = at->second;
  }
}

std::optional<std::uint32_t> NewGroups::id(std::uint32_t old_id, std::uint64_t copy) const {
  const auto found = ids_.find({old_id, copy});
  if (found == ids_.end()) return std::nullopt;
  return found->second;
}

}  // namespace rescale

RescaleReport rescale_files(const std::string& in_prefix, const std::string& groups_path, const std::string& out_prefix,
                            const RescaleOptions& options) {
  namespace fs = std::filesystem;
  using rescale::TraceSet;
  if (!options.dp && !options.tp && !options.pp) fail("rescale: expected --dp, --tp or --pp (one or more)");
  if (options.dp == 0u) fail("--dp 0: expected a data-parallel size of at least 1");
  if (options.tp == 0u) fail("--tp 0: expected a tensor-parallel size of at least 1");
  if (options.pp == 0u) fail("--pp 0: expected a pipeline-parallel size of at least 1");
  std::error_code ec;
  auto input = std::make_shared<TraceSet>();
  while (fs::exists(chakra::rank_path(in_prefix, input->ranks), ec)) ++input->ranks;
  if (input->ranks == 0) {
    fail("{}: no {}; expected the PREFIX of PREFIX.0.et, PREFIX.1.et, ...", in_prefix, chakra::rank_path(in_prefix, 0));
  }
  input->groups = config::load_comm_groups(groups_path, static_cast<NpuId>(input->ranks));
  input->groups_source = groups_path;
  input->names_source = config::group_names_path_for(groups_path);
  if (input->names_source.empty() || !fs::exists(input->names_source, ec)) {
    fail("{}: no group names file ({}); expected the kinds of the groups (\"DP\", \"TP\", ...) beside the group file, "
         "as generate llm writes them",
         groups_path, input->names_source.empty() ? "PREFIX.group-names.json" : input->names_source);
  }
  input->names = config::load_group_names(input->names_source);
  input->source = [in_prefix](std::uint64_t r) { return chakra::rank_path(in_prefix, r); };
  input->trace = [in_prefix](std::uint64_t r) {
    const std::string source = chakra::rank_path(in_prefix, r);
    chakra::Trace trace = chakra::read_trace(source);
    for (const chakra::Node& node : trace.nodes) {
      if (node.type() == ChakraProtoMsg::METADATA_NODE && !node.inputs().values().empty()) {
        fail("{}: node {} describes process groups in its inputs; expected the groups in a group file, which "
             "rescale rewrites",
             source, node.id());
      }
    }
    return trace;
  };

  // TP first (it reads the per-rank sizes the input was generated with), then PP, then DP.
  std::vector<rescale::Step> steps;
  rescale::TraceSetPtr set = input;
  if (options.tp) steps.push_back(rescale::rescale_tp(set, *options.tp));
  if (!steps.empty()) set = steps.back().out;
  if (options.pp) steps.push_back(rescale::rescale_pp(set, *options.pp));
  if (!steps.empty()) set = steps.back().out;
  if (options.dp) steps.push_back(rescale::rescale_dp(set, *options.dp));
  if (!steps.empty()) set = steps.back().out;

  RescaleReport report;
  report.ranks_in = input->ranks;
  report.ranks_out = set->ranks;
  report.groups_in = input->groups.size();
  report.groups_out = set->groups.size();
  for (std::uint64_t r = 0; r < set->ranks; ++r) chakra::write_trace(chakra::rank_path(out_prefix, r), set->trace(r));
  // Higher ranks of an earlier, larger output would join the set.
  for (std::uint64_t r = set->ranks; fs::exists(chakra::rank_path(out_prefix, r), ec); ++r) {
    fs::remove(chakra::rank_path(out_prefix, r), ec);
  }
  write_file_atomically(out_prefix + ".groups.json", config::comm_groups_json(set->groups),
                        "the communicator-group file");
  write_file_atomically(out_prefix + ".group-names.json", config::group_names_json(set->names), "the group names file");
  for (const rescale::Step& step : steps) {
    for (std::string& line : step.changes()) report.changes.push_back(std::move(line));
    report.caveats.insert(report.caveats.end(), step.caveats.begin(), step.caveats.end());
  }
  return report;
}

std::string describe(const RescaleReport& r) {
  std::string out;
  for (const std::string& line : r.changes) out += line + "\n";
  out += fmt::format("{} ranks became {}; {} communicator groups became {}\n", r.ranks_in, r.ranks_out, r.groups_in,
                     r.groups_out);
  out += "not re-scaled faithfully:\n";
  for (const std::string& c : r.caveats) out += "  - " + c + "\n";
  return out;
}

}  // namespace chakrasim::tools
