// Routes through a Fabric: shortest paths by hop count, with equal-cost multi-path (ECMP)
// choices made per flow. At each node on the way the flow takes one of the links that bring it a
// hop closer, picked by
//  * ECMP (the default): a hash of the flow's key, the node and a seed: one flow keeps one path
//    (no reordering), different flows spread over the equal paths at random, and the same seed
//    gives the same routes on every run and machine. Hashing collides: two flows leaving a leaf
//    may share one of its up-links while another idles, as on real Ethernet fabrics.
//  * d-mod-k: the destination alone, as InfiniBand fat-tree routing does: at the i-th choice on
//    the way, among c candidates (in link order), the one numbered (dst / c_1 / ... / c_{i-1})
//    mod c, where c_j are the earlier choices' candidate counts. On a fat-tree numbered leaf by
//    leaf, the NPUs under one leaf then leave it by distinct up-links when they send to distinct
//    consecutive NPUs, so a shift permutation runs without collisions.
//  * fixed routes, given per pair of NPUs (a routes file): pairs not listed are routed as above.
//
// The first time a route to a destination is asked for, one breadth-first search over the
// reversed links finds every node's distance to it, and from those each node's candidates: the
// links one hop closer, in link order. Those are kept, not the distances, so that a hop is one
// lookup and a choice rather than a look at every link: per destination, per node, 4 bytes
// naming its one candidate or its list of several, each distinct list kept once (they repeat
// across destinations: on a fat-tree a switch's list of several is its up-links, whatever the
// destination). Worst case nodes x destinations x 4 bytes, twice what the distances took (5.5 MB
// for 1024 NPUs on a 1344-node fat-tree; 0.7 MB when, as there, each NPU hangs off one switch by
// one cable and routes go to the switch: see route()).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "network/fabric/fabric.h"

namespace chakrasim::network {

enum class RoutingKind : std::uint8_t { kEcmp, kDestinationModK };

// A route fixed by the user: the links from one NPU to another, first link first.
using FixedRoutes = std::unordered_map<std::uint64_t, std::vector<std::uint32_t>>;
inline std::uint64_t route_key(NpuId src, NpuId dst) { return (std::uint64_t{src} << 32) | dst; }

struct RoutingSpec {
  RoutingKind kind = RoutingKind::kEcmp;
  std::uint64_t seed = 1;  // ECMP's hash seed
  std::shared_ptr<const FixedRoutes> fixed = nullptr;
};

// Reads a routes file: one route per line, the fabric's node ids from the source NPU's node to
// the destination NPU's node ("0 1030 1040 1031 7"), each step over a link of `fabric` (the first
// such link where cables run in parallel); '#' starts a comment. Throws Error naming the file and
// line for a step without a link, a route that does not start and end at NPUs, or a pair given
// twice.
FixedRoutes read_fixed_routes(const std::string& text, const std::string& source, const Fabric& fabric);

class EcmpRouter {
 public:
  EcmpRouter(const Fabric& fabric, std::uint64_t seed) : EcmpRouter(fabric, RoutingSpec{.seed = seed}) {}
  EcmpRouter(const Fabric& fabric, RoutingSpec spec);

  // The links from NPU `src` to NPU `dst` (src != dst) for the flow `flow_key`, first link first,
  // appended to `links` after clearing it.
  void route(NpuId src, NpuId dst, std::uint64_t flow_key, std::vector<std::uint32_t>& links) const;

  // Hops on a shortest path from NPU `src` to NPU `dst`.
  std::uint32_t hops(NpuId src, NpuId dst) const;

 private:
  static constexpr std::uint32_t kNoLink = 0xffffffffu;
  // Per NPU, found once rather than per route (a route would miss the cache on each): the one
  // link into it when it has one only, from a switch (kNoLink otherwise), and where routes to it
  // go before that link: its switch, or its own node.
  struct Destination {
    std::uint32_t last = kNoLink;
    std::uint32_t target = 0;
  };
  // A node's entry in a next-hop table: kNoHop at the destination, where it is not reached, and
  // at a node of one link (whose one candidate that is: never looked up); kOne | slot for one
  // candidate; otherwise the offset in hop_lists_ of the candidates.
  static constexpr std::uint32_t kNoHop = 0xffffffffu;
  static constexpr std::uint32_t kOne = 0x80000000u;
  // Per node, its entry towards `node`: built the first time a route there is asked for.
  const std::vector<std::uint32_t>& next_hops_to(std::uint32_t node) const;
  std::uint32_t intern_hop_list(const std::vector<std::uint32_t>& slots) const;

  const Fabric& fabric_;
  RoutingSpec spec_;
  std::vector<std::vector<std::uint32_t>> in_links_;  // per node, the links entering it
  // The links leaving each node and where they go, side by side (out_begin_[node] on, a node's
  // "slots"): what a route's every hop reads, without visiting the links.
  struct Out {
    std::uint32_t link = 0;
    std::uint32_t to = 0;
  };
  std::vector<std::uint32_t> out_begin_;
  std::vector<Out> out_;
  std::vector<Destination> destinations_;
  std::vector<char> forwards_;  // per node: a route may pass through it (a switch, or an NPU of a torus)
  // Per destination node, once asked: per node, its entry (above).
  mutable std::vector<std::vector<std::uint32_t>> next_hops_;
  // Lists of two candidates or more, each distinct one once: the count, then the slots.
  mutable std::vector<std::uint32_t> hop_lists_;
  // A list's offset in hop_lists_, by its slots: finds a repeat.
  struct SlotsHash {
    std::size_t operator()(const std::vector<std::uint32_t>& slots) const;
  };
  mutable std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, SlotsHash> hop_list_of_;
};

}  // namespace chakrasim::network
