#include "config/read_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"

namespace chakrasim::config {

std::string read_text_file(const std::string& path, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("{}: is a directory; expected the {} file", path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in && std::filesystem::exists(path, ec)) {
    fail("{}: cannot open the {}: the file exists but is not readable (check its permissions)", path, what);
  }
  if (!in) fail("{}: cannot open the {}: the file does not exist", path, what);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("{}: error while reading the {}", path, what);
  return text;
}

}  // namespace chakrasim::config
