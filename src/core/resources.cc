#include "core/resources.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace chakrasim {

std::uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      std::uint64_t kib = 0;
      if (fields >> kib) return kib * 1024;
    }
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  return UINT64_MAX;
}

void require_output_space(const std::string& dir, std::uint64_t files, double bytes, const std::string& what) {
  const std::string folder = dir.empty() ? "." : dir;
  struct statvfs fs {};
  if (::statvfs(folder.c_str(), &fs) != 0) return;  // the write reports a missing folder itself
  const double free_bytes = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  if (bytes > free_bytes) {
    fail("{} would write about {} into {}, which has {} free; expected a smaller output", what,
         format_bytes(static_cast<std::uint64_t>(std::min(bytes, 1.8e19))), folder,
         format_bytes(static_cast<std::uint64_t>(free_bytes)));
  }
  if (fs.f_files != 0 && files > fs.f_favail) {
    fail("{} would write {} files into {}, whose file system has room for {} more; expected fewer files", what, files,
         folder, static_cast<std::uint64_t>(fs.f_favail));
  }
}

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024 * 1024) return fmt::format("{:.1f} TiB", b / (1024.0 * 1024 * 1024 * 1024));
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} bytes", bytes);
}

void require_memory(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t available = available_memory_bytes();
  if (bytes > available) {
    fail("{} would need about {} of memory, but only {} is available; expected a smaller run (fewer NPUs, "
         "fewer chunks per collective or smaller traces)",
         what, format_bytes(bytes), format_bytes(available));
  }
}

}  // namespace chakrasim
