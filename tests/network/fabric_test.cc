// Fabrics as graphs (network/fabric): the topology text files (ASTRA-sim's Custom, ns-3's and
// SimAI's), the generators, and ECMP routing over them.
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/splitmix.h"
#include "network/fabric/fabric.h"
#include "network/fabric/fabric_text.h"
#include "network/fabric/generators.h"
#include "network/fabric/routing.h"
#include "support/test_support.h"

namespace chakrasim::network {
namespace {

using ::chakrasim::test::error_of;
using ::testing::HasSubstr;

// Four NPUs (0-3) under one switch (4), ns-3 style: each line a cable.
constexpr const char* kStar = "5 1 4\n4\n0 4 400Gbps 0.0005ms 0\n1 4 400Gbps 0.0005ms 0\n2 4 400Gbps 500ns 0\n"
                              "3 4 400Gbps 0.5us 0\n";

TEST(FabricText, Ns3FormIsCables) {
  const Fabric f = parse_fabric_text(kStar, "star.txt");
  EXPECT_EQ(f.node_count(), 5u);
  EXPECT_EQ(f.npu_count(), 4u);
  EXPECT_EQ(f.kind(4), FabricNodeKind::kScaleOutSwitch);
  ASSERT_EQ(f.link_count(), 8u);  // a cable is two links
  // 400 Gbps = 50 bytes per ns; 0.0005 ms = 0.5 us = 500 ns.
  for (const FabricLink& l : f.links()) {
    EXPECT_EQ(l.bytes_per_ns, 50.0);
    EXPECT_EQ(l.latency_ns, 500.0);
  }
  EXPECT_EQ(f.link(0).from, 0u);
  EXPECT_EQ(f.link(1).from, 4u);
}

// ASTRA-sim's Custom topology lists both directions: each line is then one directed link.
TEST(FabricText, BothDirectionsListedAreDirectedLinks) {
  const Fabric f = parse_fabric_text("3 1 4\n2\n0 2 100Gbps 1ns 0\n2 0 100Gbps 1ns 0\n1 2 100Gbps 1ns 0\n"
                                     "2 1 200Gbps 1ns 0\n",
                                     "custom.txt");
  ASSERT_EQ(f.link_count(), 4u);
  EXPECT_EQ(f.link(3).bytes_per_ns, 25.0);  // 200 Gbps, one direction only
  EXPECT_EQ(f.link(2).bytes_per_ns, 12.5);
}

TEST(FabricText, MixedFormsAreRefusedNamingALine) {
  EXPECT_THAT(error_of([] {
                parse_fabric_text("3 1 3\n2\n0 2 100Gbps 1ns 0\n2 0 100Gbps 1ns 0\n1 2 100Gbps 1ns 0\n", "mixed.txt");
              }),
              HasSubstr("mixed.txt: line 5: the link 1 -> 2 is listed without its reverse"));
}

// SimAI: nodes, GPUs per server, NVSwitches, other switches, links, GPU type; NVSwitch ids first.
TEST(FabricText, SimAiHeadMustAgreeWithTheBody) {
  EXPECT_THAT(error_of([] {
                parse_fabric_text("5 2 1 1 4 H100\n2 4\n0 2 2880Gbps 0.000025ms 0\n1 2 2880Gbps 0.000025ms 0\n"
                                  "0 4 400Gbps 0.0005ms 0\n1 4 400Gbps 0.0005ms 0\n3 4 400Gbps 0.0005ms 0\n",
                                  "simai.txt");
              }),
              HasSubstr("simai.txt: line 1 says 4 links but the file lists 5"));
}

TEST(FabricText, SimAiFormRoles) {
  const Fabric f = parse_fabric_text("5 2 1 1 5 H100\n2 4\n0 2 2880Gbps 0.000025ms 0\n1 2 2880Gbps 0.000025ms 0\n"
                                     "0 4 400Gbps 0.0005ms 0\n1 4 400Gbps 0.0005ms 0\n3 4 400Gbps 0.0005ms 0\n",
                                     "simai.txt");
  EXPECT_EQ(f.npu_count(), 3u);  // nodes 0, 1, 3
  EXPECT_EQ(f.npu_node(2), 3u);
  EXPECT_EQ(f.kind(2), FabricNodeKind::kScaleUpSwitch);
  EXPECT_EQ(f.kind(4), FabricNodeKind::kScaleOutSwitch);
  EXPECT_EQ(f.link(0).bytes_per_ns, 360.0);  // 2880 Gbps
  EXPECT_EQ(f.link(0).latency_ns, 25.0);
}

TEST(FabricText, ErrorsNameTheFileAndLine) {
  EXPECT_THAT(error_of([] { parse_fabric_text("", "e.txt"); }), HasSubstr("e.txt: the topology file is empty"));
  // A header cannot make the reader allocate for a billion nodes.
  EXPECT_THAT(error_of([] { parse_fabric_text("1000000000 1 1\n", "e.txt"); }), HasSubstr("e.txt: line 1: node count "
                                                                                          "\"1000000000\"; expected a "
                                                                                          "whole number up to "
                                                                                          "67108864"));
  EXPECT_THAT(error_of([] { parse_fabric_text("60000000 0 0\n", "e.txt"); }), HasSubstr("e.txt: line 1: 60000000 "
                                                                                        "nodes, but the file has only "
                                                                                        "1 lines; expected every node "
                                                                                        "to have a "
                                                                                        "link"));
  EXPECT_THAT(error_of([] { parse_fabric_text("3 1 2\n2\n0 2 100Gbps 1ns 0\n", "e.txt"); }), HasSubstr("e.txt: line 1 "
                                                                                                       "says 2 links "
                                                                                                       "but the file "
                                                                                                       "lists 1"));
  EXPECT_THAT(error_of([] { parse_fabric_text("3 1 1\n7\n0 2 100Gbps 1ns 0\n", "e.txt"); }), HasSubstr("e.txt: line 2: "
                                                                                                       "switch id "
                                                                                                       "\"7\"; "
                                                                                                       "expected a "
                                                                                                       "node id from 0 "
                                                                                                       "to 2"));
  EXPECT_THAT(error_of([] { parse_fabric_text("3 1 2\n2\n0 2 100Gbps 1ns 0\n1 2 100 1ns 0\n", "e.txt"); }),
              HasSubstr("e.txt: line 4: bandwidth \"100\" is not a bandwidth; expected a number and a unit"));
  EXPECT_THAT(error_of([] { parse_fabric_text("3 1 2\n2\n0 2 100Gbps 1ns 0\n1 2 100Gbps 1 0\n", "e.txt"); }),
              HasSubstr("e.txt: line 4: latency \"1\" is not a latency"));
  EXPECT_THAT(error_of([] { parse_fabric_text("3 1 2\n2\n0 2 100Gbps 1ns 0\n1 1 100Gbps 1ns 0\n", "e.txt"); }),
              HasSubstr("e.txt: line 4: link from node 1 to itself"));
  // NPU 1 has no link: it cannot reach NPU 0.
  EXPECT_THAT(error_of([] { parse_fabric_text("3 1 1\n2\n0 2 100Gbps 1ns 0\n", "e.txt"); }), HasSubstr("e.txt: NPU 1 "
                                                                                                       "(node 1) "
                                                                                                       "cannot be "
                                                                                                       "reached from "
                                                                                                       "NPU 0"));
}

TEST(FabricText, UnitsOfBandwidthAndTime) {
  EXPECT_EQ(parse_bandwidth_bytes_per_ns("8Gbps", "w"), 1.0);
  EXPECT_EQ(parse_bandwidth_bytes_per_ns("1GBps", "w"), 1.0);
  EXPECT_EQ(parse_bandwidth_bytes_per_ns("8000Mb/s", "w"), 1.0);
  EXPECT_EQ(parse_bandwidth_bytes_per_ns("1GiBps", "w"), 1.073741824);
  EXPECT_EQ(parse_latency_ns("1.5us", "w"), 1500.0);
  EXPECT_EQ(parse_latency_ns("2s", "w"), 2e9);
  EXPECT_EQ(parse_latency_ns("0ns", "w"), 0.0);
  EXPECT_THAT(error_of([] { parse_bandwidth_bytes_per_ns("0Gbps", "w"); }), HasSubstr("expected a positive"));
  EXPECT_THAT(error_of([] { parse_latency_ns("-1ns", "w"); }), HasSubstr("expected 0 or more"));
  EXPECT_THAT(error_of([] { parse_latency_ns("5 ns", "w"); }), HasSubstr("is not a latency"));
}

// Written out and read back, a generated fabric has the same links (the ns-3 form), and one with
// scale-up switches keeps their role (SimAI's form).
TEST(FabricText, WrittenFabricsReadBackTheSame) {
  SwitchedClusterSpec spec;
  spec.npus = 8;
  spec.children = {4, 2};
  spec.parents = {1, 2};
  spec.tier_links = {{50, 500}, {50, 600}};
  for (const std::uint32_t per_server : {1u, 4u}) {
    SCOPED_TRACE(per_server);
    spec.npus_per_server = per_server;
    spec.scale_up = {450, 25};
    const Fabric f = switched_cluster(spec, "gen");
    const Fabric back = parse_fabric_text(fabric_text(f), "back.txt");
    ASSERT_EQ(back.npu_count(), f.npu_count());
    ASSERT_EQ(back.link_count(), f.link_count());
    std::multiset<std::tuple<int, int, double, double>> want, got;
    auto kinds = [](const Fabric& g, const FabricLink& l) {
      return std::tuple<int, int, double, double>{static_cast<int>(g.kind(l.from)), static_cast<int>(g.kind(l.to)),
                                                  l.bytes_per_ns, l.latency_ns};
    };
    for (const FabricLink& l : f.links()) want.insert(kinds(f, l));
    for (const FabricLink& l : back.links()) got.insert(kinds(back, l));
    EXPECT_EQ(want, got);
  }
}

// ---- generators -------------------------------------------------------------------------------

TEST(FabricGenerators, KEightFatTreeHasTheTextbookCounts) {
  // k = 8: 128 hosts, 32 edge, 32 aggregation and 16 core switches, k/2 = 4 ports up and down.
  SwitchedClusterSpec spec;
  spec.npus = 128;
  spec.children = {4, 4, 8};
  spec.parents = {1, 4, 4};
  spec.tier_links = {{50, 100}, {50, 100}, {50, 100}};
  const Fabric f = switched_cluster(spec, "k8");
  EXPECT_EQ(f.node_count(), 128u + 32 + 32 + 16);
  EXPECT_EQ(f.link_count(), 2u * (128 + 32 * 4 + 32 * 4));
  for (std::uint32_t v = 128; v < f.node_count(); ++v) EXPECT_EQ(f.out_links(v).size(), 8u) << f.node_name(v);
  const EcmpRouter router(f, 1);
  EXPECT_EQ(router.hops(0, 1), 2u);    // same edge switch
  EXPECT_EQ(router.hops(0, 4), 4u);    // same pod
  EXPECT_EQ(router.hops(0, 127), 6u);  // through the core
}

TEST(FabricGenerators, OversubscriptionHalvesTheUplinks) {
  SwitchedClusterSpec spec;
  spec.npus = 64;
  spec.children = {16, 4};
  spec.parents = {1, 8};  // 16 down, 8 up: 2:1
  spec.tier_links = {{50, 100}, {50, 100}};
  const Fabric f = switched_cluster(spec, "2to1");
  EXPECT_EQ(f.node_count(), 64u + 4 + 8);
  EXPECT_EQ(f.out_links(64).size(), 16u + 8);  // a leaf: 16 NICs, 8 spines
  EXPECT_EQ(f.out_links(68).size(), 4u);       // a spine: the 4 leaves
}

TEST(FabricGenerators, RailOptimisedPutsEachRailUnderItsLeaf) {
  // 4 servers of 4 NPUs on a scale-up switch each; rail r of every server under leaf r.
  SwitchedClusterSpec spec;
  spec.npus = 16;
  spec.children = {4, 4};
  spec.parents = {1, 2};
  spec.tier_links = {{50, 100}, {50, 100}};
  spec.npus_per_server = 4;
  spec.scale_up = {450, 25};
  spec.rail_optimised = true;
  const Fabric f = switched_cluster(spec, "rails");
  auto leaf_of = [&](NpuId npu) {
    for (std::uint32_t id : f.out_links(f.npu_node(npu))) {
      if (f.kind(f.link(id).to) == FabricNodeKind::kScaleOutSwitch) return f.link(id).to;
    }
    return 0u;
  };
  for (NpuId server = 0; server < 4; ++server) {
    for (NpuId rail = 0; rail < 4; ++rail) EXPECT_EQ(leaf_of(server * 4 + rail), leaf_of(rail)) << server << rail;
  }
  EXPECT_NE(leaf_of(0), leaf_of(1));
  const EcmpRouter router(f, 7);
  EXPECT_EQ(router.hops(0, 4), 2u);  // same rail, other server: one leaf
  EXPECT_EQ(router.hops(0, 1), 2u);  // same server: the scale-up switch
  EXPECT_EQ(router.hops(0, 5), 4u);  // other rail, other server: a spine, never through another NPU
  // No route passes through an NPU: NPU 0 to NPU 5 could also go leaf 0, NPU 4 (server 1, rail
  // 0), its scale-up switch, NPU 5, as short, but these NPUs do not forward.
  std::vector<std::uint32_t> route;
  for (NpuId src = 0; src < 16; ++src) {
    for (NpuId dst = 0; dst < 16; ++dst) {
      for (std::uint64_t flow = 0; flow < 16 && src != dst; ++flow) {
        router.route(src, dst, flow, route);
        ASSERT_EQ(route.size(), router.hops(src, dst));
        for (std::size_t k = 1; k < route.size(); ++k) {
          ASSERT_NE(f.kind(f.link(route[k]).from), FabricNodeKind::kNpu) << src << " to " << dst << " flow " << flow;
        }
      }
    }
  }
}

TEST(FabricGenerators, PlanesAreSeparateFabrics) {
  SwitchedClusterSpec spec;
  spec.npus = 8;
  spec.children = {8};
  spec.parents = {1};
  spec.tier_links = {{50, 100}};
  spec.planes = 2;
  const Fabric f = switched_cluster(spec, "planes");
  EXPECT_EQ(f.node_count(), 8u + 2);
  EXPECT_EQ(f.out_links(0).size(), 2u);
  EXPECT_EQ(f.link(0).bytes_per_ns, 25.0);  // the NPU's 50 split over two planes
}

TEST(FabricGenerators, TorusNeighboursAndForwarding) {
  const Fabric f = torus({4, 4}, {50, 100}, "t");
  EXPECT_EQ(f.npu_count(), 16u);
  EXPECT_EQ(f.link_count(), 2u * 32);
  EXPECT_TRUE(f.npus_forward());
  const EcmpRouter router(f, 3);
  EXPECT_EQ(router.hops(0, 3), 1u);  // wraps round
  EXPECT_EQ(router.hops(0, 10), 4u);
  EXPECT_EQ(torus({2, 1}, {50, 100}, "t").link_count(), 2u);  // one cable between two
  // Distances are kept in 16 bits: a ring of 140,000 NPUs is 70,000 hops across, and says so.
  const Fabric ring = torus({140000}, {50, 100}, "ring");
  const EcmpRouter far(ring, 1);
  EXPECT_THAT(error_of([&] { far.hops(0, 70000); }), HasSubstr("a shortest path of more than 65534 hops"));
  EXPECT_THAT(error_of([&] { far.hops(0, 70000); }), HasSubstr("65534 hops"));  // asked again: no half table
}

// A balanced dragonfly (a = 4, p = 2, h = 2: 9 groups): every two groups share one global cable,
// and a minimal route takes at most local, global, local hops between routers.
TEST(FabricGenerators, DragonflyJoinsEveryTwoGroupsOnce) {
  DragonflySpec spec;
  spec.routers = 4;
  spec.npus = 2;
  spec.global_links = 2;
  spec.nic = spec.local = spec.global = {50, 100};
  const Fabric f = dragonfly(spec, "df");
  EXPECT_EQ(f.npu_count(), 72u);
  EXPECT_EQ(f.node_count(), 72u + 36);
  // Cables: 72 NICs, 9 x 6 local, 36 global (9 x 8 / 2).
  EXPECT_EQ(f.link_count(), 2u * (72 + 54 + 36));
  for (std::uint32_t r = 72; r < f.node_count(); ++r) EXPECT_EQ(f.out_links(r).size(), 2u + 3 + 2) << r;
  const EcmpRouter router(f, 1);
  std::uint32_t longest = 0;
  for (NpuId b = 1; b < f.npu_count(); ++b) longest = std::max(longest, router.hops(0, b));
  EXPECT_EQ(longest, 5u);  // NPU, local, global, local, NPU
  EXPECT_EQ(router.hops(0, 1), 2u);
  spec.groups = 10;
  EXPECT_THAT(error_of([&] { dragonfly(spec, "df"); }), HasSubstr("df: 10 groups; expected 2 to 9"));
}

TEST(FabricGenerators, ErrorsNameTheParameter) {
  SwitchedClusterSpec spec;
  spec.npus = 100;
  spec.children = {4, 4};
  spec.parents = {1, 2};
  spec.tier_links = {{50, 100}, {50, 100}};
  EXPECT_THAT(error_of([&] { switched_cluster(spec, "g"); }), HasSubstr("g: the tree holds 16 NICs (the product of the "
                                                                        "children per tier); expected at least one per "
                                                                        "NPU, "
                                                                        "100"));
  spec.npus = 16;
  spec.tier_links[1].bytes_per_ns = 0;
  EXPECT_THAT(error_of([&] { switched_cluster(spec, "g"); }), HasSubstr("g: tier 2 links: bandwidth 0 GB/s"));
  EXPECT_THAT(error_of([] { torus({4, 0}, {50, 1}, "t"); }), HasSubstr("t: a torus dimension of 0 NPUs"));
}

// ---- ECMP -------------------------------------------------------------------------------------

// The router keeps each node's candidates per destination; a route must be the one a scan of
// every link at every hop picks: the links one hop closer in link order (through an NPU only on
// a torus), the pick by the flow's hash or d-mod-k among them. On random graphs, some with NPUs
// of several cables or cabled to each other, some with forwarding NPUs.
std::vector<std::uint32_t> route_by_scanning(const Fabric& f, RoutingSpec spec, NpuId src, NpuId dst,
                                             std::uint64_t key) {
  const std::uint32_t target = f.npu_node(dst);
  std::vector<std::uint32_t> d(f.node_count(), ~0u), frontier{target}, next, links;
  d[target] = 0;
  for (std::uint32_t hop = 1; !frontier.empty(); ++hop, frontier.swap(next)) {
    next.clear();
    for (std::uint32_t id = 0; id < f.link_count(); ++id) {
      const FabricLink& l = f.link(id);
      if (d[l.to] != hop - 1 || d[l.from] != ~0u ||
          std::find(frontier.begin(), frontier.end(), l.to) == frontier.end()) {
        continue;
      }
      d[l.from] = hop;
      if (f.npus_forward() || f.kind(l.from) != FabricNodeKind::kNpu) next.push_back(l.from);
    }
  }
  const std::uint64_t flow = splitmix64(key ^ splitmix64(spec.seed));
  std::uint64_t divisor = 1;
  for (std::uint32_t at = f.npu_node(src); at != target;) {
    std::vector<std::uint32_t> closer;
    for (std::uint32_t id : f.out_links(at)) {
      const std::uint32_t to = f.link(id).to;
      if (d[to] + 1 == d[at] && (f.npus_forward() || f.kind(to) != FabricNodeKind::kNpu || to == target)) {
        closer.push_back(id);
      }
    }
    std::uint64_t pick = splitmix64(flow ^ at) % closer.size();
    if (spec.kind == RoutingKind::kDestinationModK) {
      pick = (dst / divisor) % closer.size();
      divisor = std::min<std::uint64_t>(divisor * closer.size(), std::uint64_t{1} << 40);
    }
    links.push_back(closer[pick]);
    at = f.link(closer[pick]).to;
  }
  return links;
}

TEST(EcmpRouting, TheSameRoutesAsAScanOfEveryLinkAtEveryHop) {
  for (std::uint32_t graph = 0; graph < 40; ++graph) {
    std::mt19937 random(graph);
    const std::uint32_t npus = 4 + random() % 12, switches = 2 + random() % 10;
    Fabric f;
    for (std::uint32_t i = 0; i < npus; ++i) f.add_node(FabricNodeKind::kNpu);
    for (std::uint32_t i = 0; i < switches; ++i) f.add_node(FabricNodeKind::kScaleOutSwitch);
    for (std::uint32_t i = 0; i + 1 < switches; ++i)
      f.add_cable(npus + i, npus + i + 1 + random() % (switches - i - 1), 10, 1);
    for (std::uint32_t e = random() % (3 * switches); e > 0; --e) {
      const std::uint32_t a = random() % switches, b = random() % switches;
      if (a != b) f.add_cable(npus + a, npus + b, 10, 1);  // some in parallel
    }
    for (std::uint32_t i = 0; i < npus; ++i) {
      for (std::uint32_t c = random() % 4 == 0 ? 2 : 1; c > 0; --c) f.add_cable(i, npus + random() % switches, 10, 1);
    }
    if (graph % 5 == 0) f.add_cable(0, 1, 10, 1);
    f.set_npus_forward(graph % 3 == 0);
    f.finish("random");
    for (const RoutingKind kind : {RoutingKind::kEcmp, RoutingKind::kDestinationModK}) {
      const RoutingSpec spec{.kind = kind, .seed = graph};
      const EcmpRouter router(f, spec);
      std::vector<std::uint32_t> route;
      for (NpuId src = 0; src < npus; ++src) {
        for (NpuId dst = 0; dst < npus; ++dst) {
          for (std::uint64_t key = 0; key < 6 && src != dst; ++key) {
            router.route(src, dst, key, route);
            const std::vector<std::uint32_t> want = route_by_scanning(f, spec, src, dst, key);
            ASSERT_EQ(route, want) << "graph " << graph << ", " << src << " to " << dst << ", flow " << key;
            ASSERT_EQ(router.hops(src, dst), want.size());
          }
        }
      }
    }
  }
}

TEST(EcmpRouting, OneFlowOnePathSpreadOverTheSpines) {
  SwitchedClusterSpec spec;
  spec.npus = 32;
  spec.children = {8, 4};
  spec.parents = {1, 8};
  spec.tier_links = {{50, 100}, {50, 100}};
  const Fabric f = switched_cluster(spec, "ls");
  const EcmpRouter router(f, 42);
  std::map<std::uint32_t, int> spine_use;
  std::vector<std::uint32_t> a, b;
  for (std::uint64_t flow = 0; flow < 8000; ++flow) {
    router.route(0, 31, flow, a);
    router.route(0, 31, flow, b);
    ASSERT_EQ(a, b);  // the same flow, the same path
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(f.link(a.front()).from, f.npu_node(0));
    EXPECT_EQ(f.link(a.back()).to, f.npu_node(31));
    for (std::size_t k = 1; k < a.size(); ++k) EXPECT_EQ(f.link(a[k - 1]).to, f.link(a[k]).from);
    ++spine_use[f.link(a[1]).to];
  }
  ASSERT_EQ(spine_use.size(), 8u);  // every spine carries some
  for (const auto& [spine, flows] : spine_use) EXPECT_NEAR(flows, 1000, 150) << f.node_name(spine);
  // Another seed routes some flows differently; the same seed, identically.
  const EcmpRouter other(f, 43), same(f, 42);
  int differ = 0;
  for (std::uint64_t flow = 0; flow < 100; ++flow) {
    router.route(0, 31, flow, a);
    other.route(0, 31, flow, b);
    differ += a != b;
    same.route(0, 31, flow, b);
    EXPECT_EQ(a, b);
  }
  EXPECT_GT(differ, 50);
}

}  // namespace
}  // namespace chakrasim::network
