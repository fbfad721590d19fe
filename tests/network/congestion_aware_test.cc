// Tests of the congestion-aware backend (network/analytical/congestion_aware.h) alone, against
// queueing worked out by hand. Every case uses links of 50 GiB/s = 53.6870912 B/ns and 500 ns,
// and messages of 1 MiB = 1048576 B, so one message's serialisation is s = 1048576 / 53.6870912
// = 19531.25 ns. A message holds a link for floor(s) = 19531 ns and reaches the far end
// floor(500 + s) = 20031 ns after it entered the link.
#include "network/analytical/congestion_aware.h"

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/event_queue.h"

namespace chakrasim::network {
namespace {

using DK = DimensionKind;
using ::testing::ElementsAre;
using Busy = std::tuple<std::uint32_t, Tick, Tick>;

constexpr std::uint64_t kMiB = 1 << 20;

// Arrival time of each message id, and every link's busy intervals.
struct Recorder final : ArrivalSink, LinkObserver {
  explicit Recorder(const EventQueue& q) : queue(q) {}
  void on_arrival(std::uint64_t message) override { arrived[message] = queue.now(); }
  void on_link_busy(std::uint32_t link, Tick start, Tick end) override { busy.emplace_back(link, start, end); }
  void on_link_share(std::uint32_t, Tick, Tick, double) override { ADD_FAILURE() << "links are not shared here"; }
  const EventQueue& queue;
  std::map<std::uint64_t, Tick> arrived;
  std::vector<Busy> busy;
};

// The backend over one dimension of `npus` NPUs of `kind`, with its own queue.
struct Harness {
  Harness(DK kind, std::uint32_t npus)
      : topology(TopologySpec{{{kind, npus, 50, 500}}}), recorder(queue), net(topology, queue, recorder) {
    net.observe_links(&recorder);
  }
  // Runs every event; the backend is the queue's only user.
  void run() {
    while (!queue.empty()) net.handle(queue.pop());
  }
  Topology topology;
  EventQueue queue;
  Recorder recorder;
  CongestionAware net;
};

TEST(CongestionAware, OneMessageOneHop) {
  // Ring 8, 0 -> 1 at t = 0: link 0 (NPU 0 -> NPU 1) busy [0, 19531], arrival at 20031.
  Harness h(DK::kRing, 8);
  h.net.send(0, 1, kMiB, 7);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(7), 20031u);
  EXPECT_THAT(h.recorder.busy, ElementsAre(Busy{0, 0, 19531}));
}

TEST(CongestionAware, TwoMessagesOnOneLinkSerialize) {
  // Ring 8, two messages 0 -> 1 at t = 0 share link 0, first come first served.
  // First: holds the link [0, 19531], arrives at floor(500 + s) = 20031.
  // Second: waits for the link, holds it [19531, 19531 + 19531 = 39062] and arrives at
  //   19531 + floor(500 + s) = 39562, i.e. 2 x size / bandwidth + latency with the first
  //   serialisation truncated on its own (2 x 19531.25 + 500 = 39562.5 -> 39562).
  Harness h(DK::kRing, 8);
  h.net.send(0, 1, kMiB, 1);
  h.net.send(0, 1, kMiB, 2);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(1), 20031u);
  EXPECT_EQ(h.recorder.arrived.at(2), 39562u);
  EXPECT_THAT(h.recorder.busy, ElementsAre(Busy{0, 0, 19531}, Busy{0, 19531, 39062}));
}

TEST(CongestionAware, MessagesOnDisjointLinksOverlap) {
  // Ring 8 at t = 0: 0 -> 1 (link 0), 2 -> 3 (link 4) and 1 -> 0 (link 3, the other direction of
  // the first pair) share no link, so each arrives as if alone, at 20031.
  Harness h(DK::kRing, 8);
  h.net.send(0, 1, kMiB, 1);
  h.net.send(2, 3, kMiB, 2);
  h.net.send(1, 0, kMiB, 3);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(1), 20031u);
  EXPECT_EQ(h.recorder.arrived.at(2), 20031u);
  EXPECT_EQ(h.recorder.arrived.at(3), 20031u);
  EXPECT_THAT(h.recorder.busy, ElementsAre(Busy{0, 0, 19531}, Busy{4, 0, 19531}, Busy{3, 0, 19531}));
}

TEST(CongestionAware, MultiHopIsStoreAndForward) {
  // Ring 8, 0 -> 3 goes clockwise over three links (0, 2, 4), and the whole message must reach
  // each NPU before it enters the next link: 3 x floor(500 + s) = 3 x 20031 = 60093 (the
  // congestion-unaware backend would charge floor(3 x 500 + s) = 21031).
  Harness h(DK::kRing, 8);
  h.net.send(0, 3, kMiB, 9);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(9), 60093u);
  EXPECT_THAT(h.recorder.busy, ElementsAre(Busy{0, 0, 19531}, Busy{2, 20031, 39562}, Busy{4, 40062, 59593}));
}

TEST(CongestionAware, TwoMultiHopMessagesPipeline) {
  // Ring 8, two messages 0 -> 2 at t = 0 over links 0 then 2.
  // First: link 0 [0, 19531], at NPU 1 at 20031, link 2 [20031, 39562], arrives 40062.
  // Second: link 0 [19531, 39062], at NPU 1 at 19531 + 20031 = 39562, just as the first frees
  //   link 2; it goes on at once: link 2 [39562, 59093], arrives 39562 + 20031 = 59593.
  Harness h(DK::kRing, 8);
  h.net.send(0, 2, kMiB, 1);
  h.net.send(0, 2, kMiB, 2);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(1), 40062u);
  EXPECT_EQ(h.recorder.arrived.at(2), 59593u);
}

TEST(CongestionAware, ASwitchDownLinkIsSharedByItsSenders) {
  // Switch 4, 0 -> 3 and 1 -> 3 at t = 0. The up-links (NPU 0's = 0, NPU 1's = 2) are disjoint:
  // both messages are in the switch at 20031. NPU 3's down-link (7) takes them in the order they
  // arrived (0's was sent first, so its arrival event runs first):
  //   0 -> 3: down-link [20031, 39562], arrives 20031 + 20031 = 40062
  //   1 -> 3: down-link [39562, 59093], arrives 39562 + 20031 = 59593
  Harness h(DK::kSwitch, 4);
  h.net.send(0, 3, kMiB, 1);
  h.net.send(1, 3, kMiB, 2);
  h.run();
  EXPECT_EQ(h.recorder.arrived.at(1), 40062u);
  EXPECT_EQ(h.recorder.arrived.at(2), 59593u);
  EXPECT_THAT(h.recorder.busy,
              ElementsAre(Busy{0, 0, 19531}, Busy{2, 0, 19531}, Busy{7, 20031, 39562}, Busy{7, 39562, 59093}));
}

TEST(CongestionAware, ALaterMessageWaitsOnlyForTheRestOfTheBusyTime) {
  // Ring 8, 0 -> 1 at t = 0, t = 10000 and t = 40000. The link is busy until 19531, so the
  // second holds it [19531, 39062] and arrives at 39562; the third finds the link free again
  // and arrives at 40000 + 20031 = 60031.
  Harness h(DK::kRing, 8);
  h.net.send(0, 1, kMiB, 1);
  h.queue.schedule(10000, EventTarget::kTimers, 0, 0, 0);  // a stand-in for the system's timer
  h.queue.schedule(40000, EventTarget::kTimers, 0, 0, 1);
  while (!h.queue.empty()) {
    const Event e = h.queue.pop();
    if (e.target == EventTarget::kTimers) {
      h.net.send(0, 1, kMiB, 2 + e.arg);
    } else {
      h.net.handle(e);
    }
  }
  EXPECT_EQ(h.recorder.arrived.at(1), 20031u);
  EXPECT_EQ(h.recorder.arrived.at(2), 39562u);
  EXPECT_EQ(h.recorder.arrived.at(3), 60031u);
}

}  // namespace
}  // namespace chakrasim::network
