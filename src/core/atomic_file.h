// Output files written whole or not at all. The bytes go to a temporary file in the same folder,
// which commit() renames over the path (atomic on POSIX within one file system): a reader, or a
// second run writing the same path, never sees half a file, and a run that fails or is stopped
// halfway leaves what was there before. Without commit() the temporary file is removed.
// A symbolic link is followed (its target is the file written); a path that is a device, a FIFO
// or a socket is written to directly, as a stream (renaming over it would replace the device
// node with a file); a folder is refused.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace chakrasim {

class AtomicFile {
 public:
  // Opens the temporary file; throws Error naming `path` and `what` ("the timeline") if it
  // cannot be created.
  AtomicFile(std::string path, std::string_view what);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends `bytes`; throws Error naming the path when the disk refuses them.
  void write(std::string_view bytes);
  // Flushes, closes and renames the temporary file to the path; throws Error naming it on failure.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_, target_, temp_, what_;  // the user's path, the file it names, the temporary file
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  bool committed_ = false;
  bool stream_ = false;  // a device, FIFO or socket: written in place
};

// Writes `bytes` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view bytes, std::string_view what);

}  // namespace chakrasim
