// The event loop with a backend that has its own event engine (network/network.h's contract for
// next_event_time() and advance_to()): a test-only backend, registered as one row of the backend
// table, keeps every message in a list of its own and never touches the global queue. The run
// must stay alive while that list holds messages, and every arrival must happen at the time the
// backend gives it, with the queue's clock reading that time.
#include <algorithm>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "chakra/trace_builder.h"
#include "network/analytical/congestion_unaware.h"
#include "network/network.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
constexpr std::uint64_t kMiB = 1 << 20;

// What the loop did to the last backend built: each advance_to(t) with the clock during it.
struct Calls {
  std::vector<std::pair<Tick, Tick>> advances;  // (t, queue.now() during advance_to(t))
  std::uint64_t arrivals = 0;
};
Calls calls;

// Delivers each message after the congestion-unaware backend's delay (borrowed from that backend,
// so the figures are comparable), from its own time-ordered list.
class OwnEngine final : public network::Network {
 public:
  OwnEngine(const network::Topology& topology, EventQueue& queue, network::ArrivalSink& sink)
      : delays_(topology, queue, sink), queue_(queue), sink_(sink) {}
  void send(NpuId src, NpuId dst, std::uint64_t bytes, std::uint64_t message) override {
    pending_.emplace(queue_.now() + delays_.delay(src, dst, bytes), message);  // FIFO among equal times
  }
  void handle(const Event&) override { ADD_FAILURE() << "this backend schedules no events"; }
  Tick next_event_time() const override { return pending_.empty() ? kNeverTick : pending_.begin()->first; }
  void advance_to(Tick t) override {
    calls.advances.emplace_back(t, queue_.now());
    while (!pending_.empty() && pending_.begin()->first == t) {
      const std::uint64_t message = pending_.begin()->second;
      pending_.erase(pending_.begin());
      ++calls.arrivals;
      sink_.on_arrival(message);
    }
  }

 private:
  network::CongestionUnaware delays_;  // used only for delay()
  EventQueue& queue_;
  network::ArrivalSink& sink_;
  std::multimap<Tick, std::uint64_t> pending_;
};

std::unique_ptr<network::Network> make_own_engine(const network::Topology& topology, EventQueue& queue,
                                                  network::ArrivalSink& sink, const network::Folding*) {
  return std::make_unique<OwnEngine>(topology, queue, sink);
}

// The backend's row, registered once per process.
const char* own_engine_backend() {
  static const char* const kName = [] {
    network::register_backend({.name = "test-own-engine",
                               .models = "congestion-unaware delays, kept in the backend's own event list",
                               .ignores = "everything the congestion-unaware backend ignores",
                               .shift_invariant = false,
                               .has_links = false,
                               .own_engine = true,
                               .params = {"topology", "npus_count", "bandwidth", "latency"},
                               .make = &make_own_engine});
    return "test-own-engine";
  }();
  return kName;
}

TEST(OwnEngine, APointToPointMessageArrivesAtTheBackendsTime) {
  // 1 MiB from NPU 0 to NPU 1 on Ring 2 at 50 GiB/s, 500 ns: the backend keeps the message for
  // floor(500 + 1048576 / 53.6870912) = 20031 ns. From t = 0 to 20031 the global queue is empty;
  // the run goes on because the backend reports 20031, and both NPUs finish then, as with the
  // congestion-unaware backend (tests/e2e/p2p_groups_test.cc).
  sim::Inputs in;
  in.backend = own_engine_backend();
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}});
  in.system = system_of("ring", 1, 1, 1);
  chakra::TraceBuilder sender;
  sender.send("send", 1, 7, kMiB);
  chakra::TraceBuilder receiver;
  receiver.recv("recv", 0, 7, kMiB);
  in.graphs = {std::make_shared<const chakra::Graph>(chakra::Graph::build(sender.trace(), "r0")),
               std::make_shared<const chakra::Graph>(chakra::Graph::build(receiver.trace(), "r1"))};
  calls = {};
  const sim::Result r = run(in);
  ASSERT_TRUE(r.all_finished());
  EXPECT_EQ(r.npus[0].finish_ns, 20031u);
  EXPECT_EQ(r.npus[1].finish_ns, 20031u);
  ASSERT_EQ(calls.advances.size(), 1u);
  EXPECT_EQ(calls.advances[0], (std::pair<Tick, Tick>{20031, 20031}));
  EXPECT_EQ(calls.arrivals, 1u);
}

// Compute and every native collective, one after another.
chakra::Trace mixed_trace() {
  chakra::TraceBuilder b;
  b.comp("fwd", 3);
  b.collective("ar", chakra::CommType::kAllReduce, kMiB, {0});
  b.comp("bwd", 5, {0});
  b.collective("ag", chakra::CommType::kAllGather, 64 * 1024, {1, 2});
  b.collective("rs", chakra::CommType::kReduceScatter, 3 * kMiB, {3});
  b.collective("a2a", chakra::CommType::kAllToAll, 512 * 1024, {4});
  b.comp("opt", 2, {5});
  return b.trace();
}

TEST(OwnEngine, CollectivesFinishAsWithTheCongestionUnawareBackend) {
  // The same delays from the backend's own list instead of the global queue: every NPU's figures
  // equal the congestion-unaware run's, on a ring and on three dimensions, with several chunks in
  // flight. Every advance_to(t) ran with the clock at t, and every message arrived.
  const std::vector<network::TopologySpec> networks = {network_of({{DimensionKind::kRing, 8, 50, 500}}),
                                                       network_of({{DimensionKind::kRing, 2, 200, 50},
                                                                   {DimensionKind::kFullyConnected, 4, 100, 500},
                                                                   {DimensionKind::kSwitch, 2, 50, 2000}})};
  for (const network::TopologySpec& net : networks) {
    SCOPED_TRACE(std::to_string(net.dims.size()) + " dimensions");
    sim::Inputs in;
    in.network = net;
    in.system = system_of("ring", net.dims.size(), 4, 2);
    in.graphs = same_trace(mixed_trace(), network::Topology(net).npu_count());
    in.allow_symmetry = false;
    const sim::Result expected = run(in);
    in.backend = own_engine_backend();
    calls = {};
    const sim::Result r = run(in);
    ASSERT_TRUE(r.all_finished());
    ASSERT_EQ(r.npus.size(), expected.npus.size());
    for (std::size_t n = 0; n < r.npus.size(); ++n) {
      EXPECT_EQ(r.npus[n].finish_ns, expected.npus[n].finish_ns) << "NPU " << n;
      EXPECT_EQ(r.npus[n].exposed_comm_ns, expected.npus[n].exposed_comm_ns) << "NPU " << n;
    }
    EXPECT_EQ(calls.arrivals, r.messages);
    EXPECT_FALSE(calls.advances.empty());
    for (const auto& [t, now] : calls.advances) ASSERT_EQ(t, now);
    EXPECT_TRUE(std::is_sorted(calls.advances.begin(), calls.advances.end()));
  }
}

}  // namespace
}  // namespace chakrasim::test
