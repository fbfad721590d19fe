#include "report/aggregates.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "network/topology.h"
#include "sim/time_splitter.h"
#include "workload/executor.h"

namespace chakrasim::report {
namespace {

// The figures that decide whether two NPUs share a bar.
auto split_key(const sim::TimeSplit& s) {
  return std::make_tuple(s.compute_ns, s.collective_ns, s.p2p_wait_ns, s.memory_ns, s.idle_ns, s.by_group_kind_ns);
}

// The mean of the splits of `npus`.
sim::TimeSplit mean_split(const sim::Result& result, const std::vector<NpuId>& npus) {
  sim::TimeSplit sum;
  for (const NpuId n : npus) {
    const sim::TimeSplit& s = result.npus[n].split;
    sum.compute_ns += s.compute_ns;
    sum.collective_ns += s.collective_ns;
    sum.p2p_wait_ns += s.p2p_wait_ns;
    sum.memory_ns += s.memory_ns;
    sum.idle_ns += s.idle_ns;
    sum.model_flops += s.model_flops;
    sum.by_group_kind_ns.resize(std::max(sum.by_group_kind_ns.size(), s.by_group_kind_ns.size()), 0);
    for (std::size_t k = 0; k < s.by_group_kind_ns.size(); ++k) sum.by_group_kind_ns[k] += s.by_group_kind_ns[k];
  }
  const Tick n = npus.empty() ? 1 : npus.size();
  for (Tick* t : {&sum.compute_ns, &sum.collective_ns, &sum.p2p_wait_ns, &sum.memory_ns, &sum.idle_ns}) *t /= n;
  for (Tick& t : sum.by_group_kind_ns) t /= n;
  sum.model_flops /= static_cast<double>(n);
  return sum;
}

template <typename Key>
std::vector<NpuClass> classes_by(const sim::Result& result, Key&& key) {
  std::vector<NpuClass> out;
  std::map<decltype(key(NpuId{0})), std::size_t> index;
  for (NpuId n = 0; n < result.npus.size(); ++n) {
    const auto [it, fresh] = index.try_emplace(key(n), out.size());
    if (fresh) out.emplace_back();
    out[it->second].npus.push_back(n);
  }
  for (NpuClass& c : out) {
    c.split = mean_split(result, c.npus);
    c.label = fmt::format("NPU{} {}", c.npus.size() == 1 ? "" : "s", npu_ranges(c.npus));
  }
  return out;
}

CollectiveAggregate& entry(std::vector<CollectiveAggregate>& list, const std::string& key) {
  for (CollectiveAggregate& a : list) {
    if (a.key == key) return a;
  }
  list.push_back({key});
  return list.back();
}

void add(CollectiveAggregate& a, const CollectiveRow& r) {
  ++a.count;
  a.bytes += r.bytes;
  a.time_ns += r.duration;
  a.exposed_ns += r.exposed;
  a.busbw_gb_per_s += r.busbw_gb_per_s * static_cast<double>(r.duration);  // divided by the time below
}

void finish(std::vector<CollectiveAggregate>& list) {
  for (CollectiveAggregate& a : list) {
    const double t = static_cast<double>(a.time_ns);
    a.algbw_gb_per_s = t > 0 ? static_cast<double>(a.bytes) / t : 0;
    a.busbw_gb_per_s = t > 0 ? a.busbw_gb_per_s / t : 0;
  }
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.time_ns > b.time_ns; });
}

}  // namespace

std::string npu_ranges(const std::vector<NpuId>& npus) {
  std::string out;
  for (std::size_t i = 0; i < npus.size();) {
    std::size_t j = i;
    while (j + 1 < npus.size() && npus[j + 1] == npus[j] + 1) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ", ",
                       j == i ? fmt::format("{}", npus[i]) : fmt::format("{}-{}", npus[i], npus[j]));
    i = j + 1;
  }
  return out;
}

std::vector<NpuClass> npu_classes(const sim::Inputs& inputs, const sim::Result& result, std::size_t max_classes) {
  std::vector<NpuClass> by_split = classes_by(result, [&](NpuId n) { return split_key(result.npus[n].split); });
  if (by_split.size() <= max_classes) return by_split;
  std::vector<NpuClass> by_graph = classes_by(result, [&](NpuId n) { return inputs.graphs[n].get(); });
  if (by_graph.size() > max_classes) by_graph.resize(max_classes);
  return by_graph;
}

std::vector<CollectiveAggregate> aggregate_by_group_kind(const sim::Inputs& inputs, const sim::Result& result,
                                                         const std::vector<CollectiveRow>& rows) {
  const sim::GroupKinds kinds(inputs.groups, inputs.group_kind_names, network::Topology(inputs.network));
  std::vector<CollectiveAggregate> out;
  for (const CollectiveRow& r : rows) {
    const std::uint32_t group = workload::group_of(r.group).value_or(0);
    add(entry(out, kinds.labels()[kinds.kind_of(group)]), r);
  }
  // The time split's figure: where collectives of several kinds overlap it counts the instant
  // once, so the kinds' exposed times add up to the split's exposed collectives.
  for (CollectiveAggregate& a : out) a.exposed_ns = 0;
  if (!result.npus.empty()) {
    const sim::TimeSplit& s = result.npus[0].split;
    for (std::size_t k = 0; k < s.by_group_kind_ns.size() && k < result.group_kinds.size(); ++k) {
      if (s.by_group_kind_ns[k] > 0) entry(out, result.group_kinds[k]).exposed_ns = s.by_group_kind_ns[k];
    }
  }
  finish(out);
  return out;
}

std::vector<CollectiveAggregate> aggregate_by_type(const std::vector<CollectiveRow>& rows) {
  std::vector<CollectiveAggregate> out;
  for (const CollectiveRow& r : rows) add(entry(out, r.kind), r);
  finish(out);
  return out;
}

std::vector<DimensionLinks> links_per_dimension(const sim::Result& result, const LinkLog& links, std::size_t hottest) {
  const double horizon = static_cast<double>(std::max<Tick>(1, result.max_finish_ns()));
  std::map<std::uint32_t, std::vector<std::uint32_t>> of_dim;
  for (std::uint32_t l = 0; l < result.link_names.size(); ++l) {
    of_dim[l < result.link_dims.size() ? result.link_dims[l] : 0].push_back(l);
  }
  std::vector<DimensionLinks> out;
  for (auto& [dim, ids] : of_dim) {
    DimensionLinks d;
    d.dim = dim;
    d.links = ids.size();
    std::vector<std::pair<double, std::uint32_t>> busy;
    for (const std::uint32_t l : ids) {
      const double b = static_cast<double>(links.busy_total(l)) / horizon;
      d.mean_busy += b / static_cast<double>(ids.size());
      d.max_busy = std::max(d.max_busy, b);
      busy.emplace_back(b, l);
    }
    std::stable_sort(busy.begin(), busy.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < busy.size() && i < hottest; ++i) {
      d.hottest.emplace_back(result.link_names[busy[i].second], busy[i].first);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<PathKind> critical_path_by_kind(const chakra::Graph& graph, const std::vector<NodeSpan>& path) {
  std::vector<PathKind> out = {{"compute"}, {"collectives"}, {"sends and receives"},
                               {"memory"},  {"other"},       {"waiting between nodes"}};
  Tick previous_end = 0;
  for (const NodeSpan& s : path) {
    std::size_t k = 4;
    switch (graph.type(s.node)) {
      case chakra::NodeType::kComp: k = 0; break;
      case chakra::NodeType::kCommColl: k = 1; break;
      case chakra::NodeType::kCommSend:
      case chakra::NodeType::kCommRecv: k = 2; break;
      case chakra::NodeType::kMemLoad:
      case chakra::NodeType::kMemStore: k = 3; break;
      default: break;
    }
    ++out[k].nodes;
    out[k].ns += s.end - s.start;
    if (s.start > previous_end) out[5].ns += s.start - previous_end;
    previous_end = std::max(previous_end, s.end);
  }
  std::erase_if(out, [](const PathKind& p) { return p.ns == 0 && p.nodes == 0; });
  return out;
}

}  // namespace chakrasim::report
