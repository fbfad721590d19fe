// Tests of the network backend registry: backends(), find_backend and make_network, including
// the error for an unknown name that lists the valid ones.
#include "network/network.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/event_queue.h"
#include "network/analytical/congestion_unaware.h"

namespace chakrasim::network {
namespace {

struct NullSink final : ArrivalSink {
  void on_arrival(std::uint64_t message) override { last = message; }
  std::uint64_t last = 0;
};

// The message of the Error `f` throws, or "" (and a test failure) if it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected chakrasim::Error";
  return "";
}

TEST(NetworkRegistry, ListsCongestionUnawareWithADescription) {
  // backends() names "congestion-unaware", with a description saying what it models.
  bool found = false;
  for (const BackendInfo& b : backends()) {
    ASSERT_NE(b.name, nullptr);
    ASSERT_NE(b.description, nullptr);
    EXPECT_GT(std::string(b.description).size(), 10u) << b.name;
    if (std::string(b.name) == "congestion-unaware") found = true;
  }
  EXPECT_TRUE(found);
}

TEST(NetworkRegistry, FindBackendReturnsTheRegisteredEntry) {
  // find_backend("congestion-unaware") is the entry of backends() with that name.
  const BackendInfo& b = find_backend("congestion-unaware");
  EXPECT_STREQ(b.name, "congestion-unaware");
  bool same = false;
  for (const BackendInfo& listed : backends()) same = same || &listed == &b;
  EXPECT_TRUE(same);
}

TEST(NetworkRegistry, UnknownNameThrowsAnErrorListingTheValidNames) {
  // find_backend("nope"): Error naming "nope" and every registered backend.
  const std::string message = error_of([] { find_backend("nope"); });
  EXPECT_NE(message.find("nope"), std::string::npos) << message;
  for (const BackendInfo& b : backends()) EXPECT_NE(message.find(b.name), std::string::npos) << message;
  EXPECT_NE(message.find("congestion-unaware"), std::string::npos) << message;
  // Names are exact: case and near-misses are unknown too.
  EXPECT_THROW(find_backend("Congestion-Unaware"), Error);
  EXPECT_THROW(find_backend("congestion-unaware "), Error);
  EXPECT_THROW(find_backend(""), Error);
}

TEST(NetworkRegistry, MakeNetworkBuildsTheNamedBackend) {
  // make_network("congestion-unaware") on Ring 8 @ 50 GB/s, 500 ns is a CongestionUnaware:
  // a 32768 B send 0 -> 1 arrives at 500 + 610.3515625 -> 1110, id 5 reaching the sink.
  const Topology topology(TopologySpec{{{DimensionKind::kRing, 8, 50, 500}}});
  EventQueue queue;
  NullSink sink;
  std::unique_ptr<Network> net = make_network("congestion-unaware", topology, queue, sink);
  ASSERT_NE(net, nullptr);
  EXPECT_NE(dynamic_cast<CongestionUnaware*>(net.get()), nullptr);
  net->send(0, 1, 32768, 5);
  const Event e = queue.pop();
  EXPECT_EQ(e.time, 1110u);
  net->handle(e);
  EXPECT_EQ(sink.last, 5u);
}

TEST(NetworkRegistry, EveryListedBackendCanBeBuilt) {
  // The table and the factory agree: make_network builds every name backends() lists
  // (on Ring 8, which every backend supports).
  const Topology topology(TopologySpec{{{DimensionKind::kRing, 8, 50, 500}}});
  for (const BackendInfo& b : backends()) {
    EventQueue queue;
    NullSink sink;
    std::unique_ptr<Network> net;
    EXPECT_NO_THROW(net = make_network(b.name, topology, queue, sink)) << b.name;
    EXPECT_NE(net, nullptr) << b.name;
  }
}

TEST(NetworkRegistry, MakeNetworkWithAnUnknownNameThrowsTheSameError) {
  // make_network("nope", ...): Error naming "nope" and listing "congestion-unaware".
  const Topology topology(TopologySpec{{{DimensionKind::kRing, 8, 50, 500}}});
  EventQueue queue;
  NullSink sink;
  const std::string message = error_of([&] { make_network("nope", topology, queue, sink); });
  EXPECT_NE(message.find("nope"), std::string::npos) << message;
  EXPECT_NE(message.find("congestion-unaware"), std::string::npos) << message;
}

}  // namespace
}  // namespace chakrasim::network
