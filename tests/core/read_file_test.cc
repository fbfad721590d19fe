// Every input is read through read_file: regular files only, up to a size cap, the file named in
// every error. A FIFO used to hang the run, /dev/zero to grow it until it ran out of memory.
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/read_file.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

TEST(ReadFile, ReadsARegularFileWhole) {
  const auto dir = temp_dir("read_file_regular");
  std::string bytes(100000, 'x');
  bytes[5] = '\0';
  write_bytes(dir / "a.bin", bytes);
  EXPECT_EQ(read_file((dir / "a.bin").string(), "input", "an input"), bytes);
  write_bytes(dir / "empty", "");
  EXPECT_EQ(read_file((dir / "empty").string(), "input", "an input"), "");
}

TEST(ReadFile, MissingFileSaysItDoesNotExist) {
  const std::string msg = error_of([] { read_file("/nonexistent/x.json", "system configuration", "a file"); });
  EXPECT_EQ(msg, "/nonexistent/x.json: cannot open the system configuration: the file does not exist");
}

TEST(ReadFile, FifoIsRefusedAtOnceInsteadOfWaitingForAWriter) {
  const auto dir = temp_dir("read_file_fifo");
  const std::string fifo = (dir / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string msg = error_of([&] { read_file(fifo, "network configuration", "the network file"); });
  EXPECT_EQ(msg, fifo + ": is a FIFO (named pipe); expected the network file");
  EXPECT_EQ(file_kind(fifo), "a FIFO (named pipe)");
}

TEST(ReadFile, DevicesAndDirectoriesAreRefusedNamingTheirKind) {
  EXPECT_EQ(error_of([] { read_file("/dev/zero", "trace file", "a Chakra trace"); }), "/dev/zero: is a character "
                                                                                      "device; expected a Chakra "
                                                                                      "trace");
  EXPECT_EQ(error_of([] { read_file("/dev/urandom", "trace file", "a Chakra trace"); }), "/dev/urandom: is a character "
                                                                                         "device; expected a Chakra "
                                                                                         "trace");
  const auto dir = temp_dir("read_file_dir");
  EXPECT_EQ(error_of([&] { read_file(dir.string(), "trace file", "a Chakra trace"); }), dir.string() + ": is a "
                                                                                                       "directory; "
                                                                                                       "expected a "
                                                                                                       "Chakra trace");
  EXPECT_EQ(file_kind(dir.string()), "a directory");
  EXPECT_EQ(file_kind((dir / "none").string()), "");
}

TEST(ReadFile, FileAboveTheCapIsRefusedBeforeItIsRead) {
  const auto dir = temp_dir("read_file_cap");
  write_bytes(dir / "big.yml", std::string(2048, ' '));
  const std::string path = (dir / "big.yml").string();
  EXPECT_EQ(read_file(path, "network configuration", "a network file", 2048).size(), 2048u);
  const std::string msg = error_of([&] { read_file(path, "network configuration", "a network file", 2047); });
  EXPECT_THAT(msg, HasSubstr(path + ": the network configuration is 2.0 KiB, more than the"));
  EXPECT_THAT(msg, HasSubstr("expected a network file"));
}

TEST(ReadFile, UnreadableFileSaysSo) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not stop reads";
  const auto dir = temp_dir("read_file_perm");
  write_bytes(dir / "secret", "x");
  ::chmod((dir / "secret").c_str(), 0);
  EXPECT_THAT(error_of([&] { read_file((dir / "secret").string(), "input", "an input"); }), HasSubstr("the file exists "
                                                                                                      "but is not "
                                                                                                      "readable"));
}

}  // namespace
}  // namespace chakrasim::test
