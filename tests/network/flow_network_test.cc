// The flow-level backend (network/flow/flow_network.h) against max-min shares worked out by hand.
// Flows end at ceil(bytes / rate) ns after their last re-solve; the last byte arrives the path's
// latency later.
#include "network/flow/flow_network.h"

#include <map>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "network/fabric/generators.h"
#include "network/own_engine_harness.h"

namespace chakrasim::network {
namespace {

using test::Recorder;
using test::star;
using Harness = test::Harness<FlowNetwork>;

TEST(FlowNetwork, OneFlowRunsAtLineRate) {
  // 1000 bytes at 10 B/ns: 100 ns; two hops of 50 ns each.
  Harness h(star(4, 10, 50));
  h.net.send(0, 1, 1000, 7);
  EXPECT_EQ(h.net.rate_of(7), 10.0);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(7), 200u);
}

// Incast: N senders to one receiver share its down-link, B/N each, and end together.
TEST(FlowNetwork, IncastSharesTheBottleneckEqually) {
  for (const std::uint32_t n : {2u, 3u, 7u}) {
    SCOPED_TRACE(n);
    Harness h(star(n + 1, 12, 0));
    for (std::uint32_t s = 1; s <= n; ++s) h.net.send(s, 0, 1200, s);
    for (std::uint32_t s = 1; s <= n; ++s) EXPECT_DOUBLE_EQ(h.net.rate_of(s), 12.0 / n);
    h.run();
    for (std::uint32_t s = 1; s <= n; ++s) EXPECT_EQ(h.recorder.arrived.at(s), 100u * n);  // 1200 n / 12
  }
}

// When a flow ends, the ones it shared with speed up: A (1000 B) and B (3000 B) into NPU 2 at
// 10 B/ns: 5 each until A ends at 200 ns; B's remaining 2000 B then take 200 ns at 10.
TEST(FlowNetwork, SharesAreReSolvedWhenAFlowEnds) {
  Harness h(star(3, 10, 0));
  h.net.send(0, 2, 1000, 1);
  h.net.send(1, 2, 3000, 2);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(1), 200u);
  EXPECT_EQ(h.recorder.arrived.at(2), 400u);
}

// Max-min, not equal shares: f1 (0 -> 2) and f2 (1 -> 2) share NPU 2's down-link of 10 B/ns, but
// f2's own up-link is 4 B/ns: f2 gets 4 and f1 the 6 left, not 5 each.
TEST(FlowNetwork, MaxMinGivesTheLeftoverToTheUnconstrainedFlow) {
  auto f = std::make_shared<Fabric>();
  for (int r = 0; r < 3; ++r) f->add_node(FabricNodeKind::kNpu);
  const std::uint32_t sw = f->add_node(FabricNodeKind::kScaleOutSwitch);
  f->add_cable(0, sw, 10, 0);
  f->add_cable(1, sw, 4, 0);
  f->add_cable(2, sw, 10, 0);
  f->finish("maxmin");
  Harness h(f);
  h.net.send(0, 2, 6000, 1);
  h.net.send(1, 2, 4000, 2);
  EXPECT_DOUBLE_EQ(h.net.rate_of(1), 6.0);
  EXPECT_DOUBLE_EQ(h.net.rate_of(2), 4.0);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(1), 1000u);
  EXPECT_EQ(h.recorder.arrived.at(2), 1000u);
}

// Flows that share no link do not slow each other, and an empty message takes the latency only.
TEST(FlowNetwork, DisjointFlowsAndEmptyMessages) {
  Harness h(star(4, 10, 5));
  h.net.send(0, 1, 1000, 1);
  h.net.send(2, 3, 1000, 2);
  h.net.send(3, 0, 0, 3);
  EXPECT_EQ(h.net.rate_of(1), 10.0);
  EXPECT_EQ(h.net.rate_of(2), 10.0);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(1), 110u);
  EXPECT_EQ(h.recorder.arrived.at(2), 110u);
  EXPECT_EQ(h.recorder.arrived.at(3), 10u);
  EXPECT_EQ(h.net.active_flows(), 0u);
}

// A shift permutation (NPU r to r + 8) on a two-tier fat-tree of 4 leaves of 8 NPUs, every link
// 10 B/ns, 10000 bytes per flow. With d-mod-k the 8 flows leaving a leaf take up-links dst mod
// (spines): 8 distinct ones when there are 8 spines, so every flow runs at line rate, 1000 ns;
// with 4 spines (2:1 at the leaves) two flows share each up-link and each down-link: 5 B/ns,
// 2000 ns, exactly. ECMP hashes and may collide: it can only be slower.
TEST(FlowNetwork, ShiftPermutationOnAFatTreeAtLineRateAndAtHalfWhenOversubscribed) {
  for (const std::uint32_t spines : {8u, 4u}) {
    SCOPED_TRACE(spines);
    SwitchedClusterSpec spec;
    spec.npus = 32;
    spec.children = {8, 4};
    spec.parents = {1, spines};
    spec.tier_links = {{10, 0}, {10, 0}};
    const auto fabric = std::make_shared<const Fabric>(switched_cluster(spec, "ft"));
    const Tick expected = spines == 8 ? 1000 : 2000;
    Harness dmodk(fabric, FlowOptions{.routing = {.kind = RoutingKind::kDestinationModK}});
    for (NpuId r = 0; r < 32; ++r) dmodk.net.send(r, (r + 8) % 32, 10000, r);
    dmodk.run();
    ASSERT_EQ(dmodk.recorder.arrived.size(), 32u);
    for (const auto& [message, at] : dmodk.recorder.arrived) EXPECT_EQ(at, expected) << "flow " << message;

    Harness ecmp(fabric);
    for (NpuId r = 0; r < 32; ++r) ecmp.net.send(r, (r + 8) % 32, 10000, r);
    ecmp.run();
    Tick slowest = 0;
    for (const auto& [message, at] : ecmp.recorder.arrived) slowest = std::max(slowest, at);
    EXPECT_GE(slowest, expected);
  }
}

// The same on a three-tier k = 4 fat-tree (16 NPUs, pods of 4, 4 core switches), NPU r to
// r + 8: d-mod-k picks the aggregation switch by dst mod 2 and the core by (dst / 2) mod 2, so
// the 4 flows into a pod come down 4 distinct cores and 2 distinct aggregation switches per
// leaf: line rate, 1000 ns, for every flow.
TEST(FlowNetwork, ShiftPermutationOnAThreeTierFatTreeAtLineRate) {
  SwitchedClusterSpec spec;
  spec.npus = 16;
  spec.children = {2, 2, 4};
  spec.parents = {1, 2, 2};
  spec.tier_links = {{10, 0}, {10, 0}, {10, 0}};
  Harness h(std::make_shared<const Fabric>(switched_cluster(spec, "ft3")),
            FlowOptions{.routing = {.kind = RoutingKind::kDestinationModK}});
  for (NpuId r = 0; r < 16; ++r) h.net.send(r, (r + 8) % 16, 10000, r);
  h.run();
  ASSERT_EQ(h.recorder.arrived.size(), 16u);
  for (const auto& [message, at] : h.recorder.arrived) EXPECT_EQ(at, 1000u) << "flow " << message;
}

// NPUs 0, 1 under leaf 4, NPUs 2, 3 under leaf 5, spines 6 and 7; every cable 10 B/ns.
std::shared_ptr<const Fabric> two_leaves_two_spines() {
  auto f = std::make_shared<Fabric>();
  for (int r = 0; r < 4; ++r) f->add_node(FabricNodeKind::kNpu);
  for (int s = 0; s < 4; ++s) f->add_node(FabricNodeKind::kScaleOutSwitch);
  f->add_cable(0, 4, 10, 0);
  f->add_cable(1, 4, 10, 0);
  f->add_cable(2, 5, 10, 0);
  f->add_cable(3, 5, 10, 0);
  for (std::uint32_t leaf : {4u, 5u}) {
    for (std::uint32_t spine : {6u, 7u}) f->add_cable(leaf, spine, 10, 0);
  }
  f->finish("two leaves");
  return f;
}

// Fixed routes send 0 -> 2 and 1 -> 3 both over spine 6: they share its links, 5 B/ns each,
// 2000 ns for 10000 bytes; d-mod-k alone would part them (dst 2 and 3 mod 2), 1000 ns.
TEST(FlowNetwork, FixedRoutesAreFollowed) {
  const auto fabric = two_leaves_two_spines();
  auto fixed = std::make_shared<const FixedRoutes>(read_fixed_routes("0 4 6 5 2\n1 4 6 5 3\n", "routes", *fabric));
  for (const bool pinned : {true, false}) {
    SCOPED_TRACE(pinned);
    FlowOptions options{.routing = {.kind = RoutingKind::kDestinationModK}};
    if (pinned) options.routing.fixed = fixed;
    Harness h(fabric, options);
    h.net.send(0, 2, 10000, 0);
    h.net.send(1, 3, 10000, 1);
    h.run();
    EXPECT_EQ(h.recorder.arrived.at(0), pinned ? 2000u : 1000u);
    EXPECT_EQ(h.recorder.arrived.at(1), pinned ? 2000u : 1000u);
  }
}

// A NIC cap of 10 B/ns on a star of 100 B/ns links: NPU 0 sending to 1 and 2 at once splits its
// NIC, 5 B/ns each (2000 ns for 10000 bytes); 1 and 2 sending to 3 split 3's NIC the same way.
// Without the cap the two flows share NPU 0's one link (or NPU 3's): 50 B/ns each, 200 ns.
TEST(FlowNetwork, NicCapSharesWhatAnNpuSendsAndReceives) {
  for (const double nic : {10.0, 0.0}) {
    SCOPED_TRACE(nic);
    Harness out(star(4, 100, 0), FlowOptions{.nic_bytes_per_ns = nic});
    out.net.send(0, 1, 10000, 0);
    out.net.send(0, 2, 10000, 1);
    out.run();
    EXPECT_EQ(out.recorder.arrived.at(0), nic > 0 ? 2000u : 200u);
    EXPECT_EQ(out.recorder.arrived.at(1), nic > 0 ? 2000u : 200u);
    Harness in(star(4, 100, 0), FlowOptions{.nic_bytes_per_ns = nic});
    in.net.send(1, 3, 10000, 0);
    in.net.send(2, 3, 10000, 1);
    in.run();
    EXPECT_EQ(in.recorder.arrived.at(0), nic > 0 ? 2000u : 200u);
    EXPECT_EQ(in.recorder.arrived.at(1), nic > 0 ? 2000u : 200u);
  }
}

// What each link carried, as busy time at full rate: share x duration summed per link.
struct CarriedLog final : LinkObserver {
  void on_link_busy(std::uint32_t, Tick, Tick) override { ADD_FAILURE() << "flows share links"; }
  void on_link_share(std::uint32_t link, Tick start, Tick end, double share) override {
    busy[link] += static_cast<double>(end - start) * share;
  }
  std::map<std::uint32_t, double> busy;
};

// NPUs 0 and 1 send 10000 bytes each to NPU 2 over a star of 10 B/ns links: they share the link
// into NPU 2, 5 B/ns each, for 2000 ns. That link is busy all 2000 ns; each sender's link is
// half used over the same time, 1000 ns at full rate; NPU 2's link out carries nothing.
TEST(FlowNetwork, ReportsWhatEachLinkCarried) {
  const auto fabric = star(3, 10, 0);
  Harness h(fabric);
  CarriedLog log;
  h.net.observe_links(&log);
  EXPECT_EQ(h.net.link_count(), fabric->link_count());
  h.net.send(0, 2, 10000, 0);
  h.net.send(1, 2, 10000, 1);
  h.run();
  auto link = [&](std::uint32_t from, std::uint32_t to) {
    for (std::uint32_t id = 0; id < fabric->link_count(); ++id) {
      if (fabric->link(id).from == from && fabric->link(id).to == to) return id;
    }
    ADD_FAILURE() << "no link " << from << " -> " << to;
    return 0u;
  };
  EXPECT_DOUBLE_EQ(log.busy[link(3, 2)], 2000.0);
  EXPECT_DOUBLE_EQ(log.busy[link(0, 3)], 1000.0);
  EXPECT_DOUBLE_EQ(log.busy[link(1, 3)], 1000.0);
  EXPECT_EQ(log.busy.count(link(2, 3)), 0u);
  EXPECT_EQ(h.net.link_name(link(0, 3)), "NPU 0 (node 0) -> scale-out switch 3");
}

// With a NIC cap, each NPU's NIC out and NIC in are links of their own, after the fabric's.
TEST(FlowNetwork, NicsAreReportedAsLinks) {
  const auto fabric = star(2, 10, 0);
  Harness h(fabric, FlowOptions{.nic_bytes_per_ns = 4});
  CarriedLog log;
  h.net.observe_links(&log);
  ASSERT_EQ(h.net.link_count(), fabric->link_count() + 4);
  EXPECT_EQ(h.net.link_name(fabric->link_count() + 1), "NPU 1 NIC out");
  EXPECT_EQ(h.net.link_name(fabric->link_count() + 2), "NPU 0 NIC in");
  h.net.send(0, 1, 4000, 0);  // at the cap, 4 B/ns: 1000 ns, the NICs full, the links at 40%
  h.run();
  EXPECT_DOUBLE_EQ(log.busy[fabric->link_count()], 1000.0);
  EXPECT_DOUBLE_EQ(log.busy[fabric->link_count() + 3], 1000.0);
  EXPECT_DOUBLE_EQ(log.busy[0], 400.0);
}

// A ring all-reduce of `bytes` within each of `rings` (every ring's members in ring order), all
// rings at once, step by step as the system layer runs it: 2 (n - 1) steps, in each every member
// sends bytes / n to the next and the step ends when the last chunk has arrived. Returns when.
Tick ring_all_reduce(Network& net, EventQueue& queue, const std::map<std::uint64_t, Tick>& arrived,
                     const std::vector<std::vector<NpuId>>& rings, std::uint64_t bytes) {
  std::uint64_t message = 0;
  const auto n = static_cast<std::uint32_t>(rings.front().size());
  for (std::uint32_t step = 0; step < 2 * (n - 1); ++step) {
    for (const std::vector<NpuId>& ring : rings) {
      for (std::uint32_t k = 0; k < n; ++k) net.send(ring[k], ring[(k + 1) % n], bytes / n, message++);
    }
    // The event loop of network.h's contract, until this step's chunks have arrived.
    while (arrived.size() < message) {
      const Tick next = net.next_event_time();
      if (!queue.empty() && queue.next_time() <= next) {
        net.handle(queue.pop());
      } else {
        queue.advance_clock(next);
        net.advance_to(next);
      }
    }
  }
  return queue.now();
}

// The bar's closed form: a ring all-reduce within each rail of a rail-optimised cluster (4
// servers of 8 NPUs, NIC r of every server under rail r's leaf) takes what the analytical
// backend gives for one ring of 4 NPUs on a switch: each rail's ring crosses only its own leaf,
// NPU to leaf to NPU, so every step is one chunk at line rate plus two link latencies, and the 8
// rails, all at once, share no link. 8 MiB per NPU at 50 B/ns, 500 ns per link: 6 steps of
// 2 MiB / 50 + 1000 ns.
TEST(FlowNetwork, RingAllReduceWithinRailsEqualsTheAnalyticalFigure) {
  SwitchedClusterSpec spec;
  spec.npus = 32;
  spec.children = {4, 8};
  spec.parents = {1, 2};
  spec.tier_links = {{50, 500}, {50, 500}};
  spec.npus_per_server = 8;
  spec.scale_up = {450, 25};
  spec.rail_optimised = true;
  Harness rails(std::make_shared<const Fabric>(switched_cluster(spec, "rails")));
  std::vector<std::vector<NpuId>> rings(8);
  for (NpuId rail = 0; rail < 8; ++rail) {
    for (NpuId server = 0; server < 4; ++server) rings[rail].push_back(server * 8 + rail);
  }
  constexpr std::uint64_t kBytes = 8u << 20;
  const Tick on_rails = ring_all_reduce(rails.net, rails.queue, rails.recorder.arrived, rings, kBytes);

  // The analytical backend: one switch of 4 NPUs whose links carry 50 B/ns (GiB/s in the YAML's
  // unit) with 500 ns per hop; congestion-unaware charges one serialisation and both hops'
  // latency per message, as a flow does (congestion-aware stores and forwards at the switch,
  // serialising each chunk twice).
  EventQueue queue;
  Recorder recorder(queue);
  const Topology one_switch(TopologySpec{{{DimensionKind::kSwitch, 4, 50e9 / (1u << 30), 500}}});
  const std::unique_ptr<Network> analytical = make_network("congestion-unaware", one_switch, queue, recorder);
  const Tick on_switch = ring_all_reduce(*analytical, queue, recorder.arrived, {{0, 1, 2, 3}}, kBytes);

  EXPECT_EQ(on_rails, on_switch);
  EXPECT_EQ(on_rails, 6 * ((2u << 20) / 50 + 1000));
}

}  // namespace
}  // namespace chakrasim::network
