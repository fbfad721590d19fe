#include "core/read_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"

namespace chakrasim {

std::string read_file(const std::string& path, const std::string& what, const std::string& expected) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("{}: is a directory; expected {}", path, expected);
  std::ifstream in(path, std::ios::binary);
  if (!in && std::filesystem::exists(path, ec)) {
    fail("{}: cannot open the {}: the file exists but is not readable (check its permissions)", path, what);
  }
  if (!in) fail("{}: cannot open the {}: the file does not exist", path, what);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("{}: error while reading the {}", path, what);
  return bytes;
}

}  // namespace chakrasim
