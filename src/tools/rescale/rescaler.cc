#include "tools/rescale/rescaler.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "config/other_configs.h"
#include "core/atomic_file.h"
#include "core/error.h"

namespace chakrasim::tools {
namespace {

// rank = low + stride x (d + dp x high), low < stride.
struct Layout {
  std::uint64_t stride = 0, dp = 0, highs = 0;
  std::uint64_t low(std::uint64_t r) const { return r % stride; }
  std::uint64_t d(std::uint64_t r) const { return r / stride % dp; }
  std::uint64_t high(std::uint64_t r) const { return r / (stride * dp); }
  std::uint64_t rank(std::uint64_t low, std::uint64_t d, std::uint64_t high) const {
    return low + stride * (d + dp * high);
  }
  std::uint64_t ranks() const { return stride * dp * highs; }
};

Layout layout_of(const system::CommGroups& groups, const std::vector<std::uint32_t>& dp_groups, std::uint64_t ranks,
                 const std::string& source) {
  const std::vector<NpuId>& first = groups.at(dp_groups.front());
  if (first.size() < 2) {
    fail("{}: DP group {} has {} member; expected the data-parallel groups of a layout with DP of 2 or more", source,
         dp_groups.front(), first.size());
  }
  std::vector<NpuId> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  Layout l;
  l.stride = sorted[1] - sorted[0];
  l.dp = sorted.size();
  if (l.stride == 0 || ranks % (l.stride * l.dp) != 0) {
    fail("{}: DP group {} (stride {}) does not divide the {} ranks into replicas; expected rank = low + stride x "
         "(d + DP x high)",
         source, dp_groups.front(), l.stride, ranks);
  }
  l.highs = ranks / (l.stride * l.dp);
  std::vector<bool> seen(ranks, false);
  for (const std::uint32_t id : dp_groups) {
    std::vector<NpuId> members = groups.at(id);
    std::sort(members.begin(), members.end());
    const std::uint64_t base = members.front();
    bool ok = members.size() == l.dp && l.d(base) == 0;
    for (std::uint64_t j = 0; ok && j < members.size(); ++j) {
      ok = members[j] == l.rank(l.low(base), j, l.high(base)) && !seen[members[j]];
      if (ok) seen[members[j]] = true;
    }
    if (!ok) {
      fail("{}: DP group {} is not {{low + {} x (d + {} x high) : d < {}}}; expected every DP group to be one "
           "replica set of rank = low + stride x (d + DP x high)",
           source, id, l.stride, l.dp, l.dp);
    }
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) {
    fail("{}: the DP groups do not cover every rank; expected one DP group per (low, high)", source);
  }
  return l;
}

bool dp_collective(const chakra::Node& n, chakra::CommType type, const std::vector<std::uint32_t>& dp_groups) {
  if (n.type() != ChakraProtoMsg::COMM_COLL_NODE || chakra::attr_int(n, "comm_type") != static_cast<int>(type)) {
    return false;
  }
  const std::string pg = chakra::attr_string(n, "pg_name").value_or("");
  return !pg.empty() && pg.find_first_not_of("0123456789") == std::string::npos && pg.size() < 10 &&
         std::find(dp_groups.begin(), dp_groups.end(), static_cast<std::uint32_t>(std::stoul(pg))) != dp_groups.end();
}

// ZeRO's sharded step: a compute node fed by a DP reduce-scatter and feeding a DP all-gather
// works on this rank's 1 / DP of the state, so its time and sizes scale by old DP / new DP; so
// does each rank's part of a DP all-gather (ZeRO gathers the whole parameters from the shards).
std::uint64_t rescale_sharded_steps(chakra::Trace& trace, const std::vector<std::uint32_t>& dp_groups, double factor) {
  std::unordered_map<std::uint64_t, const chakra::Node*> by_id;
  for (const chakra::Node& n : trace.nodes) by_id.emplace(n.id(), &n);
  std::unordered_map<std::uint64_t, bool> feeds_gather;  // compute node id -> a DP all-gather depends on it
  for (const chakra::Node& n : trace.nodes) {
    if (!dp_collective(n, chakra::CommType::kAllGather, dp_groups)) continue;
    for (const auto* deps : {&n.data_deps(), &n.ctrl_deps()}) {
      for (const std::uint64_t d : *deps) feeds_gather[d] = true;
    }
  }
  auto scaled = [&](std::uint64_t v) {
    return v == 0
               ? 0
               : std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(static_cast<double>(v) * factor)));
  };
  std::uint64_t count = 0;
  for (chakra::Node& n : trace.nodes) {
    // A DP all-gather gathers the whole state from 1 / DP shards: each rank's part (comm_size, the
    // per-NPU input) scales too.
    if (dp_collective(n, chakra::CommType::kAllGather, dp_groups)) {
      for (chakra::Attribute& a : *n.mutable_attr()) {
        if (a.name() == "comm_size")
          a = chakra::make_int64("comm_size", static_cast<std::int64_t>(scaled(chakra::attr_uint(n, &a).value_or(0))));
      }
      continue;
    }
    if (n.type() != ChakraProtoMsg::COMP_NODE || !feeds_gather.contains(n.id())) continue;
    bool after_scatter = false;
    for (const auto* deps : {&n.data_deps(), &n.ctrl_deps()}) {
      for (const std::uint64_t d : *deps) {
        const auto p = by_id.find(d);
        after_scatter = after_scatter ||
                        (p != by_id.end() && dp_collective(*p->second, chakra::CommType::kReduceScatter, dp_groups));
      }
    }
    if (!after_scatter) continue;
    n.set_duration_micros(scaled(n.duration_micros()));
    for (chakra::Attribute& a : *n.mutable_attr()) {
      if (a.name() == "num_ops" || a.name() == "tensor_size") {
        a = chakra::make_uint64(a.name(), scaled(chakra::attr_uint(n, &a).value_or(0)));
      }
    }
    ++count;
  }
  return count;
}

}  // namespace

RescaleReport rescale_files(const std::string& in_prefix, const std::string& groups_path, const std::string& out_prefix,
                            const RescaleOptions& options) {
  namespace fs = std::filesystem;
  if (options.dp == 0) fail("--dp 0: expected a data-parallel size of at least 1");
  std::error_code ec;
  std::uint64_t ranks = 0;
  while (fs::exists(chakra::rank_path(in_prefix, ranks), ec)) ++ranks;
  if (ranks == 0) {
    fail("{}: no {}; expected the PREFIX of PREFIX.0.et, PREFIX.1.et, ...", in_prefix, chakra::rank_path(in_prefix, 0));
  }
  const system::CommGroups groups = config::load_comm_groups(groups_path, static_cast<NpuId>(ranks));
  const std::string names_path = config::group_names_path_for(groups_path);
  if (names_path.empty() || !fs::exists(names_path, ec)) {
    fail("{}: no group names file ({}); expected the kinds of the groups (\"DP\", \"TP\", ...) beside the group file, "
         "as generate llm writes them",
         groups_path, names_path.empty() ? "PREFIX.group-names.json" : names_path);
  }
  const std::map<std::uint32_t, std::string> names = config::load_group_names(names_path);
  std::vector<std::uint32_t> dp_groups;
  for (const auto& [id, members] : groups) {
    const auto name = names.find(id);
    if (name != names.end() && name->second == "DP") dp_groups.push_back(id);
  }
  if (dp_groups.empty())
    fail("{}: no group is named \"DP\"; expected the data-parallel groups labelled DP", names_path);
  const Layout old_layout = layout_of(groups, dp_groups, ranks, groups_path);
  Layout layout = old_layout;
  layout.dp = options.dp;

  // The new groups: a DP group per replica set, every other group once per new replica index.
  system::CommGroups new_groups;
  std::map<std::uint32_t, std::string> new_names;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> new_id;  // (old id, new d) -> id; DP: d = 0
  struct Made {
    std::uint32_t kind;  // the first old id of its kind's name (its own id without a name)
    NpuId lowest;
    std::uint32_t old_id;
    std::uint64_t d;
    std::vector<NpuId> members;
  };
  std::vector<Made> made;
  std::map<std::string, std::uint32_t> first_of_kind;
  for (const auto& [id, members] : groups) {
    const auto name = names.find(id);
    if (name != names.end()) first_of_kind.try_emplace(name->second, id);
  }
  auto kind_order = [&](std::uint32_t id) {
    const auto name = names.find(id);
    return name == names.end() ? id : first_of_kind.at(name->second);
  };
  for (const auto& [id, members] : groups) {
    const auto name = names.find(id);
    const bool dp = std::find(dp_groups.begin(), dp_groups.end(), id) != dp_groups.end();
    const std::uint64_t d0 = old_layout.d(members.front());
    for (const NpuId m : members) {
      if (!dp && old_layout.d(m) != d0) {
        fail("{}: group {} ({}) has members of different data-parallel replicas; expected only DP groups to span "
             "replicas",
             groups_path, id, name != names.end() ? name->second : "no name");
      }
    }
    for (std::uint64_t d = 0; d < (dp ? 1 : layout.dp); ++d) {
      // New replica d runs old replica d mod DP's traces: only those name this group.
      if (!dp && d % old_layout.dp != d0) continue;
      std::vector<NpuId> out;
      if (dp) {
        for (std::uint64_t j = 0; j < layout.dp; ++j) {
          out.push_back(
              static_cast<NpuId>(layout.rank(old_layout.low(members.front()), j, old_layout.high(members.front()))));
        }
      } else {
        for (const NpuId m : members) {
          out.push_back(static_cast<NpuId>(layout.rank(old_layout.low(m), d, old_layout.high(m))));
        }
      }
      if (out.size() < 2) continue;  // a group of one is no group (DP 1)
      made.push_back({kind_order(id), *std::min_element(out.begin(), out.end()), id, d, std::move(out)});
    }
  }
  // Ids as a generator numbers them: kind by kind (in the order the old ids first name each
  // kind), within a kind by lowest member.
  std::sort(made.begin(), made.end(),
            [](const Made& a, const Made& b) { return std::tie(a.kind, a.lowest) < std::tie(b.kind, b.lowest); });
  std::uint32_t next = 1;
  for (Made& m : made) {
    new_id[{m.old_id, m.d}] = next;
    const auto name = names.find(m.old_id);
    if (name != names.end()) new_names[next] = name->second;
    new_groups[next++] = std::move(m.members);
  }

  RescaleReport report;
  report.ranks_in = ranks;
  report.ranks_out = layout.ranks();
  report.dp_in = old_layout.dp;
  report.dp_out = layout.dp;
  report.groups_in = groups.size();
  report.groups_out = new_groups.size();
  for (std::uint64_t r = 0; r < layout.ranks(); ++r) {
    const std::uint64_t low = layout.low(r), d = layout.d(r), high = layout.high(r);
    const std::uint64_t source_rank = old_layout.rank(low, d % old_layout.dp, high);
    const std::string source = chakra::rank_path(in_prefix, source_rank);
    chakra::Trace trace = chakra::read_trace(source);
    report.sharded_steps +=
        rescale_sharded_steps(trace, dp_groups, static_cast<double>(old_layout.dp) / static_cast<double>(layout.dp));
    for (chakra::Node& node : trace.nodes) {
      if (node.type() == ChakraProtoMsg::METADATA_NODE && !node.inputs().values().empty()) {
        fail("{}: node {} describes process groups in its inputs; expected the groups in a group file, which "
             "rescale rewrites",
             source, node.id());
      }
      for (chakra::Attribute& a : *node.mutable_attr()) {
        if (a.name() == "pg_name") {
          const std::string pg = chakra::attr_string(node, &a).value_or("");
          if (pg.empty() || pg == "0") continue;  // every rank
          if (pg.size() > 9 || pg.find_first_not_of("0123456789") != std::string::npos ||
              !groups.contains(std::stoul(pg))) {
            fail("{}: node {} has pg_name \"{}\"; expected the id of a group of {}", source, node.id(), pg,
                 groups_path);
          }
          const auto old_id = static_cast<std::uint32_t>(std::stoul(pg));
          const bool dp = std::find(dp_groups.begin(), dp_groups.end(), old_id) != dp_groups.end();
          const auto found = new_id.find({old_id, dp ? 0 : d});
          if (found == new_id.end()) {
            // A DP collective at DP 1 has no group left: it runs on the rank alone, as a group of one.
            fail("{}: node {} uses group {}, which --dp {} leaves with one member; expected --dp 2 or more", source,
                 node.id(), old_id, layout.dp);
          }
          a = chakra::make_string("pg_name", std::to_string(found->second));
        } else if (a.name() == "comm_src" || a.name() == "comm_dst") {
          const auto peer = chakra::attr_int(node, &a).value_or(0);
          if (peer < 0 || static_cast<std::uint64_t>(peer) >= ranks ||
              old_layout.d(static_cast<std::uint64_t>(peer)) != d % old_layout.dp) {
            fail("{}: node {} has {} {}, in another data-parallel replica; expected point-to-point messages within "
                 "one",
                 source, node.id(), a.name(), peer);
          }
          const auto p = static_cast<std::uint64_t>(peer);
          a = chakra::make_int64(a.name(),
                                 static_cast<std::int64_t>(layout.rank(old_layout.low(p), d, old_layout.high(p))));
        }
      }
    }
    chakra::write_trace(chakra::rank_path(out_prefix, r), trace);
  }
  // Higher ranks of an earlier, larger output would join the set.
  for (std::uint64_t r = layout.ranks(); fs::exists(chakra::rank_path(out_prefix, r), ec); ++r) {
    fs::remove(chakra::rank_path(out_prefix, r), ec);
  }
  write_file_atomically(out_prefix + ".groups.json", config::comm_groups_json(new_groups),
                        "the communicator-group file");
  write_file_atomically(out_prefix + ".group-names.json", config::group_names_json(new_names), "the group names file");
  report.caveats = {
      "each replica keeps its compute and messages: the global batch scales with DP (weak scaling)",
      "of what depends on DP, only ZeRO's sharded steps (compute between a DP reduce-scatter and a DP all-gather) "
      "are resized; other sharded work (ZeRO-3 parameter shards in memory, gradient buckets) keeps its sizes",
      "ranks keep their numbering pattern (rank = low + stride x (d + DP x high)); the network must have room for "
      "them",
  };
  return report;
}

std::string describe(const RescaleReport& r) {
  std::string out = fmt::format("rescaled {} ranks (DP {}) to {} ranks (DP {}); {} communicator groups became {}\n",
                                r.ranks_in, r.dp_in, r.ranks_out, r.dp_out, r.groups_in, r.groups_out);
  out += fmt::format("  {} sharded optimizer steps (between a DP reduce-scatter and a DP all-gather) scaled by {} / "
                     "{}\n",
                     r.sharded_steps, r.dp_in, r.dp_out);
  out += "not re-scaled faithfully:\n";
  for (const std::string& c : r.caveats) out += "  - " + c + "\n";
  return out;
}

}  // namespace chakrasim::tools
