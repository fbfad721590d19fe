// Fabrics a user names with a few parameters instead of drawing them link by link.
//
// Switched clusters are built from one description, a generalised fat-tree (XGFT(h; m; w)):
// level 0 are the NICs, and tier i (1..h) are switches, each with m[i] children below it, while
// every node below tier h has w[i+1] parents above it. A tier is oversubscribed by
// m[i] / w[i+1] (down-links over up-links). So:
//   leaf-spine, 32 NICs per leaf, 16 leaves, non-blocking:   m = {32, 16}, w = {1, 32}
//   the same at 2:1:                                          m = {32, 16}, w = {1, 16}
//   3-tier k = 8 fat-tree (128 NICs):                          m = {4, 4, 8}, w = {1, 4, 4}
// Around it, a server can hold several NPUs joined by a scale-up switch (NVSwitch), each NPU
// with its own NIC; rail-optimised puts NIC r of every server under the leaves of rail r; and
// several planes give every NPU one NIC in each of several identical, separate fabrics.
//
// A torus joins NPUs directly, each to its neighbours in every dimension (wrapping round), and
// its NPUs forward traffic.
#pragma once

#include <cstdint>
#include <vector>

#include "network/fabric/fabric.h"
#include "network/topology.h"

namespace chakrasim::network {

struct LinkSpec {
  double bytes_per_ns = 0;
  double latency_ns = 0;
};

struct SwitchedClusterSpec {
  std::uint32_t npus = 0;
  // The XGFT over NICs: children per switch of tier i (m[i-1]) and parents per node of tier
  // i-1 (w[i-1]); m.size() == w.size() == tiers. The product of m must be the NIC count of one
  // plane (npus), and a cluster smaller than the tree leaves the last ports empty.
  std::vector<std::uint32_t> children;  // m
  std::vector<std::uint32_t> parents;   // w
  std::vector<LinkSpec> tier_links;     // the links up from tier i-1 (index 0: NIC to leaf)
  // A scale-up domain per server: npus_per_server NPUs on one scale-up switch (1: none).
  std::uint32_t npus_per_server = 1;
  LinkSpec scale_up;
  bool rail_optimised = false;  // NIC r of each server under rail r's leaves
  std::uint32_t planes = 1;     // separate scale-out fabrics; each NIC link gets 1/planes of tier_links[0]
};

// Throws Error naming the parameter that does not fit (`source` first).
Fabric switched_cluster(const SwitchedClusterSpec& spec, const std::string& source);

// A balanced dragonfly: `groups` groups (default routers x global_links + 1, one global link
// between every two groups) of `routers` routers joined all to all, each router with `npus`
// NPUs and `global_links` links to other groups. Group G's global link j (router j / h, port
// j % h) goes to group (G + j + 1) mod groups.
struct DragonflySpec {
  std::uint32_t routers = 0;       // per group (a)
  std::uint32_t npus = 0;          // per router (p)
  std::uint32_t global_links = 0;  // per router (h)
  std::uint32_t groups = 0;        // 0: a x h + 1
  LinkSpec nic, local, global;
};
Fabric dragonfly(const DragonflySpec& spec, const std::string& source);

// A torus of dims[0] x dims[1] x ... NPUs (dimension 0 varies fastest, as network/topology.h
// numbers ranks); a dimension of 2 has one cable between the two, of 1 none.
Fabric torus(const std::vector<std::uint32_t>& dims, const LinkSpec& link, const std::string& source);

}  // namespace chakrasim::network

namespace chakrasim::network {

// The analytical network's dimensions drawn as a graph, for the backends that route through one:
// a Ring joins each NPU to its neighbours (a cable each way round), a FullyConnected group every
// pair, a Switch dimension gets one switch per group of NPUs; each link has the dimension's
// bandwidth and per-hop latency. NPUs forward (a message crossing dimensions passes through them,
// as it does in the analytical backends).
Fabric fabric_of_dimensions(const Topology& topology);

}  // namespace chakrasim::network
