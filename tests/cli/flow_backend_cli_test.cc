// The flow backend where its model and congestion-aware's coincide: ring collectives on rings,
// where each link carries one message at a time and every message crosses one link. Both then
// charge latency plus serialisation, truncated once: the figures agree to the ns.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

// The number of "exposed collectives by group kind: all NPUs 117.780 µs." (std::regex draws a
// false -Wmaybe-uninitialized from gcc 12 in the sanitizer build).
std::string exposed(const CommandResult& r) {
  const std::string label = "exposed collectives by group kind: all NPUs ";
  const std::size_t at = r.out.find(label);
  if (at == std::string::npos) return "(no figure)\n" + r.out + r.err;
  const std::size_t from = at + label.size();
  return r.out.substr(from, r.out.find(' ', from) - from);
}

TEST(FlowBackend, AgreesWithCongestionAwareWhereTheModelsCoincide) {
  const auto dir = temp_dir("flow_backend_coincide");
  ASSERT_EQ(run_binary({"demo", "--write-inputs", dir.string()}).exit_code, 0);
  for (const std::string network : {"topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n",
                                    "topology: [ Ring, Ring ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 25.0 ]\n"
                                    "latency: [ 500.0, 700.0 ]\n"}) {
    SCOPED_TRACE(network);
    write_bytes(dir / "net.yml", network);
    std::vector<std::string> args = {"run",
                                     "--workload",
                                     (dir / "all_reduce").string(),
                                     "--system",
                                     (dir / "system.json").string(),
                                     "--network",
                                     (dir / "net.yml").string(),
                                     "--backend"};
    args.push_back("congestion-aware");
    const CommandResult aware = run_binary(args);
    args.back() = "flow";
    const CommandResult flow = run_binary(args);
    ASSERT_EQ(aware.exit_code, 0) << aware.err;
    ASSERT_EQ(flow.exit_code, 0) << flow.err;
    EXPECT_EQ(exposed(flow), exposed(aware));
  }
  // The tutorial's figure itself.
  write_bytes(dir / "net.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
  EXPECT_EQ(exposed(run_binary({"run", "--workload", (dir / "all_reduce").string(), "--system",
                                (dir / "system.json").string(), "--network", (dir / "net.yml").string(), "--backend",
                                "flow"})),
            "117.780");  // µs
}

}  // namespace
}  // namespace chakrasim::test
