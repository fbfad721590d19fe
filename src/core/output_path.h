// Outputs are checked before the work that produces them: a missing folder for a timeline must
// not be found after an hour of simulation. Each function creates the parent folders it needs
// and throws Error naming the option, the path and why it cannot be written.
#pragma once

#include <string>
#include <string_view>

namespace chakrasim {

// `path` will be written as a file: its parent folders exist afterwards, and `path` is not a
// folder. `option` names it in errors ("--timeline").
void prepare_output_file(const std::string& path, std::string_view option);

// Files PREFIX<anything> will be written (PREFIX.0.et, PREFIX.groups.json): the prefix's folder
// exists afterwards. A prefix that is an existing folder or ends in '/' is refused, since its
// files would be hidden files named ".0.et".
void prepare_output_prefix(const std::string& prefix, std::string_view option);

// `dir` will be a folder of outputs: it exists afterwards and is a folder.
void prepare_output_dir(const std::string& dir, std::string_view option);

}  // namespace chakrasim
