// The flow backend's solver speed: a k-ary 3-tier fat-tree (k = 16: 1024 NPUs, 320 switches)
// with a steady population of concurrent flows between random NPU pairs; each completion starts
// a new flow, until `events` flow arrivals and departures have happened. Prints the wall time
// and events per second, one line, for bench/run_benchmarks.sh to take medians of.
// Usage: chakrasim_flow_bench [concurrent flows] [events] [radix]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>

#include "network/fabric/generators.h"
#include "network/flow/flow_network.h"

namespace {

using namespace chakrasim;
using namespace chakrasim::network;

struct Restarter final : ArrivalSink {
  void on_arrival(std::uint64_t) override { ++arrived; }
  std::uint64_t arrived = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t concurrent = argc > 1 ? static_cast<std::uint32_t>(std::atoi(argv[1])) : 1000;
  const std::uint64_t events = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20000;
  const std::uint32_t k = argc > 3 ? static_cast<std::uint32_t>(std::atoi(argv[3])) : 16;
  SwitchedClusterSpec spec;
  spec.children = {k / 2, k / 2, k};
  spec.parents = {1, k / 2, k / 2};
  spec.npus = k * k * k / 4;
  spec.tier_links = {{50, 500}, {50, 500}, {50, 500}};
  auto fabric = std::make_shared<const Fabric>(switched_cluster(spec, "bench"));
  EventQueue queue;
  Restarter sink;
  FlowNetwork net(fabric, queue, sink);
  std::mt19937_64 random(1);
  std::uniform_int_distribution<std::uint32_t> npu(0, spec.npus - 1);
  std::uniform_int_distribution<std::uint64_t> size(64 << 10, 16 << 20);
  std::uint64_t sent = 0;
  auto start_one = [&] {
    NpuId a = npu(random), b = npu(random);
    while (b == a) b = npu(random);
    net.send(a, b, size(random), sent++);
  };
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint32_t i = 0; i < concurrent; ++i) start_one();
  std::uint64_t done = 0;
  while (sent + done < events) {
    const Tick next = net.next_event_time();
    if (!queue.empty() && queue.next_time() <= next) {
      net.handle(queue.pop());
      continue;
    }
    if (next == kNeverTick) break;
    queue.advance_clock(next);
    const std::size_t before = net.active_flows();
    net.advance_to(next);
    for (std::size_t k2 = net.active_flows(); k2 < before; ++k2) {
      ++done;
      start_one();
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("npus=%u concurrent=%u events=%llu wall_s=%.3f events_per_s=%.0f simulated_ns=%llu "
              "flows_resolved_per_event=%.1f rounds_per_event=%.2f\n",
              spec.npus, concurrent, static_cast<unsigned long long>(sent + done), wall,
              static_cast<double>(sent + done) / wall, static_cast<unsigned long long>(queue.now()),
              static_cast<double>(net.solver().flows_resolved()) / static_cast<double>(sent + done),
              static_cast<double>(net.solver().rounds()) / static_cast<double>(sent + done));
  return 0;
}
