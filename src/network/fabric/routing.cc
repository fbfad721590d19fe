#include "network/fabric/routing.h"

#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"
#include "core/splitmix.h"

namespace chakrasim::network {
namespace {

constexpr std::uint16_t kUnreached = std::numeric_limits<std::uint16_t>::max();

}  // namespace

EcmpRouter::EcmpRouter(const Fabric& fabric, RoutingSpec spec)
    : fabric_(fabric), spec_(std::move(spec)), in_links_(fabric.node_count()), next_hops_(fabric.node_count()) {
  if (fabric.link_count() >= kOne) {
    throw Error(fmt::format("routing: {} links; expected fewer than {} (next hops name them in 31 bits)",
                            fabric.link_count(), kOne));
  }
  for (std::uint32_t id = 0; id < fabric.link_count(); ++id) in_links_[fabric.link(id).to].push_back(id);
  out_begin_.push_back(0);
  for (std::uint32_t node = 0; node < fabric.node_count(); ++node) {
    for (std::uint32_t id : fabric.out_links(node)) out_.push_back({id, fabric.link(id).to});
    forwards_.push_back(fabric.npus_forward() || fabric.kind(node) != FabricNodeKind::kNpu ? 1 : 0);
    out_begin_.push_back(static_cast<std::uint32_t>(out_.size()));
  }
  destinations_.resize(fabric.npu_count());
  for (NpuId npu = 0; npu < fabric.npu_count(); ++npu) {
    const std::vector<std::uint32_t>& in = in_links_[fabric.npu_node(npu)];
    const bool one_from_switch = in.size() == 1 && fabric.kind(fabric.link(in[0]).from) != FabricNodeKind::kNpu;
    destinations_[npu] =
        one_from_switch ? Destination{in[0], fabric.link(in[0]).from} : Destination{kNoLink, fabric.npu_node(npu)};
  }
}

std::size_t EcmpRouter::SlotsHash::operator()(const std::vector<std::uint32_t>& slots) const {
  std::uint64_t h = slots.size();
  for (std::uint32_t k : slots) h = splitmix64(h ^ k);
  return static_cast<std::size_t>(h);
}

std::uint32_t EcmpRouter::intern_hop_list(const std::vector<std::uint32_t>& slots) const {
  const auto it = hop_list_of_.find(slots);
  if (it != hop_list_of_.end()) return it->second;
  const std::size_t offset = hop_lists_.size();
  if (offset + 1 + slots.size() >= kOne) {
    throw Error(fmt::format("routing: more than {} entries of next hops; expected fewer (offsets are 31 bits)", kOne));
  }
  hop_lists_.push_back(static_cast<std::uint32_t>(slots.size()));
  hop_lists_.insert(hop_lists_.end(), slots.begin(), slots.end());
  hop_list_of_.emplace(slots, static_cast<std::uint32_t>(offset));
  return static_cast<std::uint32_t>(offset);
}

const std::vector<std::uint32_t>& EcmpRouter::next_hops_to(std::uint32_t node) const {
  if (!next_hops_[node].empty()) return next_hops_[node];
  // Hops to `node` from every node, by a breadth-first search over the reversed links.
  std::vector<std::uint16_t> d(fabric_.node_count(), kUnreached);
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
  // Each node's candidates: the links one hop closer, in link order. An NPU that does not
  // forward is as close as its own links make it, but is no way through: only the destination
  // itself. A reached node has one at least: the node it was reached from.
  std::vector<std::uint32_t> entries(fabric_.node_count(), kNoHop), slots;
  for (std::uint32_t at = 0; at < fabric_.node_count(); ++at) {
    if (at == node || d[at] == kUnreached || out_begin_[at + 1] - out_begin_[at] == 1) continue;
    slots.clear();
    for (std::uint32_t k = out_begin_[at]; k < out_begin_[at + 1]; ++k) {
      const std::uint32_t to = out_[k].to;
      if (d[to] == d[at] - 1 && (forwards_[to] != 0 || to == node)) slots.push_back(k);
    }
    entries[at] = slots.size() == 1 ? kOne | slots[0] : intern_hop_list(slots);
  }
  next_hops_[node] = std::move(entries);  // kept only when complete
  return next_hops_[node];
}

std::uint32_t EcmpRouter::hops(NpuId src, NpuId dst) const {
  const auto [last, target] = destinations_[dst];
  const std::vector<std::uint32_t>& next = next_hops_to(target);
  std::uint32_t count = last == kNoLink ? 0 : 1;
  // Every candidate is a hop closer: follow the first.
  for (std::uint32_t at = fabric_.npu_node(src); at != target; ++count) {
    std::uint32_t k = out_begin_[at];
    if (out_begin_[at + 1] != k + 1) k = (next[at] & kOne) != 0 ? next[at] & ~kOne : hop_lists_[next[at] + 1];
    at = out_[k].to;
  }
  return count;
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
  // the switch, then take it. The same choices, from a table per switch rather than per NPU (128
  // rather than 1024 on a k = 16 fat-tree: they stay in cache).
  const auto [last, target] = destinations_[dst];
  const std::vector<std::uint32_t>& next = next_hops_to(target);
  std::uint32_t at = fabric_.npu_node(src);
  const std::uint64_t flow = splitmix64(flow_key ^ splitmix64(spec_.seed));
  std::uint64_t divisor = 1;  // d-mod-k: the product of the earlier choices' candidate counts
  // Fabric::finish checked that every NPU reaches every other: each node on the way has a
  // candidate. Where it has one only, the pick is that one (ECMP's hash mod 1, d-mod-k's divisor
  // times 1): a node of one link (an NPU behind a switch) is not even looked up.
  while (at != target) {
    std::uint32_t k = out_begin_[at];
    if (out_begin_[at + 1] != k + 1) {
      const std::uint32_t entry = next[at];
      if ((entry & kOne) != 0) {
        k = entry & ~kOne;
      } else {
        const std::uint32_t candidates = hop_lists_[entry];
        std::uint64_t pick = 0;
        if (spec_.kind == RoutingKind::kEcmp) {
          pick = splitmix64(flow ^ at) % candidates;
        } else {
          pick = (dst / divisor) % candidates;
          // Past the NPU count every further choice would be the first: stop growing.
          divisor = std::min<std::uint64_t>(divisor * candidates, std::uint64_t{1} << 40);
        }
        k = hop_lists_[entry + 1 + pick];
      }
    }
    links.push_back(out_[k].link);
    at = out_[k].to;
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
      const auto node = parse_number<std::uint64_t>(word);
      if (!node || *node >= fabric.node_count()) {
        fail("{}: line {}: \"{}\" is not a node of the topology; expected node ids 0 to {}", source, line_number, word,
             fabric.node_count() - 1);
      }
      nodes.push_back(static_cast<std::uint32_t>(*node));
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
