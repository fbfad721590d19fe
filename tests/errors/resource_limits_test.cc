// A run that cannot fit in memory fails at once with a message, before it allocates.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/resources.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

// 2^31 NPUs at hundreds of bytes each is far beyond any machine's memory: refused before a
// single trace file is opened (there are none here).
TEST(ResourceLimits, HugeNetworkIsRefusedEarly) {
  const auto dir = temp_dir("limits_network");
  std::ofstream(dir / "n.yml") << "topology: [ Ring, Ring ]\nnpus_count: [ 65536, 32768 ]\nbandwidth: [ 50, 50 "
                                  "]\nlatency: [ 500, 500 ]\n";
  std::ofstream(dir / "s.json") << R"({"preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"]})";
  const CommandResult r = run_binary({"run", "--workload", (dir / "none").string(), "--system",
                                      (dir / "s.json").string(), "--network", (dir / "n.yml").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr((dir / "n.yml").string() + ": a network of 2147483648 NPUs would need about"));
  EXPECT_THAT(r.err, HasSubstr("is available"));
}

// 4294967295 chunks of a 1 GiB all-reduce (about 2^30 chunks once the chunk size reaches a byte
// per NPU) on 8 NPUs: every chunk is a stream alive at once, terabytes in all.
TEST(ResourceLimits, TooManyChunksIsRefused) {
  sim::Inputs in;
  in.network = network_of({{network::DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 4294967295u, 1);
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, 1ull << 30), 8);
  EXPECT_GT(sim::estimate_memory_bytes(in), available_memory_bytes());
  EXPECT_THAT([&] { sim::simulate(in); }, ::testing::ThrowsMessage<Error>(HasSubstr("\"preferred-dataset-splits\" "
                                                                                    "4294967295: the largest "
                                                                                    "collective in 4294967296 chunks "
                                                                                    "(one NPU's share) would need")));
}

// A small all-reduce is still cut into the split count of chunks (tiny chunks are inflated to one
// byte per NPU), so its size does not bound the estimate: 4e9 splits of 1 MiB ran for hours.
TEST(ResourceLimits, TooManyChunksOfASmallCollectiveIsRefused) {
  sim::Inputs in;
  in.network = network_of({{network::DimensionKind::kRing, 8, 50, 500}});
  in.system = system_of("ring", 1, 4294967295u, 1);
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, 1ull << 20), 8);
  EXPECT_THAT([&] { sim::simulate(in); }, ::testing::ThrowsMessage<Error>(HasSubstr("the largest collective in "
                                                                                    "4294967296 chunks")));
}

TEST(ResourceLimits, FormatBytes) {
  EXPECT_EQ(format_bytes(512), "512 bytes");
  EXPECT_EQ(format_bytes(262144), "256.0 KiB");
  EXPECT_EQ(format_bytes(3u << 20), "3.0 MiB");
  EXPECT_EQ(format_bytes(3ull << 30), "3.0 GiB");
}

}  // namespace
}  // namespace chakrasim::test
