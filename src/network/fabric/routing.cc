#include "network/fabric/routing.h"

#include <limits>

namespace chakrasim::network {
namespace {

constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();

// splitmix64's finaliser: every input bit moves every output bit, so neighbouring flow keys and
// nodes pick independently.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

EcmpRouter::EcmpRouter(const Fabric& fabric, std::uint64_t seed)
    : fabric_(fabric), seed_(seed), in_links_(fabric.node_count()) {
  for (std::uint32_t id = 0; id < fabric.link_count(); ++id) in_links_[fabric.link(id).to].push_back(id);
}

const std::vector<std::uint32_t>& EcmpRouter::distances_to(std::uint32_t node) const {
  auto [at, added] = distances_.try_emplace(node);
  std::vector<std::uint32_t>& d = at->second;
  if (!added) return d;
  d.assign(fabric_.node_count(), kUnreached);
  std::vector<std::uint32_t> frontier{node}, next;
  d[node] = 0;
  for (std::uint32_t hop = 1; !frontier.empty(); ++hop) {
    next.clear();
    for (std::uint32_t v : frontier) {
      for (std::uint32_t id : in_links_[v]) {
        const std::uint32_t u = fabric_.link(id).from;
        if (d[u] != kUnreached) continue;
        d[u] = hop;
        // An NPU is a route's end, not a hop on it, unless the fabric's NPUs forward (a torus).
        if (fabric_.npus_forward() || fabric_.kind(u) != FabricNodeKind::kNpu) next.push_back(u);
      }
    }
    frontier.swap(next);
  }
  return d;
}

std::uint32_t EcmpRouter::hops(NpuId src, NpuId dst) const {
  return distances_to(fabric_.npu_node(dst))[fabric_.npu_node(src)];
}

void EcmpRouter::route(NpuId src, NpuId dst, std::uint64_t flow_key, std::vector<std::uint32_t>& links) const {
  links.clear();
  const std::uint32_t target = fabric_.npu_node(dst);
  const std::vector<std::uint32_t>& d = distances_to(target);
  std::uint32_t at = fabric_.npu_node(src);
  const std::uint64_t flow = mix(flow_key ^ mix(seed_));
  while (at != target) {
    // The links one hop closer; Fabric::finish checked that every NPU reaches every other.
    std::uint32_t candidates = 0;
    for (std::uint32_t id : fabric_.out_links(at)) candidates += d[fabric_.link(id).to] + 1 == d[at];
    std::uint64_t pick = mix(flow ^ at) % candidates;
    for (std::uint32_t id : fabric_.out_links(at)) {
      if (d[fabric_.link(id).to] + 1 != d[at]) continue;
      if (pick-- == 0) {
        links.push_back(id);
        at = fabric_.link(id).to;
        break;
      }
    }
  }
}

}  // namespace chakrasim::network
