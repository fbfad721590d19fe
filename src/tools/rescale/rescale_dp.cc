// `chakra rescale --dp N` (rescaler.h): the same job over another data-parallel size, in weak
// scaling. Ranks keep their layout, rank = low + stride x (d + DP x high); new replica d runs old
// replica d mod DP's traces with their peers and groups moved to it, and the DP groups span the
// new replicas. What ZeRO shards over DP (the compute between a DP reduce-scatter and a DP
// all-gather, and that all-gather's size) is scaled by old DP / new DP.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/error.h"
#include "tools/rescale/rescale_step.h"

namespace chakrasim::tools::rescale {
namespace {

// rank = low + stride x (d + dp x high), low < stride.
struct DpLayout {
  std::uint64_t stride = 0, dp = 0, highs = 0;
  std::uint64_t low(std::uint64_t r) const { return r % stride; }
  std::uint64_t d(std::uint64_t r) const { return r / stride % dp; }
  std::uint64_t high(std::uint64_t r) const { return r / (stride * dp); }
  std::uint64_t rank(std::uint64_t low, std::uint64_t d, std::uint64_t high) const {
    return low + stride * (d + dp * high);
  }
  std::uint64_t ranks() const { return stride * dp * highs; }
};

DpLayout layout_of(const system::CommGroups& groups, const std::vector<std::uint32_t>& dp_groups, std::uint64_t ranks,
                   const std::string& source) {
  const std::vector<NpuId>& first = groups.at(dp_groups.front());
  if (first.size() < 2) {
    fail("{}: DP group {} has {} member; expected the data-parallel groups of a layout with DP of 2 or more", source,
         dp_groups.front(), first.size());
  }
  std::vector<NpuId> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  DpLayout l;
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
  std::uint64_t count = 0;
  for (chakra::Node& n : trace.nodes) {
    if (dp_collective(n, chakra::CommType::kAllGather, dp_groups)) {
      scale_attr(n, "comm_size", factor);
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
    scale_compute(n, factor);
    ++count;
  }
  return count;
}

}  // namespace

Step rescale_dp(TraceSetPtr in, std::uint64_t new_dp) {
  if (new_dp == 0) fail("--dp 0: expected a data-parallel size of at least 1");
  const std::vector<std::uint32_t> dp_groups = groups_named(*in, "DP");
  if (dp_groups.empty()) {
    fail("{}: no group is named \"DP\"; expected the data-parallel groups labelled DP", in->names_source);
  }
  const DpLayout old_layout = layout_of(in->groups, dp_groups, in->ranks, in->groups_source);
  DpLayout layout = old_layout;
  layout.dp = new_dp;
  auto out = std::make_shared<TraceSet>();
  out->ranks = layout.ranks();
  out->groups_source = in->groups_source;
  out->names_source = in->names_source;
  auto groups = std::make_shared<NewGroups>(*in);
  for (const auto& [id, members] : in->groups) {
    const bool dp = std::find(dp_groups.begin(), dp_groups.end(), id) != dp_groups.end();
    if (dp) {
      std::vector<NpuId> replicas;
      for (std::uint64_t j = 0; j < layout.dp; ++j) {
        replicas.push_back(
            static_cast<NpuId>(layout.rank(old_layout.low(members.front()), j, old_layout.high(members.front()))));
      }
      groups->add(id, 0, std::move(replicas));
      continue;
    }
    const std::uint64_t d0 = old_layout.d(members.front());
    for (const NpuId m : members) {
      if (old_layout.d(m) != d0) {
        const auto name = in->names.find(id);
        fail("{}: group {} ({}) has members of different data-parallel replicas; expected only DP groups to span "
             "replicas",
             in->groups_source, id, name != in->names.end() ? name->second : "no name");
      }
    }
    // New replica d runs old replica d mod DP's traces: only those name this group.
    for (std::uint64_t d = d0; d < layout.dp; d += old_layout.dp) {
      std::vector<NpuId> copy;
      for (const NpuId m : members)
        copy.push_back(static_cast<NpuId>(layout.rank(old_layout.low(m), d, old_layout.high(m))));
      groups->add(id, d, std::move(copy));
    }
  }
  groups->finish(*out);

  auto sharded = std::make_shared<std::uint64_t>(0);
  auto source_rank = [old_layout, layout](std::uint64_t r) {
    return old_layout.rank(layout.low(r), layout.d(r) % old_layout.dp, layout.high(r));
  };
  out->source = [in, source_rank](std::uint64_t r) { return in->source(source_rank(r)); };
  out->trace = [in, groups, dp_groups, old_layout, layout, sharded, source_rank](std::uint64_t r) {
    const std::uint64_t d = layout.d(r);
    const std::uint64_t from = source_rank(r);
    const std::string source = in->source(from);
    chakra::Trace trace = in->trace(from);
    *sharded +=
        rescale_sharded_steps(trace, dp_groups, static_cast<double>(old_layout.dp) / static_cast<double>(layout.dp));
    for (chakra::Node& node : trace.nodes) {
      if (const std::optional<std::uint32_t> old_id = group_of(node, *in, source)) {
        const bool dp = std::find(dp_groups.begin(), dp_groups.end(), *old_id) != dp_groups.end();
        const std::optional<std::uint32_t> id = groups->id(*old_id, dp ? 0 : d);
        // A DP collective at DP 1 has no group left: it would run on the rank alone.
        if (!id) {
          fail("{}: node {} uses group {}, which --dp {} leaves with one member; expected --dp 2 or more", source,
               node.id(), *old_id, layout.dp);
        }
        set_group(node, *id);
      }
      for (chakra::Attribute& a : *node.mutable_attr()) {
        if (a.name() != "comm_src" && a.name() != "comm_dst") continue;
        const auto peer = chakra::attr_int(node, &a).value_or(0);
        if (peer < 0 || static_cast<std::uint64_t>(peer) >= in->ranks ||
            old_layout.d(static_cast<std::uint64_t>(peer)) != d % old_layout.dp) {
          fail("{}: node {} has {} {}, in another data-parallel replica; expected point-to-point messages within one",
               source, node.id(), a.name(), peer);
        }
        const auto p = static_cast<std::uint64_t>(peer);
        a = chakra::make_int64(a.name(),
                               static_cast<std::int64_t>(layout.rank(old_layout.low(p), d, old_layout.high(p))));
      }
    }
    return trace;
  };
  Step step;
  step.out = out;
  step.changes = [in, out, old_layout, layout, sharded]() {
    return std::vector<std::string>{fmt::format("rescaled {} ranks (DP {}) to {} ranks (DP {})", in->ranks,
                                                old_layout.dp, out->ranks, layout.dp),
                                    fmt::format("  {} sharded optimizer steps (between a DP reduce-scatter and a DP "
                                                "all-gather) scaled by {} / {}",
                                                *sharded, old_layout.dp, layout.dp)};
  };
  step.caveats = {
      "--dp: each replica keeps its compute and messages: the global batch scales with DP (weak scaling)",
      "--dp: of what depends on DP, only ZeRO's sharded steps (compute between a DP reduce-scatter and a DP "
      "all-gather) are resized; other sharded work (ZeRO-3 parameter shards in memory, gradient buckets) keeps its "
      "sizes",
      "--dp: ranks keep their numbering pattern (rank = low + stride x (d + DP x high)); the network must have room "
      "for them",
  };
  return step;
}

}  // namespace chakrasim::tools::rescale
