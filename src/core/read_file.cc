#include "core/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/resources.h"

namespace chakrasim {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every path out of read_file.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string file_kind(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "";
  return kind_of(info.st_mode);
}

std::string read_file(const std::string& path, const std::string& what, const std::string& expected,
                      std::uint64_t max_bytes) {
  // stat before open: opening a FIFO for reading blocks until a writer appears.
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) fail("{}: cannot open the {}: the file does not exist", path, what);
    fail("{}: cannot open the {}: {}", path, what, std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) fail("{}: is {}; expected {}", path, kind_of(info.st_mode), expected);
  // O_NONBLOCK as well, in case the path was swapped for a FIFO after the stat.
  Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == EACCES) {
      fail("{}: cannot open the {}: the file exists but is not readable (check its permissions)", path, what);
    }
    fail("{}: cannot open the {}: {}", path, what, std::strerror(errno));
  }
  if (::fstat(file.fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    fail("{}: is {}; expected {}", path, kind_of(info.st_mode), expected);
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > max_bytes) {
    fail("{}: the {} is {}, more than the {} a {} can need; expected {}", path, what, format_bytes(size),
         format_bytes(max_bytes), what, expected);
  }
  if (size > available_memory_bytes()) {
    fail("{}: the {} is {}, but only {} of memory is available to read it", path, what, format_bytes(size),
         format_bytes(available_memory_bytes()));
  }
  std::string bytes(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  // The size from fstat is what is read: a file that grows while it is read is read as it was.
  while (done < bytes.size()) {
    const ssize_t got = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail("{}: error while reading the {}: {}", path, what, std::strerror(errno));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace chakrasim
