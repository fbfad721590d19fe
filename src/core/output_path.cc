#include "core/output_path.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace chakrasim {
namespace {

namespace fs = std::filesystem;

// Creates `dir` and its parents; fails naming the first part that is not a folder.
void make_folder(const fs::path& dir, std::string_view option, const std::string& path) {
  if (dir.empty()) return;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    fail("{}: cannot create the folder {} for {} ({})", option, dir.string(), path,
         ec ? ec.message() : "a file of that name is in the way");
  }
}

void require_writable_folder(const fs::path& dir, std::string_view option, const std::string& path) {
  const fs::path checked = dir.empty() ? fs::path(".") : dir;
  if (::access(checked.c_str(), W_OK | X_OK) != 0) {
    fail("{}: cannot write {}: the folder {} is not writable", option, path, checked.string());
  }
}

}  // namespace

void prepare_output_file(const std::string& path, std::string_view option) {
  if (path.empty()) fail("{}: the output path is empty", option);
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail("{}: {} is a folder; expected a file path", option, path);
  const fs::path parent = fs::path(path).parent_path();
  make_folder(parent, option, path);
  require_writable_folder(parent, option, path);
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0) {
    fail("{}: cannot write {}: the file is not writable", option, path);
  }
}

void prepare_output_prefix(const std::string& prefix, std::string_view option) {
  if (prefix.empty()) fail("{}: the output prefix is empty", option);
  std::error_code ec;
  if (prefix.back() == '/' || fs::is_directory(prefix, ec)) {
    std::string folder = prefix;
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    fail("{}: {} is a folder; expected a file prefix such as {}/trace (for trace.0.et, ...)", option, prefix,
         folder == "/" ? "" : folder);
  }
  const fs::path parent = fs::path(prefix).parent_path();
  make_folder(parent, option, prefix);
  require_writable_folder(parent, option, prefix);
}

void prepare_output_dir(const std::string& dir, std::string_view option) {
  if (dir.empty()) fail("{}: the output folder is empty", option);
  make_folder(dir, option, dir);
  require_writable_folder(dir, option, dir);
}

}  // namespace chakrasim
