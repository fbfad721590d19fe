// The flow-level backend (network/flow/flow_network.h) against SimGrid as an oracle: the same
// fabric, the same flows on the same ECMP routes, and every flow's completion time compared.
//
// SimGrid's CM02 network model with cross-traffic off and zero latencies computes exactly the
// max-min fair shares the flow backend computes: one lmm variable per flow of weight 1, one
// constraint per link, bounded by the link's bandwidth; CM02's defaults already set the bandwidth
// and latency factors to 1 and weight-S to 0, and TCP-gamma only bounds flows whose latency is
// above 0. Each chakrasim link becomes one SimGrid link (one direction, SHARED) of the same
// bandwidth in bytes per second; each flow gets a source and a destination host of its own in a
// star zone, the source's "up" route being exactly the links chakrasim's EcmpRouter gives that
// flow, so that flows between the same two NPUs may take different paths as they do in chakrasim.
//
// The fabrics have zero latencies, so a flow arrives when its last byte leaves. chakrasim
// truncates that time to the ns; SimGrid keeps it in double seconds. SimGrid's figures match an
// exact (rational) max-min replay to 1e-8 ns. chakrasim's differ from them by up to a few ns, for
// one reason: it ends a flow, and re-solves the others, at the truncated tick, up to 1 ns before
// the flow's exact end, dropping the bytes it had left to send in that fraction of a ns; the
// flows sharing its links get the capacity that much early, and these shifts add up along chains
// of ends (an exact replay that ends flows at the truncated tick gives chakrasim's figures to the
// tick). Where every end falls on a whole ns the two agree exactly (the interleaved case below).
//
// SimGrid allows one engine per process, so each oracle run forks a child that builds the
// platform, runs the simulation and writes the finish times back through a pipe.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include "network/fabric/generators.h"
#include "network/fabric/routing.h"
#include "network/flow/flow_network.h"

namespace chakrasim::network {
namespace {

namespace sg4 = simgrid::s4u;

struct TestFlow {
  NpuId src = 0;
  NpuId dst = 0;
  std::uint64_t bytes = 0;
  Tick start_ns = 0;
};

constexpr std::uint64_t kEcmpSeed = 11;

// ---- chakrasim ---------------------------------------------------------------------------------

struct Recorder final : ArrivalSink {
  explicit Recorder(const EventQueue& q, std::size_t flows) : queue(q), arrived(flows, kNeverTick) {}
  void on_arrival(std::uint64_t message) override { arrived[message] = queue.now(); }
  const EventQueue& queue;
  std::vector<Tick> arrived;
};

// Each flow's arrival tick through FlowNetwork. `flows` are in order of start; flow i is the i-th
// send, so its ECMP key is i (FlowNetwork counts its sends from 0). The loop keeps network.h's
// contract: queue events up to t, then the backend's own work at t, then the sends due at t.
std::vector<Tick> chakrasim_arrivals(const std::shared_ptr<const Fabric>& fabric, const std::vector<TestFlow>& flows) {
  EventQueue queue;
  Recorder recorder(queue, flows.size());
  FlowNetwork net(fabric, queue, recorder, kEcmpSeed);
  std::size_t next = 0;
  for (;;) {
    const Tick at_net = net.next_event_time();
    const Tick at_queue = queue.empty() ? kNeverTick : queue.next_time();
    const Tick at_send = next < flows.size() ? flows[next].start_ns : kNeverTick;
    if (at_queue != kNeverTick && at_queue <= at_net && at_queue <= at_send) {
      net.handle(queue.pop());
    } else if (at_net != kNeverTick && at_net <= at_send) {
      queue.advance_clock(at_net);
      net.advance_to(at_net);
    } else if (at_send != kNeverTick) {
      queue.advance_clock(at_send);
      for (; next < flows.size() && flows[next].start_ns == at_send; ++next) {
        net.send(flows[next].src, flows[next].dst, flows[next].bytes, next);
      }
    } else {
      return recorder.arrived;
    }
  }
}

// ---- SimGrid -----------------------------------------------------------------------------------

// The settings under which SimGrid's shares are pure max-min (see the top of the file). The
// precisions are tightened from SimGrid's defaults so that two shares or two end times closer than
// those are not merged; in the cases below the defaults give the same figures.
const std::vector<std::string> kSimGridArgs = {
    "flow_simgrid_test",
    "--log=root.thresh:critical",
    "--cfg=network/model:CM02",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/optim:Full",
    "--cfg=network/TCP-gamma:0",
    "--cfg=network/weight-S:0",
    "--cfg=network/bandwidth-factor:1",
    "--cfg=network/latency-factor:1",
    "--cfg=surf/precision:1e-15",
    "--cfg=maxmin/precision:1e-12",
};

// In the forked child: builds the platform, runs the flows, writes one double (the finish time
// in ns) per flow to `out`.
[[noreturn]] void run_simgrid_child(const Fabric& fabric, const std::vector<TestFlow>& flows, int out) {
  std::vector<std::string> args = kSimGridArgs;
#ifdef CHAKRASIM_SIMGRID_THREAD_CONTEXTS
  // Under AddressSanitizer: SimGrid's default contexts switch stacks behind its back.
  args.push_back("--cfg=contexts/factory:thread");
#endif
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  sg4::Engine engine(&argc, argv.data());

  sg4::NetZone* zone = sg4::create_star_zone("fabric");
  std::vector<sg4::Link*> links;
  links.reserve(fabric.link_count());
  for (std::uint32_t id = 0; id < fabric.link_count(); ++id) {
    links.push_back(zone->create_link("l" + std::to_string(id), fabric.link(id).bytes_per_ns * 1e9)
                        ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                        ->set_latency(0)
                        ->seal());
  }
  sg4::Host* driver_host = zone->create_host("driver", 1e9);
  const EcmpRouter router(fabric, kEcmpSeed);
  std::vector<std::uint32_t> path;
  std::vector<sg4::Host*> from(flows.size()), to(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    router.route(flows[i].src, flows[i].dst, i, path);
    std::vector<sg4::LinkInRoute> up;
    for (std::uint32_t id : path) up.emplace_back(links[id]);
    from[i] = zone->create_host("s" + std::to_string(i), 1e9);
    to[i] = zone->create_host("d" + std::to_string(i), 1e9);
    zone->add_route(from[i]->get_netpoint(), nullptr, nullptr, nullptr, up, false);
    zone->add_route(nullptr, to[i]->get_netpoint(), nullptr, nullptr, {}, false);
  }
  zone->seal();

  std::vector<sg4::CommPtr> comms(flows.size());
  sg4::Actor::create("driver", driver_host, [&] {
    for (std::size_t i = 0; i < flows.size(); ++i) {
      sg4::this_actor::sleep_until(static_cast<double>(flows[i].start_ns) * 1e-9);
      comms[i] = sg4::Comm::sendto_async(from[i], to[i], flows[i].bytes);
    }
    sg4::Comm::wait_all(comms);
  });
  engine.run();

  std::vector<double> finish_ns(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) finish_ns[i] = comms[i]->get_finish_time() * 1e9;
  const char* data = reinterpret_cast<const char*>(finish_ns.data());
  std::size_t left = finish_ns.size() * sizeof(double);
  while (left > 0) {
    const ssize_t n = write(out, data, left);
    if (n <= 0) _exit(3);
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  // No destructors, no atexit handlers: the parent process owns everything else.
  _exit(0);
}

// Each flow's finish time in ns as SimGrid computes it, in a child process of its own.
std::vector<double> simgrid_finish_ns(const Fabric& fabric, const std::vector<TestFlow>& flows) {
  int fds[2];
  if (pipe(fds) != 0) ADD_FAILURE() << "pipe failed";
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    run_simgrid_child(fabric, flows, fds[1]);
  }
  close(fds[1]);
  std::vector<double> finish(flows.size(), -1);
  char* data = reinterpret_cast<char*>(finish.data());
  std::size_t left = finish.size() * sizeof(double);
  while (left > 0) {
    const ssize_t n = read(fds[0], data, left);
    if (n <= 0) break;
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the SimGrid child failed (status " << status << ")";
  EXPECT_EQ(left, 0u) << "the SimGrid child wrote too few finish times";
  return finish;
}

// ---- cases -------------------------------------------------------------------------------------

// `count` flows between random distinct NPUs, of 64 KiB to 16 MiB, starting at random ns in
// [0, window_ns), sorted by start (ties keep the order drawn).
std::vector<TestFlow> random_flows(const Fabric& fabric, std::size_t count, Tick window_ns, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const NpuId npus = fabric.npu_count();
  std::vector<TestFlow> flows(count);
  for (TestFlow& f : flows) {
    f.src = static_cast<NpuId>(rng() % npus);
    f.dst = static_cast<NpuId>((f.src + 1 + rng() % (npus - 1)) % npus);
    f.bytes = (64u << 10) + rng() % ((16u << 20) - (64u << 10) + 1);
    f.start_ns = rng() % window_ns;
  }
  std::stable_sort(flows.begin(), flows.end(),
                   [](const TestFlow& a, const TestFlow& b) { return a.start_ns < b.start_ns; });
  return flows;
}

// How far chakrasim's arrival ticks are from SimGrid's finish times, over a set of flows.
struct Agreement {
  double max_abs_ns = 0;
  std::size_t worst = 0;
  std::size_t within_1ns = 0;
};

// Runs both and prints one line: flows, the largest difference, the share within 1 ns, run times.
Agreement compare(const std::shared_ptr<const Fabric>& fabric, const std::vector<TestFlow>& flows) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Tick> ours = chakrasim_arrivals(fabric, flows);
  const auto t1 = std::chrono::steady_clock::now();
  const std::vector<double> oracle = simgrid_finish_ns(*fabric, flows);
  const auto t2 = std::chrono::steady_clock::now();
  Agreement a;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(ours[i]) - oracle[i]);
    if (diff < 1.0) ++a.within_1ns;
    if (diff > a.max_abs_ns) {
      a.max_abs_ns = diff;
      a.worst = i;
    }
  }
  std::printf("%zu flows: %zu within 1 ns of SimGrid, the farthest %.3f ns (flow %zu: %llu vs %.3f); "
              "chakrasim %.2f s, SimGrid %.2f s\n",
              flows.size(), a.within_1ns, a.max_abs_ns, a.worst, static_cast<unsigned long long>(ours[a.worst]),
              oracle[a.worst], std::chrono::duration<double>(t1 - t0).count(),
              std::chrono::duration<double>(t2 - t1).count());
  return a;
}

// chakrasim ends flows and re-solves at their exact times, and truncates each arrival to the ns
// once; SimGrid's times are exact. So an arrival may be up to 1 ns early, plus the floating-point
// noise of sums of shares (measured 0.02 ns on ends near 1.5 ms). A wrong share moves the flows it
// touches by far more: a 1 % error on a 64 KiB flow at 50 B/ns is 13 ns, on a 16 MiB one 3.4 us.
constexpr double kTruncationSlackNs = 1.1;

TEST(FlowVsSimGrid, TwoFlowsIntoOneLink) {
  // f0: 6000 B alone at 10 B/ns for 100 ns, then with f1 (4000 B, capped at 4 B/ns by its own
  // up-link) on NPU 2's down-link: f0 at 6, f1 at 4. f0 ends at 100 + 5000 / 6 = 933.3 ns; f1 has
  // 666.7 B left then and, still capped, ends at 1100 ns.
  auto f = std::make_shared<Fabric>();
  for (int r = 0; r < 3; ++r) f->add_node(FabricNodeKind::kNpu);
  const std::uint32_t sw = f->add_node(FabricNodeKind::kScaleOutSwitch);
  f->add_cable(0, sw, 10, 0);
  f->add_cable(1, sw, 4, 0);
  f->add_cable(2, sw, 10, 0);
  f->finish("two");
  const std::vector<TestFlow> flows = {{0, 2, 6000, 0}, {1, 2, 4000, 100}};
  const std::vector<double> oracle = simgrid_finish_ns(*f, flows);
  const std::vector<Tick> ours = chakrasim_arrivals(f, flows);
  // The hand-worked finish times: both models must give them (chakrasim truncated to the ns).
  EXPECT_NEAR(oracle[0], 100 + 5000.0 / 6, 1e-6);
  EXPECT_NEAR(oracle[1], 1100, 1e-6);
  EXPECT_EQ(ours[0], 933u);
  EXPECT_EQ(ours[1], 1100u);
}

// ---- generated fabrics -------------------------------------------------------------------------

// A two-tier leaf-spine of 64 NPUs, 16 per leaf and 4 spines: 4:1 oversubscribed at the leaves.
std::shared_ptr<const Fabric> oversubscribed_leaf_spine() {
  SwitchedClusterSpec spec;
  spec.npus = 64;
  spec.children = {16, 4};
  spec.parents = {1, 4};
  spec.tier_links = {{50, 0}, {50, 0}};
  return std::make_shared<Fabric>(switched_cluster(spec, "leaf-spine"));
}

// 8 servers of 4 NPUs on a scale-up switch each; NIC r of every server under rail r's leaf, 2 spines.
std::shared_ptr<const Fabric> rail_optimised() {
  SwitchedClusterSpec spec;
  spec.npus = 32;
  spec.children = {8, 4};
  spec.parents = {1, 2};
  spec.tier_links = {{50, 0}, {100, 0}};
  spec.npus_per_server = 4;
  spec.scale_up = {450, 0};
  spec.rail_optimised = true;
  return std::make_shared<Fabric>(switched_cluster(spec, "rails"));
}

// A balanced dragonfly of 9 groups of 4 routers with 2 NPUs each (72 NPUs), slower between groups.
std::shared_ptr<const Fabric> small_dragonfly() {
  DragonflySpec spec;
  spec.routers = 4;
  spec.npus = 2;
  spec.global_links = 2;
  spec.nic = {50, 0};
  spec.local = {40, 0};
  spec.global = {25, 0};
  return std::make_shared<Fabric>(dragonfly(spec, "dragonfly"));
}

// 300 random flows (64 KiB to 16 MiB) starting within 2 ms on each fabric: at 25 to 450 B/ns a
// flow lasts up to a few hundred us, so tens overlap and the shares change at every start and end.
TEST(FlowVsSimGrid, RandomFlowsOnGeneratedFabrics) {
  struct Case {
    const char* name;
    std::shared_ptr<const Fabric> fabric;
  };
  const std::vector<Case> cases = {
      {"2-tier leaf-spine, 4:1", oversubscribed_leaf_spine()},
      {"rail-optimised", rail_optimised()},
      {"dragonfly", small_dragonfly()},
      {"torus 4x4x2", std::make_shared<Fabric>(torus({4, 4, 2}, {50, 0}, "torus"))},
  };
  std::uint64_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<TestFlow> flows = random_flows(*c.fabric, 300, 2'000'000, seed++);
    const Agreement a = compare(c.fabric, flows);
    // Both give every flow its max-min share of the same links, re-solved at every start and
    // end: the finish times agree but for the truncated arrivals (kTruncationSlackNs).
    EXPECT_LT(a.max_abs_ns, kTruncationSlackNs) << "flow " << a.worst;
  }
}

// All-to-all among 32 NPUs of a k = 8 fat-tree, one under each edge switch so that every flow
// climbs to the aggregation or core tier: 992 flows from t = 0, random sizes. The full 128-NPU
// all-to-all (16,256 flows) takes minutes in both (each end re-solves one component of all the
// flows), and 64 NPUs about 10 s in chakrasim: too long for a unit test.
TEST(FlowVsSimGrid, AllToAllOnAFatTree) {
  SwitchedClusterSpec spec;
  spec.npus = 128;
  spec.children = {4, 4, 8};
  spec.parents = {1, 4, 4};
  spec.tier_links = {{50, 0}, {50, 0}, {50, 0}};
  auto fabric = std::make_shared<Fabric>(switched_cluster(spec, "k8"));
  std::mt19937_64 rng(99);
  std::vector<TestFlow> flows;
  for (NpuId s = 0; s < 128; s += 4) {
    for (NpuId d = 0; d < 128; d += 4) {
      if (s != d) flows.push_back({s, d, (64u << 10) + rng() % ((16u << 20) - (64u << 10) + 1), 0});
    }
  }
  const Agreement a = compare(fabric, flows);
  // The same max-min shares of the same links: agreement but for the truncated arrivals.
  EXPECT_LT(a.max_abs_ns, kTruncationSlackNs) << "flow " << a.worst;
}

// ---- arrivals and departures interleaved -------------------------------------------------------

// Five NPUs on one switch, every link 12 B/ns; flows start while others run, and one starts at the
// very ns two others end. Worked out: 2->0 runs alone (50 ns). At 200 1->0 and 1->4 share NPU 1's
// up-link (6 each) and 3->2 runs at 12; from 300 3->0 shares NPU 3's up-link with 3->2 and NPU 0's
// down-link with 1->0, and from 500 2->4 shares NPU 4's down-link with 1->4: everything at 6. 1->0
// ends at 700, 1->4 and 3->2 at 800 when 4->0 starts and shares NPU 0's down-link with 3->0 (6
// each, 2->4 now at 12); 3->0 ends at 1000, 2->4 at 1150 and 4->0, alone at 12, at 1250.
TEST(FlowVsSimGrid, ArrivalsAndDeparturesInterleaved) {
  auto f = std::make_shared<Fabric>();
  for (int r = 0; r < 5; ++r) f->add_node(FabricNodeKind::kNpu);
  const std::uint32_t sw = f->add_node(FabricNodeKind::kScaleOutSwitch);
  for (std::uint32_t r = 0; r < 5; ++r) f->add_cable(r, sw, 12, 0);
  f->finish("star");
  const std::vector<TestFlow> flows = {{2, 0, 600, 0},    {1, 0, 3000, 200}, {1, 4, 3600, 200}, {3, 2, 4200, 200},
                                       {3, 0, 4200, 300}, {2, 4, 6000, 500}, {4, 0, 4200, 800}};
  const std::vector<Tick> want = {50, 700, 800, 800, 1000, 1150, 1250};
  const std::vector<Tick> ours = chakrasim_arrivals(f, flows);
  const std::vector<double> oracle = simgrid_finish_ns(*f, flows);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    SCOPED_TRACE(i);
    // Every end falls on a whole ns, so truncation changes nothing: both give the worked-out
    // times, chakrasim to the tick and SimGrid to rounding.
    EXPECT_EQ(ours[i], want[i]);
    EXPECT_NEAR(oracle[i], static_cast<double>(want[i]), 1e-6);
  }
}

// Long flows run while short ones come and go: 24 flows of 16 MiB start at 0 on the leaf-spine and
// 240 of 64 to 256 KiB arrive over their first 600 us, so almost every share change is a short
// flow arriving at or leaving a link a long one crosses.
TEST(FlowVsSimGrid, ShortFlowsArriveWhileLongOnesRun) {
  const std::shared_ptr<const Fabric> fabric = oversubscribed_leaf_spine();
  std::mt19937_64 rng(7);
  std::vector<TestFlow> flows;
  for (NpuId s = 0; s < 24; ++s) flows.push_back({s, static_cast<NpuId>((s + 16 + s % 3 * 8) % 64), 16u << 20, 0});
  for (int k = 0; k < 240; ++k) {
    const auto src = static_cast<NpuId>(rng() % 64);
    flows.push_back({src, static_cast<NpuId>((src + 1 + rng() % 63) % 64), (64u << 10) + rng() % (192u << 10),
                     1 + rng() % 600'000});
  }
  std::stable_sort(flows.begin(), flows.end(),
                   [](const TestFlow& a, const TestFlow& b) { return a.start_ns < b.start_ns; });
  const Agreement a = compare(fabric, flows);
  // The same shares, re-solved at every arrival and departure: agreement but for the truncated arrivals.
  EXPECT_LT(a.max_abs_ns, kTruncationSlackNs) << "flow " << a.worst;
}

}  // namespace
}  // namespace chakrasim::network
