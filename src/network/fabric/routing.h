// Routes through a Fabric: shortest paths by hop count, with equal-cost multi-path (ECMP)
// choices made per flow. At each node on the way the flow takes one of the links that bring it a
// hop closer, picked by a hash of the flow's key, the node and a seed: one flow keeps one path
// (no reordering), different flows spread over the equal paths, and the same seed gives the same
// routes on every run and machine.
//
// Distances to a destination are found by one breadth-first search over the reversed links the
// first time a route to it is asked for, and kept: nodes x destinations x 4 bytes in the worst
// case (5 MB for 1024 NPUs on a 1280-node fat-tree).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "network/fabric/fabric.h"

namespace chakrasim::network {

class EcmpRouter {
 public:
  EcmpRouter(const Fabric& fabric, std::uint64_t seed);

  // The links from NPU `src` to NPU `dst` (src != dst) for the flow `flow_key`, first link first,
  // appended to `links` after clearing it.
  void route(NpuId src, NpuId dst, std::uint64_t flow_key, std::vector<std::uint32_t>& links) const;

  // Hops on a shortest path from NPU `src` to NPU `dst`.
  std::uint32_t hops(NpuId src, NpuId dst) const;

 private:
  const std::vector<std::uint32_t>& distances_to(std::uint32_t node) const;

  const Fabric& fabric_;
  std::uint64_t seed_;
  std::vector<std::vector<std::uint32_t>> in_links_;  // per node, the links entering it
  mutable std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> distances_;
};

}  // namespace chakrasim::network
