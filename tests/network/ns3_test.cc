// The packet-level backend (network/ns3/ns3_network.h) against closed forms. ns-3 adds what the
// flow model leaves out (headers: 52 + 2 bytes per 9000-byte packet, 0.6 %; the handshake and
// slow start: a few round trips of a few µs), so bulk transfers of tens of MiB come within a few
// per cent of bytes / bandwidth.
#include "network/ns3/ns3_network.h"

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

template <typename Net>
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
  Net net;
};

constexpr std::uint64_t kMiB = 1 << 20;

TEST(Ns3Network, OneFlowRunsNearLineRate) {
  // 32 MiB at 12.5 B/ns (100 Gb/s): 2.684 ms.
  Harness<Ns3Network> h(star(4, 12.5, 500));
  h.net.send(0, 1, 32 * kMiB, 7);
  h.run();
  const double ideal = 32.0 * kMiB / 12.5;
  EXPECT_NEAR(static_cast<double>(h.recorder.arrived.at(7)), ideal, 0.05 * ideal);
  std::printf("one flow: %llu ns (ideal %.0f), %llu ns-3 events\n",
              static_cast<unsigned long long>(h.recorder.arrived.at(7)), ideal,
              static_cast<unsigned long long>(h.net.ns3_events()));
}

}  // namespace
}  // namespace chakrasim::network
