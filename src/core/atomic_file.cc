#include "core/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace chakrasim {
namespace {

// A name no other writer of the same path uses: this process, and a counter within it.
std::string temporary_name(const std::string& path) {
  static std::atomic<std::uint64_t> counter{0};
  return fmt::format("{}.tmp-{}-{}", path, ::getpid(), counter++);
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string_view what)
    : path_(std::move(path)), target_(path_), what_(what), file_(nullptr, &std::fclose) {
  namespace fs = std::filesystem;
  std::error_code ec;  // a path that does not exist yet is no error here
  if (fs::is_symlink(fs::symlink_status(path_, ec))) {
    target_ = fs::weakly_canonical(path_, ec).string();
    if (ec) fail("{}: cannot follow the link to write {}: {}", path_, what_, ec.message());
  }
  const fs::file_status status = fs::status(target_, ec);
  if (fs::is_directory(status)) fail("{}: is a folder; expected a file to write {} to", path_, what_);
  stream_ = fs::exists(status) && !fs::is_regular_file(status);
  if (!stream_) temp_ = temporary_name(target_);
  file_.reset(std::fopen(stream_ ? target_.c_str() : temp_.c_str(), "wb"));
  if (!file_) {
    fail("{}: cannot create {} ({}; does the folder exist and can it be written?)", path_, what_, std::strerror(errno));
  }
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  file_.reset();
  if (stream_) return;
  std::error_code ec;
  std::filesystem::remove(temp_, ec);
}

void AtomicFile::write(std::string_view bytes) {
  if (bytes.empty()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_.get()) != bytes.size()) {
    fail("{}: error while writing {}: {}", path_, what_, std::strerror(errno));
  }
}

void AtomicFile::commit() {
  if (std::fflush(file_.get()) != 0) fail("{}: error while writing {}: {}", path_, what_, std::strerror(errno));
  const int closed = std::fclose(file_.release());
  if (closed != 0) fail("{}: error while writing {}: {}", path_, what_, std::strerror(errno));
  committed_ = stream_;
  if (stream_) return;
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
    fail("{}: cannot put {} in place: {}", path_, what_, std::strerror(error));
  }
  committed_ = true;
}

void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view what) {
  AtomicFile file(path, what);
  file.write(bytes);
  file.commit();
}

}  // namespace chakrasim
