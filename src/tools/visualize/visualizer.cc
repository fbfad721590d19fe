#include "tools/visualize/visualizer.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/error.h"

extern char** environ;  // handed to `dot` unchanged

namespace chakrasim::tools {
namespace {

// A label inside a quoted DOT string for a shape=record node. The reference puts a backslash
// before {}()<>[]|&- (the record syntax gives {}<>| a meaning; the rest it escaped to be safe);
// we also escape `\` and `"`, which it left to break the DOT, and write a newline as \n.
std::string dot_label(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 8);
  for (char c : name) {
    switch (c) {
      case '{':
      case '}':
      case '(':
      case ')':
      case '<':
      case '>':
      case '[':
      case ']':
      case '|':
      case '&':
      case '-':
      case '\\':
      case '"':
        out += '\\';
        out += c;
        break;
      case '\n': out += "\\n"; break;
      case '\r': break;
      default: out += c;
    }
  }
  return out;
}

// Text content of a GraphML element. XML 1.0 cannot hold the control characters other than tab,
// newline and carriage return, even escaped, so they become U+FFFD.
std::string xml_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '\r') out += "&#13;";  // a raw one would be read back as a newline
    else if (byte < 0x20 && c != '\t' && c != '\n') out += "\xef\xbf\xbd";
    else out += c;
  }
  return out;
}

void write_graphml_edge(std::ostream& out, std::uint64_t parent, std::uint64_t child, const char* dependency) {
  out << "    <edge source=\"" << parent << "\" target=\"" << child << "\">\n"
      << "      <data key=\"d1\">" << dependency << "</data>\n"
      << "    </edge>\n";
}

// Removes a temporary file when it goes out of scope.
struct TempFile {
  std::string path;
  ~TempFile() {
    if (!path.empty()) std::remove(path.c_str());
  }
};

// Runs `dot -T<format> -o OUT DOT_FILE` and waits; dot's own messages go to our stderr.
void run_dot(const std::string& dot_program, const std::string& format, const std::string& dot_file,
             const std::string& out_path) {
  std::vector<std::string> args = {"dot", "-T" + format, "-o", out_path, dot_file};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int error = posix_spawn(&pid, dot_program.c_str(), nullptr, nullptr, argv.data(), environ); error != 0) {
    fail("{}: cannot run graphviz's dot ({}): {}", out_path, dot_program, std::strerror(error));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) fail("{}: lost track of graphviz's dot ({}): {}", out_path, dot_program, std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fail("{}: graphviz's dot ({}) failed drawing the graph ({}); its message, if any, is above", out_path, dot_program,
         WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status)) : std::string("killed by a signal"));
  }
}

}  // namespace

GraphFormat graph_format_of(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".dot") return GraphFormat::kDot;
  if (extension == ".graphml") return GraphFormat::kGraphml;
  if (extension == ".svg") return GraphFormat::kSvg;
  if (extension == ".pdf") return GraphFormat::kPdf;
  fail("{}: unknown output format \"{}\"; expected a file name ending in .dot, .graphml, .svg or .pdf", path,
       extension.empty() ? std::string("(no extension)") : extension);
}

void write_dot(const chakra::Trace& trace, std::ostream& out) {
  out << "digraph {\n";
  for (const chakra::Node& node : trace.nodes) {
    out << '\t' << node.id() << " [label=\"" << dot_label(node.name()) << "\" id=" << node.id() << " shape=record]\n";
    for (std::uint64_t parent : node.data_deps())
      out << '\t' << parent << " -> " << node.id() << " [arrowhead=normal]\n";
    for (std::uint64_t parent : node.ctrl_deps()) out << '\t' << parent << " -> " << node.id() << " [arrowhead=tee]\n";
  }
  out << "}\n";
}

void write_graphml(const chakra::Trace& trace, std::ostream& out) {
  out << "<?xml version='1.0' encoding='utf-8'?>\n"
         "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" "
         "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
         "xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns "
         "http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n"
         "  <key id=\"d1\" for=\"edge\" attr.name=\"dependency\" attr.type=\"string\"/>\n"
         "  <key id=\"d0\" for=\"node\" attr.name=\"label\" attr.type=\"string\"/>\n"
         "  <graph edgedefault=\"directed\">\n";
  // A GraphML node id must be unique: a repeated Chakra id keeps its first node's label.
  std::unordered_set<std::uint64_t> declared;
  declared.reserve(trace.nodes.size());
  for (const chakra::Node& node : trace.nodes) {
    if (!declared.insert(node.id()).second) continue;
    out << "    <node id=\"" << node.id() << "\">\n"
        << "      <data key=\"d0\">" << xml_text(node.name()) << "</data>\n"
        << "    </node>\n";
  }
  // Parents outside the file, declared so that every edge ends at a node.
  auto declare_missing = [&](std::uint64_t parent) {
    if (declared.insert(parent).second) out << "    <node id=\"" << parent << "\"/>\n";
  };
  for (const chakra::Node& node : trace.nodes) {
    for (std::uint64_t parent : node.data_deps()) declare_missing(parent);
    for (std::uint64_t parent : node.ctrl_deps()) declare_missing(parent);
  }
  for (const chakra::Node& node : trace.nodes) {
    for (std::uint64_t parent : node.data_deps()) write_graphml_edge(out, parent, node.id(), "data");
    for (std::uint64_t parent : node.ctrl_deps()) write_graphml_edge(out, parent, node.id(), "control");
  }
  out << "  </graph>\n</graphml>\n";
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  std::string_view dirs(path);
  while (true) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    // An empty PATH entry means the current directory.
    const std::string candidate = (std::filesystem::path(dir.empty() ? "." : dir) / program).string();
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return {};
    dirs.remove_prefix(colon + 1);
  }
}

chakra::Trace select_nodes(const chakra::Trace& trace, const NodeSelection& selection) {
  if (selection.everything()) return trace;
  chakra::Trace out;
  out.metadata = trace.metadata;
  std::unordered_set<std::uint64_t> kept;
  for (const chakra::Node& n : trace.nodes) {
    if (n.id() < selection.first_id || n.id() > selection.last_id) continue;
    if (selection.max_nodes != 0 && kept.size() == selection.max_nodes) break;
    kept.insert(n.id());
  }
  for (const chakra::Node& n : trace.nodes) {
    if (!kept.contains(n.id())) continue;
    chakra::Node& copy = out.nodes.emplace_back(n);
    copy.clear_data_deps();
    copy.clear_ctrl_deps();
    for (const std::uint64_t d : n.data_deps()) {
      if (kept.contains(d)) copy.add_data_deps(d);
    }
    for (const std::uint64_t d : n.ctrl_deps()) {
      if (kept.contains(d)) copy.add_ctrl_deps(d);
    }
  }
  return out;
}

void visualize_file(const std::string& et_path, const std::string& out_path, const NodeSelection& selection,
                    const VisualizeProgress& progress) {
  auto say = [&](const std::string& text) {
    if (progress) progress(text);
  };
  const GraphFormat format = graph_format_of(out_path);
  say(fmt::format("reading {}", et_path));
  const chakra::Trace whole = chakra::read_trace(et_path);
  const chakra::Trace trace = select_nodes(whole, selection);
  if (trace.nodes.empty()) {
    fail("{}: no node is selected (the trace has {} nodes); expected --nodes or --max-nodes to keep some", et_path,
         whole.nodes.size());
  }
  if (format == GraphFormat::kDot || format == GraphFormat::kGraphml) {
    std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
    if (!out) fail("{}: cannot create the output file (does the directory exist?)", out_path);
    format == GraphFormat::kDot ? write_dot(trace, out) : write_graphml(trace, out);
    out.flush();
    if (!out) fail("{}: error while writing the output file", out_path);
    return;
  }
  const std::string extension = format == GraphFormat::kSvg ? "svg" : "pdf";
  const std::string dot_program = find_on_path("dot");
  if (dot_program.empty()) {
    fail("{}: drawing .{} needs graphviz's `dot` program, which is not on PATH; install graphviz "
         "(Debian/Ubuntu: apt-get install graphviz), or write .dot or .graphml instead",
         out_path, extension);
  }
  if (trace.nodes.size() > kSlowToDrawNodes) {
    say(fmt::format("drawing {} nodes with graphviz's dot may take minutes; --max-nodes N or --nodes FROM-TO draws "
                    "a part",
                    trace.nodes.size()));
  }
  say(fmt::format("graphviz's dot is drawing {} nodes into {}", trace.nodes.size(), out_path));
  std::string name = (std::filesystem::temp_directory_path() / "chakrasim-visualize-XXXXXX.dot").string();
  const int fd = ::mkstemps(name.data(), 4);
  if (fd < 0) fail("{}: cannot create a temporary DOT file for graphviz: {}", out_path, std::strerror(errno));
  ::close(fd);
  const TempFile dot_file{name};
  {
    std::ofstream out(dot_file.path, std::ios::binary | std::ios::trunc);
    write_dot(trace, out);
    out.flush();
    if (!out) fail("{}: error while writing the temporary DOT file {}", out_path, dot_file.path);
  }
  run_dot(dot_program, extension, dot_file.path, out_path);
}

}  // namespace chakrasim::tools
