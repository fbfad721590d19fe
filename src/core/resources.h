// How much memory the machine can give a run, so that a run that cannot fit fails at once with
// a message instead of being killed by the kernel halfway.
#pragma once

#include <cstdint>
#include <string>

namespace chakrasim {

// MemAvailable from /proc/meminfo, or the physical memory where that is unknown (bytes).
std::uint64_t available_memory_bytes();

// Throws Error when `bytes` (an estimate of what `what` needs) exceeds the available memory.
void require_memory(std::uint64_t bytes, const std::string& what);

// Throws Error, before anything is written, when `files` files of `bytes` in all (an estimate of
// what `what` writes into `dir`) would not fit in the free space or free inodes of dir's file
// system. Unknown figures (a file system that does not say) pass.
void require_output_space(const std::string& dir, std::uint64_t files, double bytes, const std::string& what);

// "1.5 GiB", "800.0 MiB", "64.0 KiB", "512 bytes"
std::string format_bytes(std::uint64_t bytes);

}  // namespace chakrasim
