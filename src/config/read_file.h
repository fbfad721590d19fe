// Reading a whole configuration file, with an error that names it.
#pragma once

#include <string>

namespace chakrasim::config {

// The file's contents; throws Error naming `path` and `what` ("network configuration", ...).
std::string read_text_file(const std::string& path, const char* what);

}  // namespace chakrasim::config
