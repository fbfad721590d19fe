#include "report/analysis.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "workload/executor.h"

namespace chakrasim::report {

NcclTestsSize nccl_tests_size(chakra::CommType type, std::uint64_t comm_size, std::uint32_t npus) {
  using chakra::CommType;
  const double n = npus;
  const double moved = npus > 0 ? (n - 1) / n : 0;  // the share of the data that crosses links
  switch (type) {
    case CommType::kAllReduce: return {comm_size, "buffer", 2 * moved};
    case CommType::kAllGather:
    case CommType::kGather: return {comm_size * npus, "output", moved};
    case CommType::kScatter: return {comm_size * npus, "input", moved};
    case CommType::kReduceScatter:
    case CommType::kReduceScatterBlock: return {comm_size, "input", moved};
    case CommType::kAllToAll: return {comm_size, "send buffer", moved};
    case CommType::kBroadcast:
    case CommType::kReduce: return {comm_size, "buffer", 1};
    case CommType::kBarrier: return {0, "none", 0};
  }
  return {comm_size, "buffer", 1};
}

std::vector<CollectiveRow> collective_rows(const sim::Inputs& inputs, const NodeLog& log, NpuId npu) {
  const chakra::Graph& g = *inputs.graphs[npu];
  const auto world = static_cast<std::uint32_t>(inputs.graphs.size());
  const std::vector<network::DimensionSpec>& dims = inputs.network.dims;
  // The NPU's compute time as disjoint intervals, to tell how much of each collective was hidden.
  std::vector<std::pair<Tick, Tick>> compute;
  for (const NodeSpan& s : log.spans(npu)) {
    if (s.end != kNeverTick && g.type(s.node) == chakra::NodeType::kComp) compute.emplace_back(s.start, s.end);
  }
  std::sort(compute.begin(), compute.end());
  std::vector<std::pair<Tick, Tick>> merged;
  for (const auto& [a, b] : compute) {
    if (!merged.empty() && a <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, b);
    } else {
      merged.emplace_back(a, b);
    }
  }
  auto hidden = [&](Tick from, Tick to) {
    Tick covered = 0;
    auto it = std::lower_bound(merged.begin(), merged.end(), std::pair<Tick, Tick>{from, 0},
                               [](const auto& x, const auto& y) { return x.second < y.first; });
    for (; it != merged.end() && it->first < to; ++it) covered += std::min(to, it->second) - std::max(from, it->first);
    return covered;
  };
  std::vector<CollectiveRow> rows;
  for (const NodeSpan& s : log.spans(npu)) {
    if (s.end == kNeverTick || g.type(s.node) != chakra::NodeType::kCommColl || !g.has_attrs(s.node)) continue;
    const chakra::OpAttrs& a = g.attrs(s.node);
    CollectiveRow row;
    row.node_id = g.id(s.node);
    row.name = g.name(s.node);
    row.kind = workload::collective_node_name(a.comm_type);
    row.comm_size = a.comm_size;
    row.group = g.string(a.pg_name);
    row.npus = world;
    if (const auto id = workload::group_of(row.group); id && *id != 0) {
      if (const auto it = inputs.groups.find(*id); it != inputs.groups.end()) {
        row.npus = static_cast<std::uint32_t>(it->second.size());
      }
    }
    std::vector<std::string> algorithms;
    std::vector<bool> used(dims.size(), false);
    for (const PhaseSpan& p : log.phases(npu)) {
      if (p.node != s.node) continue;
      for (std::size_t d = 0; d < dims.size(); ++d) used[d] = used[d] || (p.group ? true : d == p.dim);
      if (p.chunk != 0) continue;
      if (p.label != nullptr) {
        algorithms.emplace_back(p.label);
        continue;
      }
      algorithms.push_back(p.group ? fmt::format("{} (group)", system::algorithm_name(p.algorithm))
                                   : fmt::format("{} (dim {})", system::algorithm_name(p.algorithm), p.dim));
    }
    for (const std::string& part : algorithms) row.algorithm += (row.algorithm.empty() ? "" : ", ") + part;
    if (inputs.network.fabric != nullptr) {
      // A graph's one dimension is its first link's: the NPU's links are the graph's.
      row.links_gb_per_s = network::npu_fabric_egress_bytes_per_ns(inputs.network, npu);
    } else {
      for (std::size_t d = 0; d < dims.size(); ++d) {
        if (used[d]) row.links_gb_per_s += network::npu_egress_bytes_per_ns(dims[d]);
      }
    }
    row.start = s.start;
    row.duration = s.end - s.start;
    row.exposed = row.duration - hidden(s.start, s.end);
    const NcclTestsSize size = nccl_tests_size(static_cast<chakra::CommType>(a.comm_type), a.comm_size, row.npus);
    row.bytes = size.bytes;
    row.size_is = size.which;
    if (row.duration > 0) {
      row.algbw_gb_per_s = static_cast<double>(row.bytes) / static_cast<double>(row.duration);  // bytes/ns = GB/s
      row.busbw_gb_per_s = row.algbw_gb_per_s * size.bus_factor;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<NodeSpan> critical_path(const chakra::Graph& graph, const std::vector<NodeSpan>& spans) {
  std::vector<const NodeSpan*> span_of(graph.size(), nullptr);
  const NodeSpan* last = nullptr;
  for (const NodeSpan& s : spans) {
    if (s.end == kNeverTick) continue;
    span_of[s.node] = &s;
    if (last == nullptr || s.end >= last->end) last = &s;
  }
  std::vector<std::vector<std::uint32_t>> parents(graph.size());
  for (std::uint32_t i = 0; i < graph.size(); ++i) {
    for (const std::uint32_t c : graph.children(i)) parents[c].push_back(i);
  }
  std::vector<NodeSpan> path;
  for (const NodeSpan* at = last; at != nullptr;) {
    path.push_back(*at);
    const NodeSpan* next = nullptr;
    for (const std::uint32_t p : parents[at->node]) {
      const NodeSpan* ps = span_of[p];
      if (ps != nullptr && (next == nullptr || ps->end > next->end)) next = ps;
    }
    at = next;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

void LinkLog::on_link_busy(std::uint32_t link, Tick start, Tick end) { on_link_share(link, start, end, 1.0); }

void LinkLog::on_link_share(std::uint32_t link, Tick start, Tick end, double share) {
  if (link >= busy_.size()) busy_.resize(link + 1);
  busy_[link].push_back({start, end, share});
}

std::vector<Tick> LinkLog::busy_per_bin(std::uint32_t link, Tick horizon, std::uint32_t bins) const {
  std::vector<double> sum(bins, 0);
  if (link < busy_.size() && horizon > 0) {
    for (const auto& [start, end, share] : busy_[link]) {
      for (std::uint32_t b = static_cast<std::uint32_t>(start * bins / horizon); b < bins; ++b) {
        const Tick bin_start = horizon * b / bins, bin_end = horizon * (b + 1) / bins;
        if (bin_start >= end) break;
        const Tick from = std::max(start, bin_start), to = std::min(end, bin_end);
        if (to > from) sum[b] += static_cast<double>(to - from) * share;
      }
    }
  }
  std::vector<Tick> out(bins, 0);
  for (std::uint32_t b = 0; b < bins; ++b) out[b] = static_cast<Tick>(std::llround(sum[b]));
  return out;
}

Tick LinkLog::busy_total(std::uint32_t link) const {
  double total = 0;
  if (link < busy_.size()) {
    for (const auto& [start, end, share] : busy_[link]) total += static_cast<double>(end - start) * share;
  }
  return static_cast<Tick>(std::llround(total));
}

}  // namespace chakrasim::report
