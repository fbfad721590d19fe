// Every example under examples/ runs to the end through the binary and prints its summary in
// real units; the tutorial gives the reference's 117780 cycles.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

struct Example {
  const char* dir;
  const char* workload;  // prefix inside the example's folder
  int npus;
};

class Examples : public ::testing::TestWithParam<Example> {};

TEST_P(Examples, RunsAndPrintsTheSummaryInRealUnits) {
  const Example& e = GetParam();
  const std::filesystem::path dir = std::filesystem::path(CHAKRASIM_SOURCE_DIR) / "examples" / e.dir;
  const CommandResult r = run_binary({"run", "--workload", (dir / e.workload).string(), "--system",
                                      (dir / "system.json").string(), "--network", (dir / "network.yml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("Summary: " + std::to_string(e.npus) + " of " + std::to_string(e.npus) + " NPUs finished"));
  // The run time is in µs, ms or s; "cycles" appears only in the compatible sys[i] lines.
  // (No std::regex: gcc 12 warns inside it under the sanitizer build.)
  const std::size_t at = r.out.find("the run takes ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream figure(r.out.substr(at + 14));
  double value = 0;
  std::string unit;
  figure >> value >> unit;
  EXPECT_GT(value, 0) << r.out;
  EXPECT_TRUE(unit == "µs" || unit == "ms" || unit == "s") << unit;
  std::size_t cycles_lines = 0, sys_lines = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    cycles_lines += line.find("cycles") != std::string::npos;
    sys_lines += line.rfind("sys[", 0) == 0;
  }
  EXPECT_EQ(cycles_lines, sys_lines);
  EXPECT_EQ(sys_lines, static_cast<std::size_t>(e.npus));
}

INSTANTIATE_TEST_SUITE_P(All, Examples,
                         ::testing::Values(Example{"tutorial", "all_reduce", 8},
                                           Example{"h100-node", "traces/workload", 8},
                                           Example{"cluster-2d", "traces/workload", 32},
                                           Example{"cluster-3d", "traces/workload", 128}),
                         [](const auto& example) {
                           std::string n = example.param.dir;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(Examples, TutorialGivesTheReferenceFigure) {
  const std::filesystem::path dir = std::filesystem::path(CHAKRASIM_SOURCE_DIR) / "examples" / "tutorial";
  const CommandResult r = run_binary({"run", "--workload", (dir / "all_reduce").string(), "--system",
                                      (dir / "system.json").string(), "--network", (dir / "network.yml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("sys[7] finished, 117780 cycles"));
  EXPECT_THAT(r.out, HasSubstr("the run takes 117.780 µs"));
}

}  // namespace
}  // namespace chakrasim::test
