// Tests of the network backend table: backends(), find_backend, register_backend and
// make_network, including the error for an unknown name that lists the valid ones, and the
// rows' flags against what the built backends do.
#include "network/network.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/event_queue.h"
#include "network/analytical/congestion_aware.h"
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
    ASSERT_NE(b.models, nullptr);
    EXPECT_GT(std::string(b.models).size(), 10u) << b.name;
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

TEST(NetworkRegistry, EveryRowIsComplete) {
  // Every row: a unique name, a line on what it models and one on what it ignores, the YAML keys
  // it reads, and a factory.
  std::set<std::string> names;
  for (const BackendInfo& b : backends()) {
    ASSERT_NE(b.name, nullptr);
    SCOPED_TRACE(b.name);
    EXPECT_TRUE(names.insert(b.name).second) << "duplicate name";
    ASSERT_NE(b.ignores, nullptr);
    EXPECT_GT(std::string(b.ignores).size(), 10u);
    EXPECT_FALSE(b.params.empty());
    EXPECT_NE(b.make, nullptr);
  }
}

TEST(NetworkRegistry, TheAnalyticalRowsFlags) {
  // Both analytical backends fold onto NPU 0 and are driven by the global queue alone; only the
  // congestion-aware one has links.
  const BackendInfo& unaware = find_backend("congestion-unaware");
  EXPECT_TRUE(unaware.shift_invariant);
  EXPECT_FALSE(unaware.has_links);
  EXPECT_FALSE(unaware.own_engine);
  const BackendInfo& aware = find_backend("congestion-aware");
  EXPECT_TRUE(aware.shift_invariant);
  EXPECT_TRUE(aware.has_links);
  EXPECT_FALSE(aware.own_engine);
  // Both read the four keys of the analytical YAML.
  for (const BackendInfo* b : {&unaware, &aware}) {
    EXPECT_EQ(std::vector<std::string>(b->params.begin(), b->params.end()),
              (std::vector<std::string>{"topology", "npus_count", "bandwidth", "latency"}));
  }
}

TEST(NetworkRegistry, FlagsAgreeWithTheBuiltBackends) {
  // Built on Ring 8: has_links <=> link_count() > 0.
  const Topology topology(TopologySpec{{{DimensionKind::kRing, 8, 50, 500}}});
  for (const BackendInfo& b : backends()) {
    SCOPED_TRACE(b.name);
    EventQueue queue;
    NullSink sink;
    const std::unique_ptr<Network> net = b.make(topology, queue, sink, nullptr);
    EXPECT_EQ(b.has_links, net->link_count() > 0);
  }
  // The row's factory builds its own class.
  EventQueue queue;
  NullSink sink;
  EXPECT_NE(dynamic_cast<CongestionAware*>(make_network("congestion-aware", topology, queue, sink).get()), nullptr);
}

// A test-only backend: every message arrives 7 ns after it was sent.
class SevenNs final : public Network {
 public:
  SevenNs(EventQueue& queue, ArrivalSink& sink) : queue_(queue), sink_(sink) {}
  void send(NpuId, NpuId dst, std::uint64_t, std::uint64_t message) override {
    queue_.schedule(queue_.now() + 7, EventTarget::kNetwork, 0, dst, message);
  }
  void handle(const Event& event) override { sink_.on_arrival(event.arg); }

 private:
  EventQueue& queue_;
  ArrivalSink& sink_;
};

std::unique_ptr<Network> make_seven_ns(const Topology&, EventQueue& queue, ArrivalSink& sink, const Folding*) {
  return std::make_unique<SevenNs>(queue, sink);
}

// Registers "test-seven-ns" once per process (tests of one binary share the table).
void register_seven_ns() {
  const bool present = std::any_of(backends().begin(), backends().end(),
                                   [](const BackendInfo& b) { return std::string(b.name) == "test-seven-ns"; });
  if (present) return;
  register_backend({.name = "test-seven-ns",
                    .models = "a fixed 7 ns per message, for the registry's tests",
                    .ignores = "bytes, distance and every other message",
                    .shift_invariant = false,
                    .has_links = false,
                    .own_engine = false,
                    .params = {"topology", "npus_count"},
                    .make = &make_seven_ns});
}

TEST(NetworkRegistry, ANewBackendIsOneRow) {
  // After one register_backend call the name is listed, found, named in the unknown-name error
  // and built: a send at t = 0 arrives at t = 7.
  register_seven_ns();
  const BackendInfo& b = find_backend("test-seven-ns");
  EXPECT_STREQ(b.models, "a fixed 7 ns per message, for the registry's tests");
  EXPECT_NE(error_of([] { find_backend("nope"); }).find("test-seven-ns"), std::string::npos);
  const Topology topology(TopologySpec{{{DimensionKind::kRing, 8, 50, 500}}});
  EventQueue queue;
  NullSink sink;
  const std::unique_ptr<Network> net = make_network("test-seven-ns", topology, queue, sink);
  net->send(0, 5, 1 << 20, 42);
  const Event e = queue.pop();
  EXPECT_EQ(e.time, 7u);
  net->handle(e);
  EXPECT_EQ(sink.last, 42u);
}

TEST(NetworkRegistry, RegisteringATakenNameOrNoFactoryFails) {
  // Names stay unique, and a row without a factory could never be built.
  register_seven_ns();
  const std::size_t rows = backends().size();
  BackendInfo copy = find_backend("congestion-aware");
  EXPECT_NE(error_of([&] { register_backend(copy); }).find("\"congestion-aware\" is registered already"),
            std::string::npos);
  copy.name = "test-no-factory";
  copy.make = nullptr;
  EXPECT_NE(error_of([&] { register_backend(copy); }).find("needs a name and a factory"), std::string::npos);
  EXPECT_EQ(backends().size(), rows);
}

TEST(NetworkRegistry, DocsListEveryRowAsTheTableHasIt) {
  // docs/network.md's backend table has one line per row, "| name | models | ignores | flags
  // | keys |", written from the table: a change to a row shows up here until the docs follow.
  std::ifstream in(std::filesystem::path(CHAKRASIM_SOURCE_DIR) / "docs" / "network.md");
  ASSERT_TRUE(in) << "docs/network.md";
  std::stringstream text;
  text << in.rdbuf();
  for (const BackendInfo& b : backends()) {
    if (std::string(b.name).rfind("test-", 0) == 0) continue;  // rows registered by tests
    std::string keys;
    for (const char* k : b.params) keys += std::string(keys.empty() ? "" : ", ") + k;
    auto yes = [](bool flag) { return flag ? "yes" : "no"; };
    const std::string line = std::string("| ") + b.name + " | " + b.models + " | " + b.ignores + " | " +
                             yes(b.shift_invariant) + " | " + yes(b.has_links) + " | " + yes(b.own_engine) + " | " +
                             keys + " |";
    EXPECT_NE(text.str().find(line), std::string::npos) << "docs/network.md lacks the line\n" << line;
  }
}

}  // namespace
}  // namespace chakrasim::network
