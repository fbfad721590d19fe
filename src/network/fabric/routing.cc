#include "network/fabric/routing.h"

#include <array>
#include <charconv>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/splitmix.h"

namespace chakrasim::network {
namespace {

constexpr std::uint16_t kUnreached = std::numeric_limits<std::uint16_t>::max();

}  // namespace

EcmpRouter::EcmpRouter(const Fabric& fabric, RoutingSpec spec)
    : fabric_(fabric), spec_(std::move(spec)), in_links_(fabric.node_count()), distances_(fabric.node_count()) {
  for (std::uint32_t id = 0; id < fabric.link_count(); ++id) in_links_[fabric.link(id).to].push_back(id);
  out_begin_.push_back(0);
  for (std::uint32_t node = 0; node < fabric.node_count(); ++node) {
    for (std::uint32_t id : fabric.out_links(node)) {
      out_link_.push_back(id);
      out_to_.push_back(fabric.link(id).to);
    }
    forwards_.push_back(fabric.npus_forward() || fabric.kind(node) != FabricNodeKind::kNpu ? 1 : 0);
    out_begin_.push_back(static_cast<std::uint32_t>(out_link_.size()));
  }
}

const std::vector<std::uint16_t>& EcmpRouter::distances_to(std::uint32_t node) const {
  if (!distances_[node].empty()) return distances_[node];
  std::vector<std::uint16_t> d(fabric_.node_count(), kUnreached);  // kept only when complete
  std::vector<std::uint32_t> frontier{node}, next;
  d[node] = 0;
  for (std::uint32_t hop = 1; !frontier.empty(); ++hop) {
    if (hop >= kUnreached) {
      throw Error(fmt::format("routing to {}: a shortest path of more than {} hops; expected fewer (distances are kept "
                              "in 16 bits)",
                              fabric_.node_name(node), kUnreached - 1));
    }
    next.clear();
    for (std::uint32_t v : frontier) {
      for (std::uint32_t id : in_links_[v]) {
        const std::uint32_t u = fabric_.link(id).from;
        if (d[u] != kUnreached) continue;
        d[u] = static_cast<std::uint16_t>(hop);
        // An NPU is a route's end, not a hop on it, unless the fabric's NPUs forward (a torus).
        if (fabric_.npus_forward() || fabric_.kind(u) != FabricNodeKind::kNpu) next.push_back(u);
      }
    }
    frontier.swap(next);
  }
  distances_[node] = std::move(d);
  return distances_[node];
}

std::uint32_t EcmpRouter::last_link_into(NpuId dst) const {
  const std::vector<std::uint32_t>& in = in_links_[fabric_.npu_node(dst)];
  if (in.size() != 1 || fabric_.kind(fabric_.link(in[0]).from) == FabricNodeKind::kNpu) return kNoLink;
  return in[0];
}

std::uint32_t EcmpRouter::hops(NpuId src, NpuId dst) const {
  const std::uint32_t last = last_link_into(dst);
  if (last == kNoLink) return distances_to(fabric_.npu_node(dst))[fabric_.npu_node(src)];
  return distances_to(fabric_.link(last).from)[fabric_.npu_node(src)] + 1u;
}

void EcmpRouter::route(NpuId src, NpuId dst, std::uint64_t flow_key, std::vector<std::uint32_t>& links) const {
  links.clear();
  if (spec_.fixed) {
    const auto it = spec_.fixed->find(route_key(src, dst));
    if (it != spec_.fixed->end()) {
      links = it->second;
      return;
    }
  }
  // Every shortest path into an NPU of one cable (from a switch) ends with that cable: route to
  // the switch, then take it. The same choices, from a distance table per switch rather than per
  // NPU (64 rather than 1024 on a k = 16 fat-tree: they stay in cache).
  const std::uint32_t last = last_link_into(dst);
  const std::uint32_t target = last == kNoLink ? fabric_.npu_node(dst) : fabric_.link(last).from;
  const std::vector<std::uint16_t>& d = distances_to(target);
  std::uint32_t at = fabric_.npu_node(src);
  const std::uint64_t flow = splitmix64(flow_key ^ splitmix64(spec_.seed));
  std::uint64_t divisor = 1;  // d-mod-k: the product of the earlier choices' candidate counts
  // Each hop's candidates, remembered in one pass (a node of more links is looked at twice).
  std::array<std::uint32_t, 64> found{};
  while (at != target) {
    // The links one hop closer; Fabric::finish checked that every NPU reaches every other.
    const std::uint32_t closer = d[at] - 1, begin = out_begin_[at], end = out_begin_[at + 1];
    // An NPU that does not forward is as close as its own links make it, but is no way through:
    // only the destination itself.
    auto one_hop_closer = [&](std::uint32_t k) {
      return d[out_to_[k]] == closer && (forwards_[out_to_[k]] != 0 || out_to_[k] == target);
    };
    std::uint32_t candidates = 0;
    for (std::uint32_t k = begin; k < end; ++k) {
      if (!one_hop_closer(k)) continue;
      if (candidates < found.size()) found[candidates] = k;
      ++candidates;
    }
    std::uint64_t pick = 0;
    if (spec_.kind == RoutingKind::kEcmp) {
      pick = splitmix64(flow ^ at) % candidates;
    } else {
      pick = (dst / divisor) % candidates;
      // Past the NPU count every further choice would be the first: stop growing.
      divisor = std::min<std::uint64_t>(divisor * candidates, std::uint64_t{1} << 40);
    }
    if (candidates <= found.size()) {
      const std::uint32_t k = found[pick];
      links.push_back(out_link_[k]);
      at = out_to_[k];
      continue;
    }
    for (std::uint32_t k = begin; k < end; ++k) {
      if (!one_hop_closer(k)) continue;
      if (pick-- == 0) {
        links.push_back(out_link_[k]);
        at = out_to_[k];
        break;
      }
    }
  }
  if (last != kNoLink) links.push_back(last);
}

}  // namespace chakrasim::network

namespace chakrasim::network {

FixedRoutes read_fixed_routes(const std::string& text, const std::string& source, const Fabric& fabric) {
  std::vector<std::int64_t> npu_of(fabric.node_count(), -1);
  for (NpuId r = 0; r < fabric.npu_count(); ++r) npu_of[fabric.npu_node(r)] = r;
  FixedRoutes routes;
  std::size_t line_number = 0, begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream in(line);
    std::vector<std::uint32_t> nodes;
    std::string word;
    while (in >> word) {
      std::uint64_t node = 0;
      const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), node);
      if (ec != std::errc() || ptr != word.data() + word.size() || node >= fabric.node_count()) {
        fail("{}: line {}: \"{}\" is not a node of the topology; expected node ids 0 to {}", source, line_number, word,
             fabric.node_count() - 1);
      }
      nodes.push_back(static_cast<std::uint32_t>(node));
    }
    if (nodes.empty()) continue;
    if (nodes.size() < 2 || npu_of[nodes.front()] < 0 || npu_of[nodes.back()] < 0 || nodes.front() == nodes.back()) {
      fail("{}: line {}: expected a route from one NPU's node to another's, through the nodes between", source,
           line_number);
    }
    std::vector<std::uint32_t> links;
    for (std::size_t k = 0; k + 1 < nodes.size(); ++k) {
      constexpr std::uint32_t kNoLink = std::numeric_limits<std::uint32_t>::max();
      std::uint32_t found = kNoLink;
      for (std::uint32_t id : fabric.out_links(nodes[k])) {
        if (fabric.link(id).to == nodes[k + 1]) {
          found = id;
          break;
        }
      }
      if (found == kNoLink) {
        fail("{}: line {}: no link from node {} to node {}; expected each step of a route over a link", source,
             line_number, nodes[k], nodes[k + 1]);
      }
      if (k > 0 && fabric.kind(nodes[k]) == FabricNodeKind::kNpu && !fabric.npus_forward()) {
        fail("{}: line {}: the route passes through NPU node {}, and this topology's NPUs do not forward", source,
             line_number, nodes[k]);
      }
      links.push_back(found);
    }
    const auto src = static_cast<NpuId>(npu_of[nodes.front()]), dst = static_cast<NpuId>(npu_of[nodes.back()]);
    if (!routes.emplace(route_key(src, dst), std::move(links)).second) {
      fail("{}: line {}: a second route from NPU {} to NPU {}; expected one route per pair", source, line_number, src,
           dst);
    }
  }
  return routes;
}

}  // namespace chakrasim::network
