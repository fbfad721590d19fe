// The packet-level backend's speed: a k = 8 three-tier fat-tree (128 NPUs, 80 switches, 100 Gb/s
// links of 500 ns) running ring steps (every NPU sends `bytes` to the next; a step starts when
// the previous one has arrived, as in a ring all-reduce) or an all-to-all (every NPU `bytes` to
// every other, all at once). Prints the wall time, ns-3 events and events per second, one line,
// for bench/run_benchmarks.sh to take medians of.
// Usage: chakrasim_ns3_bench ring|all-to-all [bytes per message] [ring steps]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "network/fabric/generators.h"
#include "network/ns3/ns3_network.h"

namespace {

using namespace chakrasim;
using namespace chakrasim::network;

struct Counter final : ArrivalSink {
  void on_arrival(std::uint64_t) override { ++arrived; }
  std::uint64_t arrived = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string pattern = argc > 1 ? argv[1] : "ring";
  const std::uint64_t bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4u << 20;
  const std::uint32_t steps = argc > 3 ? static_cast<std::uint32_t>(std::atoi(argv[3])) : 4;
  SwitchedClusterSpec spec;
  spec.children = {4, 4, 8};
  spec.parents = {1, 4, 4};
  spec.npus = 128;
  spec.tier_links = {{12.5, 500}, {12.5, 500}, {12.5, 500}};
  auto fabric = std::make_shared<const Fabric>(switched_cluster(spec, "bench"));
  EventQueue queue;
  Counter sink;
  const auto t0 = std::chrono::steady_clock::now();
  Ns3Network net(fabric, queue, sink);
  const double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::uint64_t id = 0;
  auto start_round = [&] {
    for (NpuId s = 0; s < 128; ++s) {
      for (NpuId d = 0; d < 128; ++d) {
        if (d != s && (pattern == "all-to-all" || d == (s + 1) % 128)) net.send(s, d, bytes, id++);
      }
    }
  };
  const std::uint32_t rounds = pattern == "all-to-all" ? 1 : steps;
  for (std::uint32_t round = 0; round < rounds; ++round) {
    start_round();
    for (;;) {
      const Tick next = net.next_event_time();
      if (!queue.empty() && queue.next_time() <= next) {
        net.handle(queue.pop());
      } else if (next != kNeverTick) {
        queue.advance_clock(next);
        net.advance_to(next);
      } else {
        break;
      }
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("pattern=%s bytes=%llu messages=%llu arrived=%llu setup_s=%.3f wall_s=%.3f ns3_events=%llu "
              "events_per_s=%.0f simulated_ns=%llu connections=%zu\n",
              pattern.c_str(), static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(id),
              static_cast<unsigned long long>(sink.arrived), setup, wall,
              static_cast<unsigned long long>(net.ns3_events()), static_cast<double>(net.ns3_events()) / wall,
              static_cast<unsigned long long>(queue.now()), net.connections());
  return 0;
}
