// Reading a whole input file, with errors that name it and say what it should have been.
#pragma once

#include <string>

namespace chakrasim {

// The file's bytes. Throws Error naming `path`: "is a directory; expected <expected>" for a
// directory, "cannot open the <what>: ..." for a missing or unreadable file.
std::string read_file(const std::string& path, const std::string& what, const std::string& expected);

}  // namespace chakrasim
