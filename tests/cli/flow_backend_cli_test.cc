// The flow backend where its model and congestion-aware's coincide: ring collectives on rings,
// where each link carries one message at a time and every message crosses one link. Both then
// charge latency plus serialisation, truncated once: the figures agree to the ns.
#include <algorithm>
#include <string>
#include <vector>

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

// The demo's all-reduce on an 8-NPU ring with --flows and --report: one CSV row per message
// (the ring all-reduce, in 4 chunks, sends 2 x 7 steps from each of 8 NPUs per chunk: 448 flows,
// each one hop), and the report has its link utilisation and flow sections. An analytical
// backend refuses --flows.
TEST(FlowBackend, FlowsCsvAndReport) {
  const auto dir = temp_dir("flow_backend_csv");
  ASSERT_EQ(run_binary({"demo", "--write-inputs", dir.string()}).exit_code, 0);
  write_bytes(dir / "net.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
  std::vector<std::string> args = {"run",
                                   "--workload",
                                   (dir / "all_reduce").string(),
                                   "--system",
                                   (dir / "system.json").string(),
                                   "--network",
                                   (dir / "net.yml").string(),
                                   "--flows",
                                   (dir / "flows.csv").string(),
                                   "--report",
                                   (dir / "report").string(),
                                   "--backend",
                                   "flow"};
  const CommandResult r = run_binary(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = file_bytes(dir / "flows.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "src,dst,bytes,start_ns,arrival_ns,completion_ns,hops,gbps");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 448);
  // Every flow crosses one ring link: 32 KiB at 50 GiB/s plus 500 ns, 1110 ns.
  std::size_t rows = 0;
  for (std::size_t at = csv.find('\n') + 1; at < csv.size(); at = csv.find('\n', at) + 1) {
    const std::string row = csv.substr(at, csv.find('\n', at) - at);
    std::vector<std::string> fields;
    for (std::size_t from = 0; from <= row.size();) {
      const std::size_t comma = std::min(row.find(',', from), row.size());
      fields.push_back(row.substr(from, comma - from));
      from = comma + 1;
    }
    ASSERT_EQ(fields.size(), 8u) << row;
    EXPECT_EQ(fields[2], "32768") << row;
    EXPECT_EQ(fields[5], "1110") << row;
    EXPECT_EQ(fields[6], "1") << row;
    ++rows;
  }
  EXPECT_EQ(rows, 448u);
  const std::string page = file_bytes(dir / "report" / "index.html");
  EXPECT_THAT(page, ::testing::HasSubstr("<h2 id=\"links\">Link utilisation</h2>"));
  EXPECT_THAT(page, ::testing::HasSubstr("<h2 id=\"flows\">Flows</h2>"));
  EXPECT_THAT(page, ::testing::HasSubstr("448 flows; completion time (send to last byte) median 1.110"));

  args.back() = "congestion-aware";
  const CommandResult refused = run_binary(args);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, ::testing::HasSubstr("the congestion-aware backend does not carry messages as flows"));
}

}  // namespace
}  // namespace chakrasim::test
