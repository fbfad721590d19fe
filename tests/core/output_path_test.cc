#include "core/output_path.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(OutputPath, FileCreatesItsParentsButNotTheFile) {
  const fs::path dir = temp_dir("output_path_file");
  const fs::path file = dir / "a" / "b" / "out.json";
  prepare_output_file(file.string(), "--json");
  EXPECT_TRUE(fs::is_directory(dir / "a" / "b"));
  EXPECT_FALSE(fs::exists(file));                              // nothing half-written if the run fails later
  prepare_output_file("relative_name_in_cwd.json", "--json");  // no folder part: the working folder
}

TEST(OutputPath, FileThatIsAFolderOrBehindAFileIsRefused) {
  const fs::path dir = temp_dir("output_path_refused");
  std::ofstream(dir / "plain") << "x";
  EXPECT_EQ(error_of([&] { prepare_output_file(dir.string(), "--timeline"); }),
            "--timeline: " + dir.string() + " is a folder; expected a file path");
  EXPECT_THAT(error_of([&] { prepare_output_file((dir / "plain" / "x.json").string(), "--json"); }),
              HasSubstr("--json: cannot create the folder " + (dir / "plain").string()));
  EXPECT_THAT(error_of([&] { prepare_output_file("", "--stats"); }), HasSubstr("--stats: the output path is empty"));
}

TEST(OutputPath, PrefixAndFolder) {
  const fs::path dir = temp_dir("output_path_prefix");
  prepare_output_prefix((dir / "x" / "trace").string(), "--out");
  EXPECT_TRUE(fs::is_directory(dir / "x"));
  EXPECT_FALSE(fs::exists(dir / "x" / "trace"));
  EXPECT_THAT(error_of([&] { prepare_output_prefix((dir / "x").string(), "--out"); }),
              HasSubstr("is a folder; expected a file prefix such as " + (dir / "x").string() + "/trace"));
  prepare_output_dir((dir / "r" / "s").string(), "--report");
  EXPECT_TRUE(fs::is_directory(dir / "r" / "s"));
}

}  // namespace
}  // namespace chakrasim::test
