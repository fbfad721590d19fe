// The Makefile's entry points do what the README promises: `make run` builds the simulator
// alone (a fresh clone must not wait minutes for the test binaries before the first result).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// `make -n` prints the recipe without running it; BUILD points away from the real build folder.
CommandResult dry_run(const std::string& goal) {
  return run_program("make", {"-n", "-C", CHAKRASIM_SOURCE_DIR, goal, "BUILD=/nonexistent/build", "JOBS=2"});
}

TEST(MakeTargets, RunBuildsOnlyTheSimulator) {
  const CommandResult r = dry_run("run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cmake --build /nonexistent/build -j 2 --target chakrasim\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("cmake --build /nonexistent/build -j 2\n")));
  EXPECT_THAT(r.out, HasSubstr("/nonexistent/build/chakrasim demo"));
}

TEST(MakeTargets, TestBuildsEverything) {
  const CommandResult r = dry_run("test");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cmake --build /nonexistent/build -j 2\n"));
  EXPECT_THAT(r.out, HasSubstr("ctest"));
}

}  // namespace
}  // namespace chakrasim::test
