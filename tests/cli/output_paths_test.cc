// Every output of every command is checked, and its folders created, before the work starts: a
// missing folder must not be found after the simulation or conversion has run. And --quiet
// hides the summary, never a warning.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// The demo's inputs as files: DIR/all_reduce.{0..7}.et, DIR/system.json, DIR/network.yml.
struct DemoInputs {
  fs::path dir;
  explicit DemoInputs(const std::string& name) : dir(temp_dir(name)) {
    const CommandResult r = run_binary({"demo", "--write-inputs", (dir / "in").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  std::vector<std::string> run(std::vector<std::string> extra, const std::string& workload = "all_reduce") const {
    std::vector<std::string> args = {"run",
                                     "--workload",
                                     (dir / "in" / workload).string(),
                                     "--system",
                                     (dir / "in" / "system.json").string(),
                                     "--network",
                                     (dir / "in" / "network.yml").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
};

TEST(OutputPaths, RunCreatesTheFoldersOfEveryOutput) {
  DemoInputs in("output_paths_run_folders");
  const fs::path out = in.dir / "new" / "deeper";
  const CommandResult r =
      run_binary(in.run({"--json", (out / "j" / "r.json").string(), "--stats", (out / "s" / "n.csv").string(),
                         "--timeline", (out / "t" / "t.json").string(), "--report", (out / "report").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(out / "j" / "r.json"));
  EXPECT_TRUE(fs::is_regular_file(out / "s" / "n.csv"));
  EXPECT_TRUE(fs::is_regular_file(out / "t" / "t.json"));
  EXPECT_TRUE(fs::is_regular_file(out / "report" / "index.html"));
}

// The workload does not exist: an error about it would mean the outputs were checked after the
// inputs were read. Each bad output must be named first.
TEST(OutputPaths, RunRefusesABadOutputBeforeReadingAnyInput) {
  DemoInputs in("output_paths_run_refuses");
  const fs::path blocker = in.dir / "a_file";
  std::ofstream(blocker) << "x";
  struct Case {
    std::string option, path, says;
  };
  const std::vector<Case> cases = {
      {"--json", in.dir.string(), "is a folder"},
      {"--stats", (blocker / "n.csv").string(), "cannot create the folder"},
      {"--timeline", (blocker / "sub" / "t.json").string(), "cannot create the folder"},
      {"--report", blocker.string(), "cannot create the folder"},
  };
  for (const Case& c : cases) {
    const CommandResult r = run_binary(in.run({c.option, c.path}, "no_such_workload"));
    EXPECT_EQ(r.exit_code, 1) << c.option;
    EXPECT_THAT(r.err, HasSubstr("error: " + c.option + ": ")) << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says)) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("no_such_workload"))) << r.err;
  }
}

TEST(OutputPaths, ConvertersAndGeneratorsCreateTheirFolders) {
  const fs::path dir = temp_dir("output_paths_tools");
  DemoInputs in("output_paths_tools_inputs");
  const std::string et = (in.dir / "in" / "all_reduce.0.et").string();
  {
    const CommandResult r = run_binary({"chakra", "jsonize", et, "--out", (dir / "j" / "a.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_regular_file(dir / "j" / "a.json"));
  }
  {  // the positional form stays
    const CommandResult r =
        run_binary({"chakra", "dejsonize", (dir / "j" / "a.json").string(), (dir / "d" / "a.0.et").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(file_bytes(dir / "d" / "a.0.et"), file_bytes(et));
  }
  {
    const CommandResult r = run_binary({"chakra", "visualize", et, "--out", (dir / "v" / "a.dot").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_regular_file(dir / "v" / "a.dot"));
  }
  {
    const CommandResult r = run_binary({"generate", "llm", "--layers", "2", "--hidden", "64", "--heads", "2", "--seq",
                                        "32", "--vocab", "128", "--out", (dir / "llm" / "deep" / "t").string(),
                                        "--network-out", (dir / "llm" / "n" / "net.yml").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_regular_file(dir / "llm" / "deep" / "t.0.et"));
    EXPECT_TRUE(fs::is_regular_file(dir / "llm" / "n" / "net.yml"));
  }
}

TEST(OutputPaths, APrefixThatIsAFolderIsRefused) {
  const fs::path dir = temp_dir("output_paths_prefix_folder");
  const CommandResult r = run_binary({"generate", "llm", "--layers", "2", "--hidden", "64", "--heads", "2", "--seq",
                                      "32", "--vocab", "128", "--out", dir.string() + "/"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: --out: " + dir.string() + "/ is a folder; expected a file prefix such as " +
                               dir.string() + "/trace"));
}

TEST(Quiet, HidesTheSummaryButNotWarnings) {
  DemoInputs in("output_paths_quiet_warns");
  const fs::path system = in.dir / "in" / "system.json";
  std::string text = file_bytes(system);
  text.insert(text.find('{') + 1, "\"scheduling-polcy\": \"LIFO\", ");
  write_bytes(system, text);
  const CommandResult r = run_binary(in.run({"-q"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning:"));
  EXPECT_THAT(r.err, HasSubstr("scheduling-polcy"));
  EXPECT_THAT(r.out, Not(HasSubstr("µs")));  // no summary
}

}  // namespace
}  // namespace chakrasim::test
