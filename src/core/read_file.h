// Reading a whole input file, with errors that name it and say what it should have been.
//
// Every input the product reads comes through here, so a FIFO, a device such as /dev/zero, a
// directory or a file far larger than its format can need is refused at once, naming the file,
// instead of hanging or growing until the machine runs out of memory.
#pragma once

#include <cstdint>
#include <string>

namespace chakrasim {

// Size caps by what a format can need. Configuration files are written by hand or by a generator
// and are kilobytes; text workloads and MSCCL-IR XML are one line per layer or step; traces
// (Chakra, PyTorch, Kineto, JSON dumps of traces) are the only inputs that reach gigabytes.
inline constexpr std::uint64_t kConfigFileMaxBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kDescriptionFileMaxBytes = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kTraceFileMaxBytes = std::uint64_t{16} << 30;

// The file's bytes. Throws Error naming `path` when it is missing or unreadable ("cannot open the
// <what>: ..."), not a regular file (a directory, FIFO, device or socket: "is a <kind>; expected
// <expected>"), larger than `max_bytes`, or larger than the memory available to hold it.
std::string read_file(const std::string& path, const std::string& what, const std::string& expected,
                      std::uint64_t max_bytes = kConfigFileMaxBytes);

// The kind of a path that is not a regular file ("a directory", "a FIFO", "a character device",
// ...), "a regular file", or "" when it does not exist. For messages that must tell a missing
// file from one of the wrong kind.
std::string file_kind(const std::string& path);

}  // namespace chakrasim
