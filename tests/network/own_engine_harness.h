// What the tests of graph-routing backends share: an arrival recorder, a star fabric, and the
// event loop of network.h's contract around one backend with its own engine.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "core/event_queue.h"
#include "network/fabric/fabric.h"
#include "network/network.h"

namespace chakrasim::network::test {

struct Recorder final : ArrivalSink {
  explicit Recorder(const EventQueue& q) : queue(q) {}
  void on_arrival(std::uint64_t message) override { arrived[message] = queue.now(); }
  const EventQueue& queue;
  std::map<std::uint64_t, Tick> arrived;
};

// `npus` NPUs on one switch, every link `bytes_per_ns` and `latency_ns`.
inline std::shared_ptr<const Fabric> star(std::uint32_t npus, double bytes_per_ns, double latency_ns) {
  auto f = std::make_shared<Fabric>();
  for (std::uint32_t r = 0; r < npus; ++r) f->add_node(FabricNodeKind::kNpu);
  const std::uint32_t sw = f->add_node(FabricNodeKind::kScaleOutSwitch);
  for (std::uint32_t r = 0; r < npus; ++r) f->add_cable(r, sw, bytes_per_ns, latency_ns);
  f->finish("star");
  return f;
}

// A backend `Net` built as Net(fabric, queue, sink, options...), and the loop that drives it.
template <typename Net>
struct Harness {
  template <typename... Options>
  explicit Harness(std::shared_ptr<const Fabric> fabric, Options... options)
      : recorder(queue), net(std::move(fabric), queue, recorder, std::move(options)...) {}
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
  Net net;
};

}  // namespace chakrasim::network::test
