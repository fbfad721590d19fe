// One place for generators: `chakrasim generate llm|micro` is canonical, `chakrasim chakra
// generate llm|micro` the older spelling; both write the same bytes. A missing or unknown
// subcommand is an error naming the valid ones, with exit code 1.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every file under `a` has a twin with the same bytes under `b`, and vice versa.
void expect_same_files(const fs::path& a, const fs::path& b) {
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(a)) {
    ++files;
    const fs::path twin = b / entry.path().filename();
    ASSERT_TRUE(fs::exists(twin)) << twin;
    EXPECT_EQ(bytes_of(entry.path()), bytes_of(twin)) << entry.path().filename();
  }
  EXPECT_GT(files, 0u);
  EXPECT_EQ(files, static_cast<std::size_t>(std::distance(fs::directory_iterator(b), fs::directory_iterator())));
}

TEST(GenerateSpellings, MicroWritesTheSameUnderBothSpellings) {
  const fs::path dir = temp_dir("generate_micro_spellings");
  for (const auto& [name, prefix] : {std::pair{"new", std::vector<std::string>{"generate"}},
                                     std::pair{"old", std::vector<std::string>{"chakra", "generate"}}}) {
    std::vector<std::string> args = prefix;
    args.insert(args.end(), {"micro", "--npus", "4", "--out", (dir / name).string(), "--collective", "all_gather",
                             "--coll-size-mb", "1"});
    const CommandResult r = run_binary(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  expect_same_files(dir / "new", dir / "old");
}

TEST(GenerateSpellings, LlmWritesTheSameUnderBothSpellings) {
  const fs::path dir = temp_dir("generate_llm_spellings");
  for (const auto& [name, prefix] : {std::pair{"new", std::vector<std::string>{"generate"}},
                                     std::pair{"old", std::vector<std::string>{"chakra", "generate"}}}) {
    fs::create_directories(dir / name);
    std::vector<std::string> args = prefix;
    args.insert(args.end(), {"llm",
                             "--layers",
                             "2",
                             "--hidden",
                             "256",
                             "--heads",
                             "4",
                             "--seq",
                             "128",
                             "--vocab",
                             "1000",
                             "--dp",
                             "2",
                             "--tp",
                             "2",
                             "--out",
                             (dir / name / "t").string(),
                             "--network-out",
                             (dir / name / "net.yml").string(),
                             "--system-out",
                             (dir / name / "sys.json").string()});
    const CommandResult r = run_binary(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  expect_same_files(dir / "new", dir / "old");
}

TEST(GenerateSpellings, MissingOrUnknownSubcommandsAreErrors) {
  const CommandResult none = run_binary({"generate"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("error: chakrasim generate needs a subcommand: llm, micro"));
  const CommandResult unknown = run_binary({"generate", "lmm"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("error: unknown subcommand \"lmm\" of chakrasim generate; expected one of: llm, "
                                     "micro"));
  const CommandResult top = run_binary({"simulate"});
  EXPECT_EQ(top.exit_code, 1);
  EXPECT_THAT(top.err, HasSubstr("unknown subcommand \"simulate\" of chakrasim"));
  const CommandResult bad_flag = run_binary({"generate", "micro", "--npus"});
  EXPECT_EQ(bad_flag.exit_code, 1);
  EXPECT_THAT(bad_flag.err, HasSubstr("error: "));
  // Help still exits 0 and lists both generators.
  const CommandResult help = run_binary({"generate", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("llm"));
  EXPECT_THAT(help.out, HasSubstr("micro"));
}

}  // namespace
}  // namespace chakrasim::test
