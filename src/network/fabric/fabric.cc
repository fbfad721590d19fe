#include "network/fabric/fabric.h"

#include <cmath>

#include "core/error.h"

namespace chakrasim::network {

const char* fabric_node_kind_name(FabricNodeKind kind) {
  switch (kind) {
    case FabricNodeKind::kNpu: return "NPU";
    case FabricNodeKind::kScaleUpSwitch: return "scale-up switch";
    case FabricNodeKind::kScaleOutSwitch: return "scale-out switch";
  }
  return "node";
}

std::uint32_t Fabric::add_node(FabricNodeKind kind) {
  const auto id = static_cast<std::uint32_t>(kinds_.size());
  kinds_.push_back(kind);
  npu_of_node_.push_back(kind == FabricNodeKind::kNpu ? static_cast<std::uint32_t>(npu_nodes_.size()) : 0);
  if (kind == FabricNodeKind::kNpu) npu_nodes_.push_back(id);
  return id;
}

std::uint32_t Fabric::add_link(std::uint32_t from, std::uint32_t to, double bytes_per_ns, double latency_ns) {
  links_.push_back({from, to, bytes_per_ns, latency_ns});
  return static_cast<std::uint32_t>(links_.size() - 1);
}

void Fabric::add_cable(std::uint32_t a, std::uint32_t b, double bytes_per_ns, double latency_ns) {
  add_link(a, b, bytes_per_ns, latency_ns);
  add_link(b, a, bytes_per_ns, latency_ns);
}

std::string Fabric::node_name(std::uint32_t node) const {
  if (kinds_[node] == FabricNodeKind::kNpu) return fmt::format("NPU {} (node {})", npu_of_node_[node], node);
  return fmt::format("{} {}", fabric_node_kind_name(kinds_[node]), node);
}

std::string Fabric::link_name(std::uint32_t id) const {
  return fmt::format("{} -> {}", node_name(links_[id].from), node_name(links_[id].to));
}

std::string Fabric::link_or_nic_name(std::uint32_t id) const {
  if (id < link_count()) return link_name(id);
  const std::uint32_t nic = id - link_count();
  return nic < npu_count() ? fmt::format("NPU {} NIC out", nic) : fmt::format("NPU {} NIC in", nic - npu_count());
}

void Fabric::finish(const std::string& source) {
  const std::uint32_t n = node_count();
  if (npu_nodes_.empty()) fail("{}: the fabric has no NPUs; expected at least one non-switch node", source);
  out_begin_.assign(n + 1, 0);
  for (std::uint32_t id = 0; id < links_.size(); ++id) {
    const FabricLink& l = links_[id];
    if (l.from >= n || l.to >= n) {
      fail("{}: link {} joins nodes {} and {}; expected node ids below {}", source, id, l.from, l.to, n);
    }
    if (l.from == l.to) fail("{}: link {} joins node {} to itself; expected two distinct nodes", source, id, l.from);
    if (!(l.bytes_per_ns > 0) || !std::isfinite(l.bytes_per_ns)) {
      fail("{}: link {} ({}): bandwidth {} GB/s; expected a positive number", source, id, link_name(id),
           l.bytes_per_ns);
    }
    if (!(l.latency_ns >= 0) || !std::isfinite(l.latency_ns)) {
      fail("{}: link {} ({}): latency {} ns; expected a number of ns, 0 or more", source, id, link_name(id),
           l.latency_ns);
    }
    ++out_begin_[l.from + 1];
  }
  for (std::uint32_t v = 0; v < n; ++v) out_begin_[v + 1] += out_begin_[v];
  out_.assign(links_.size(), 0);
  std::vector<std::uint32_t> fill(out_begin_.begin(), out_begin_.end() - 1);
  for (std::uint32_t id = 0; id < links_.size(); ++id) out_[fill[links_[id].from]++] = id;

  // Every NPU reaches every other: NPU 0 reaches all NPUs, and all NPUs reach NPU 0 (the links
  // are directed, so both ways are searched), passing through NPUs only where they forward.
  auto reached = [&](bool forward) {
    std::vector<std::vector<std::uint32_t>> reverse;
    if (!forward) {
      reverse.resize(n);
      for (std::uint32_t id = 0; id < links_.size(); ++id) reverse[links_[id].to].push_back(links_[id].from);
    }
    std::vector<char> seen(n, 0);
    std::vector<std::uint32_t> stack{npu_nodes_.front()};
    seen[npu_nodes_.front()] = 1;
    while (!stack.empty()) {
      const std::uint32_t v = stack.back();
      stack.pop_back();
      auto visit = [&](std::uint32_t w) {
        if (seen[w]) return;
        seen[w] = 1;
        // Through switches only, unless NPUs forward (as routes go: network/fabric/routing.h).
        if (npus_forward_ || kinds_[w] != FabricNodeKind::kNpu) stack.push_back(w);
      };
      if (forward) {
        for (std::uint32_t id : out_links(v)) visit(links_[id].to);
      } else {
        for (std::uint32_t w : reverse[v]) visit(w);
      }
    }
    return seen;
  };
  for (const bool forward : {true, false}) {
    const std::vector<char> seen = reached(forward);
    for (NpuId npu = 0; npu < npu_count(); ++npu) {
      if (seen[npu_nodes_[npu]]) continue;
      fail("{}: {} cannot {} NPU 0 through the fabric's links; expected every NPU to reach every other", source,
           node_name(npu_nodes_[npu]), forward ? "be reached from" : "reach");
    }
  }
}

}  // namespace chakrasim::network
