// Tests of the congestion-unaware backend (docs/astra-sim-model.md §6.2): exact delays
// floor(hops * latency + bytes / bytes_per_ns) at the lowest differing dimension, and send()
// scheduling a kNetwork event that handle() turns into an arrival.
#include "network/analytical/congestion_unaware.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "core/event_queue.h"

namespace chakrasim::network {
namespace {

using DK = DimensionKind;

// A sink that remembers the ids it is told about, with the time it was told.
struct RecordingSink final : ArrivalSink {
  explicit RecordingSink(const EventQueue& q) : queue(q) {}
  void on_arrival(std::uint64_t message) override {
    ids.push_back(message);
    times.push_back(queue.now());
  }
  const EventQueue& queue;
  std::vector<std::uint64_t> ids;
  std::vector<Tick> times;
};

// One backend over one topology, with its own queue and sink.
struct Harness {
  explicit Harness(TopologySpec spec) : topology(std::move(spec)), sink(queue), net(topology, queue, sink) {}
  Topology topology;
  EventQueue queue;
  RecordingSink sink;
  CongestionUnaware net;
};

TopologySpec ring8() { return TopologySpec{{{DK::kRing, 8, 50, 500}}}; }
TopologySpec three_d() {
  return TopologySpec{{{DK::kRing, 2, 200, 50}, {DK::kFullyConnected, 8, 100, 500}, {DK::kSwitch, 4, 50, 2000}}};
}

TEST(CongestionUnaware, RingNeighbourDelays) {
  // Ring 8, 50 GB/s = 53.6870912 B/ns, 500 ns per hop, 0 -> 1 is one hop:
  //   32768 B:  500 + 32768 / 53.6870912 = 500 + 610.3515625  = 1110.35 -> 1110 (§5's T)
  //   65536 B:  500 + 1220.703125                              = 1720.70 -> 1720
  //   131072 B: 500 + 2441.40625                               = 2941.41 -> 2941
  //   1 MiB:    500 + 19531.25                                 = 20031.25 -> 20031 (the p2p anchor)
  //   0 B:      500
  Harness h(ring8());
  EXPECT_EQ(h.net.delay(0, 1, 32768), 1110u);
  EXPECT_EQ(h.net.delay(0, 1, 65536), 1720u);
  EXPECT_EQ(h.net.delay(0, 1, 131072), 2941u);
  EXPECT_EQ(h.net.delay(0, 1, 1048576), 20031u);
  EXPECT_EQ(h.net.delay(0, 1, 0), 500u);
  // The same in the other direction and for any pair of neighbours, including 7 -> 0.
  EXPECT_EQ(h.net.delay(1, 0, 32768), 1110u);
  EXPECT_EQ(h.net.delay(7, 0, 32768), 1110u);
  EXPECT_EQ(h.net.delay(4, 5, 32768), 1110u);
}

TEST(CongestionUnaware, RingLatencyCountsHopsTheShorterWayRound) {
  // Ring 8, 32768 B (610.3515625 ns of serialisation, counted once):
  //   0 -> 3: 3 hops, 1500 + 610.35 = 2110.35 -> 2110;  0 -> 5: 3 hops the other way, 2110;
  //   0 -> 4: 4 hops, 2000 + 610.35 -> 2610;             0 -> 7: 1 hop, 1110.
  Harness h(ring8());
  EXPECT_EQ(h.net.delay(0, 3, 32768), 2110u);
  EXPECT_EQ(h.net.delay(0, 5, 32768), 2110u);
  EXPECT_EQ(h.net.delay(0, 4, 32768), 2610u);
  EXPECT_EQ(h.net.delay(0, 7, 32768), 1110u);
}

TEST(CongestionUnaware, SwitchIsTwoHopsAndFullyConnectedOne) {
  // Switch 4 @ 50 GB/s, 2000 ns: 2 hops = 4000 ns of latency.
  //   65536 B: 4000 + 1220.703125 = 5220.70 -> 5220;  0 B: 4000;  1 MiB: 4000 + 19531.25 -> 23531.
  // FullyConnected 8 @ 100 GB/s (107.3741824 B/ns), 500 ns: 1 hop.
  //   65536 B: 500 + 610.3515625 -> 1110, for neighbours and far pairs alike.
  Harness sw(TopologySpec{{{DK::kSwitch, 4, 50, 2000}}});
  EXPECT_EQ(sw.net.delay(0, 1, 65536), 5220u);
  EXPECT_EQ(sw.net.delay(0, 3, 65536), 5220u);
  EXPECT_EQ(sw.net.delay(2, 1, 0), 4000u);
  EXPECT_EQ(sw.net.delay(0, 1, 1048576), 23531u);
  Harness fc(TopologySpec{{{DK::kFullyConnected, 8, 100, 500}}});
  EXPECT_EQ(fc.net.delay(0, 1, 65536), 1110u);
  EXPECT_EQ(fc.net.delay(0, 4, 65536), 1110u);
  EXPECT_EQ(fc.net.delay(6, 1, 65536), 1110u);
}

TEST(CongestionUnaware, OneTruncationOfTheSum) {
  // Ring 8 with 500.7 ns links, 32768 B: 500.7 + 610.3515625 = 1111.05 -> 1111, where
  // truncating each term first would give 500 + 610 = 1110.
  // Switch 4 with 0.9 ns links, 50 GB/s, 32768 B: 2 * 0.9 + 610.3515625 = 612.15 -> 612, where
  // truncating the latency term first would give 1 + 610 = 611.
  Harness ring(TopologySpec{{{DK::kRing, 8, 50, 500.7}}});
  EXPECT_EQ(ring.net.delay(0, 1, 32768), 1111u);
  Harness sw(TopologySpec{{{DK::kSwitch, 4, 50, 0.9}}});
  EXPECT_EQ(sw.net.delay(0, 1, 32768), 612u);
}

TEST(CongestionUnaware, MultiDimensionalMessagesPayTheLowestDifferingDimension) {
  // 3-D [Ring 2 @ 200 GB/s 50 ns, FC 8 @ 100 GB/s 500 ns, Switch 4 @ 50 GB/s 2000 ns], 65536 B:
  //   dim 0 (0 -> 1):  50 + 65536 / 214.7483648 = 50 + 305.17578125 = 355.18 -> 355
  //   dim 1 (0 -> 2):  500 + 610.3515625                              -> 1110
  //   dim 2 (0 -> 16): 2 * 2000 + 1220.703125                          -> 5220
  //   0 -> 18 = (0,1,1) differs in dims 1 and 2: dim 1's figure only, 1110 (not 5220, not 6330)
  //   0 -> 19 = (1,1,1) differs everywhere: dim 0's, 355;  2 -> 34 differs in dim 2 only: 5220.
  Harness h(three_d());
  EXPECT_EQ(h.net.delay(0, 1, 65536), 355u);
  EXPECT_EQ(h.net.delay(0, 2, 65536), 1110u);
  EXPECT_EQ(h.net.delay(0, 16, 65536), 5220u);
  EXPECT_EQ(h.net.delay(0, 18, 65536), 1110u);
  EXPECT_EQ(h.net.delay(18, 0, 65536), 1110u);
  EXPECT_EQ(h.net.delay(0, 19, 65536), 355u);
  EXPECT_EQ(h.net.delay(2, 34, 65536), 5220u);
  // Dim 1 is fully connected: coordinates 0 and 7 are still one hop, 0 -> 14 = (0,7,0): 1110.
  EXPECT_EQ(h.net.delay(0, 14, 65536), 1110u);
}

TEST(CongestionUnaware, SendSchedulesANetworkEventAndHandleReportsTheArrival) {
  // Ring 8: send(0 -> 1, 32768 B, id 42) at t=0 queues one kNetwork event for NPU 1 at
  // t = 1110 carrying 42; handling it tells the sink 42 at t=1110. Then at t=1110,
  // send(3 -> 0, 131072 B, id 7): 3 hops, 1500 + 2441.40625 -> 3941, so it lands at 5051.
  Harness h(ring8());
  h.net.send(0, 1, 32768, 42);
  ASSERT_EQ(h.queue.size(), 1u);
  EXPECT_TRUE(h.sink.ids.empty());  // nothing arrives at send time
  Event e = h.queue.pop();
  EXPECT_EQ(e.time, 1110u);
  EXPECT_EQ(e.target, EventTarget::kNetwork);
  EXPECT_EQ(e.npu, 1u);
  EXPECT_EQ(e.arg, 42u);
  h.net.handle(e);
  EXPECT_EQ(h.sink.ids, (std::vector<std::uint64_t>{42}));
  EXPECT_EQ(h.sink.times, (std::vector<Tick>{1110}));

  h.net.send(3, 0, 131072, 7);
  e = h.queue.pop();
  EXPECT_EQ(e.time, 5051u);
  EXPECT_EQ(e.npu, 0u);
  EXPECT_EQ(e.arg, 7u);
  h.net.handle(e);
  EXPECT_EQ(h.sink.ids, (std::vector<std::uint64_t>{42, 7}));
  EXPECT_EQ(h.sink.times, (std::vector<Tick>{1110, 5051}));
}

TEST(CongestionUnaware, ConcurrentMessagesDoNotShareBandwidth) {
  // Ring 8, three 32768 B messages 0 -> 1 sent at t=0 (ids 1, 2, 3) and one 0 -> 3 (id 4):
  // no sharing, so 1, 2, 3 all arrive at 1110 in send order, and 4 at 2110.
  Harness h(ring8());
  h.net.send(0, 1, 32768, 1);
  h.net.send(0, 3, 32768, 4);
  h.net.send(0, 1, 32768, 2);
  h.net.send(0, 1, 32768, 3);
  while (!h.queue.empty()) h.net.handle(h.queue.pop());
  EXPECT_EQ(h.sink.ids, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(h.sink.times, (std::vector<Tick>{1110, 1110, 1110, 2110}));
}

TEST(CongestionUnaware, ZeroDelayMessageArrivesAtTheSameTick) {
  // Ring 8 with 0 ns links, 0 B: delay floor(0 + 0) = 0, so the event is at now (t=0).
  Harness h(TopologySpec{{{DK::kRing, 8, 50, 0}}});
  EXPECT_EQ(h.net.delay(0, 1, 0), 0u);
  h.net.send(0, 1, 0, 9);
  const Event e = h.queue.pop();
  EXPECT_EQ(e.time, 0u);
  h.net.handle(e);
  EXPECT_EQ(h.sink.ids, (std::vector<std::uint64_t>{9}));
}

}  // namespace
}  // namespace chakrasim::network
