// The flow-level backend (network/flow/flow_network.h) against max-min shares worked out by hand.
// Flows end at ceil(bytes / rate) ns after their last re-solve; the last byte arrives the path's
// latency later.
#include "network/flow/flow_network.h"

#include <map>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "network/fabric/generators.h"

namespace chakrasim::network {
namespace {

struct Recorder final : ArrivalSink {
  explicit Recorder(const EventQueue& q) : queue(q) {}
  void on_arrival(std::uint64_t message) override { arrived[message] = queue.now(); }
  const EventQueue& queue;
  std::map<std::uint64_t, Tick> arrived;
};

// `npus` NPUs on one switch, every link `bytes_per_ns` and `latency_ns`.
std::shared_ptr<const Fabric> star(std::uint32_t npus, double bytes_per_ns, double latency_ns) {
  auto f = std::make_shared<Fabric>();
  for (std::uint32_t r = 0; r < npus; ++r) f->add_node(FabricNodeKind::kNpu);
  const std::uint32_t sw = f->add_node(FabricNodeKind::kScaleOutSwitch);
  for (std::uint32_t r = 0; r < npus; ++r) f->add_cable(r, sw, bytes_per_ns, latency_ns);
  f->finish("star");
  return f;
}

struct Harness {
  explicit Harness(std::shared_ptr<const Fabric> fabric) : recorder(queue), net(std::move(fabric), queue, recorder) {}
  // The event loop's contract (network.h): queue events up to t, then the backend's work at t.
  void run() {
    for (;;) {
      const Tick next = net.next_event_time();
      if (!queue.empty() && queue.next_time() <= next) {
        net.handle(queue.pop());
      } else if (next != kNeverTick) {
        queue.advance_clock(next);
        net.advance_to(next);
      } else {
        return;
      }
    }
  }
  EventQueue queue;
  Recorder recorder;
  FlowNetwork net;
};

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

// A permutation on a non-blocking two-tier fat-tree runs at line rate; at 2:1 oversubscription
// of the leaves, the flows leaving a leaf share half as many up-links: half the rate.
TEST(FlowNetwork, PermutationOnAFatTreeFullAndOversubscribed) {
  for (const std::uint32_t spines : {8u, 4u}) {
    SCOPED_TRACE(spines);
    SwitchedClusterSpec spec;
    spec.npus = 32;
    spec.children = {8, 4};
    spec.parents = {1, spines};
    spec.tier_links = {{10, 0}, {10, 0}};
    Harness h(std::make_shared<Fabric>(switched_cluster(spec, "ft")));
    // NPU r sends to the NPU in the same place under the next leaf: every flow leaves its leaf.
    for (NpuId r = 0; r < 32; ++r) h.net.send(r, (r + 8) % 32, 10000, r);
    h.run();
    // ECMP may put two flows on one up-link; the slowest flow bounds the step. Non-blocking:
    // each leaf's 8 flows over 8 up-links; with hashing collisions some share, so only the
    // lower bound is exact: no flow beats line rate, and at 2:1 none beats half of it.
    Tick slowest = 0;
    for (const auto& [message, at] : h.recorder.arrived) slowest = std::max(slowest, at);
    EXPECT_GE(slowest, spines == 8 ? 1000u : 2000u);
    EXPECT_EQ(h.recorder.arrived.size(), 32u);
  }
}

}  // namespace
}  // namespace chakrasim::network
