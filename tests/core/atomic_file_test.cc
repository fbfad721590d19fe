// Output files are written whole or not at all: what a reader sees is the old file or the new
// one, never a part, and a write that does not finish leaves the old one and no litter.
#include <filesystem>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

namespace fs = std::filesystem;

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(AtomicFile, ReplacesTheFileOnlyAtCommit) {
  const auto dir = temp_dir("atomic_commit");
  const auto path = (dir / "out.txt").string();
  write_file_atomically(path, "old", "the test file");
  {
    AtomicFile f(path, "the test file");
    f.write("new, half");
    EXPECT_EQ(file_bytes(path), "old");  // not yet
    f.write(" and the rest");
    f.commit();
  }
  EXPECT_EQ(file_bytes(path), "new, half and the rest");
  EXPECT_EQ(entries(dir), 1u);  // no temporary file left
}

TEST(AtomicFile, AnUnfinishedWriteLeavesTheOldFileAndNoLitter) {
  const auto dir = temp_dir("atomic_abandon");
  const auto path = (dir / "out.txt").string();
  write_file_atomically(path, "old", "the test file");
  {
    AtomicFile f(path, "the test file");
    f.write("never committed");
  }
  EXPECT_EQ(file_bytes(path), "old");
  EXPECT_EQ(entries(dir), 1u);
  EXPECT_THAT([&] { AtomicFile((dir / "no" / "such" / "dir.txt").string(), "the test file"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("cannot create the test file")));
}

// A symbolic link is followed: the file it names gets the bytes and the link stays a link.
TEST(AtomicFile, ALinkIsFollowedToItsFile) {
  const auto dir = temp_dir("atomic_link");
  write_file_atomically((dir / "real.txt").string(), "old", "the test file");
  fs::create_symlink("real.txt", dir / "link.txt");
  write_file_atomically((dir / "link.txt").string(), "new", "the test file");
  EXPECT_TRUE(fs::is_symlink(dir / "link.txt"));
  EXPECT_EQ(file_bytes(dir / "real.txt"), "new");
  EXPECT_EQ(entries(dir), 2u);
}

// A FIFO (as a device) is written to as a stream; renaming over it would put a file in its place.
TEST(AtomicFile, AFifoIsWrittenInPlace) {
  const auto dir = temp_dir("atomic_fifo");
  const std::string fifo = (dir / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so that the writer's open returns
  ASSERT_GE(reader, 0);
  write_file_atomically(fifo, "through the pipe", "the test file");
  char buffer[64] = {};
  const ssize_t got = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0), "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(entries(dir), 1u);
  EXPECT_THAT([&] { write_file_atomically(dir.string(), "x", "the test file"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is a folder; expected a file to write")));
}

// Two runs writing the same --timeline at once: the file that remains is one whole timeline.
TEST(AtomicFile, TwoRunsWritingOneTimelineLeaveValidJson) {
  const auto dir = temp_dir("atomic_two_runs");
  const std::string timeline = (dir / "t.json").string();
  const CommandResult demo = run_binary({"demo", "--write-inputs", (dir / "in").string()});
  ASSERT_EQ(demo.exit_code, 0) << demo.err;
  const std::vector<std::string> args = {"run",
                                         "--workload",
                                         (dir / "in" / "all_reduce").string(),
                                         "--system",
                                         (dir / "in" / "system.json").string(),
                                         "--network",
                                         (dir / "in" / "network.yml").string(),
                                         "-q",
                                         "--timeline",
                                         timeline};
  for (int round = 0; round < 3; ++round) {
    CommandResult a, b;
    std::thread first([&] { a = run_binary(args); });
    std::thread second([&] { b = run_binary(args); });
    first.join();
    second.join();
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_TRUE(nlohmann::json::accept(file_bytes(timeline))) << "round " << round;
  }
  EXPECT_EQ(entries(dir), 2u);  // in/ and t.json
}

}  // namespace
}  // namespace chakrasim::test
