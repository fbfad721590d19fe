// The bad-input catalogues' shared setup: every case writes a valid baseline (an 8-NPU ring, a
// system JSON with ring implementations, one .et file per rank with a compute node and an
// all-reduce), breaks exactly one thing, runs the chakrasim binary and checks the exit code (1 for
// an input error, 2 for a deadlock) and that stderr names the file, the key or node id, the bad
// value and what was expected.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "support/test_support.h"

namespace chakrasim::test::errors {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr int kNpus = 8;
constexpr std::uint64_t kCompId = 100;   // "fwd": 10 µs of GPU compute
constexpr std::uint64_t kArId = 101;     // "grad_sync": 1 MiB all-reduce after fwd
constexpr std::uint64_t kExtraId = 102;  // what some cases add

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string network_yaml(const std::string& topology, const std::string& npus, const std::string& bandwidth,
                                const std::string& latency) {
  return "topology: [ " + topology + " ]\nnpus_count: [ " + npus + " ]\nbandwidth: [ " + bandwidth + " ]\nlatency: [ " +
         latency + " ]\n";
}

inline Json baseline_system() {
  return Json{{"scheduling-policy", "LIFO"},
              {"collective-optimization", "localBWAware"},
              {"endpoint-delay", 10},
              {"active-chunks-per-dimension", 1},
              {"preferred-dataset-splits", 4},
              {"all-reduce-implementation", {"ring"}},
              {"all-gather-implementation", {"ring"}},
              {"reduce-scatter-implementation", {"ring"}},
              {"all-to-all-implementation", {"ring"}},
              {"local-mem-bw", 50}};
}

inline chakra::Trace baseline_trace() {
  chakra::TraceBuilder b;
  b.set_next_id(kCompId);
  b.comp("fwd", 10);
  b.collective("grad_sync", chakra::CommType::kAllReduce, 1 << 20, {kCompId});
  return b.trace();
}

inline chakra::Node& node(chakra::Trace& t, std::uint64_t id) {
  for (chakra::Node& n : t.nodes) {
    if (n.id() == id) return n;
  }
  throw std::runtime_error("test: no node " + std::to_string(id));
}

// Replaces the first attribute of that name, or appends it.
inline void set_attr(chakra::Node& n, const chakra::Attribute& a) {
  for (chakra::Attribute& x : *n.mutable_attr()) {
    if (x.name() == a.name()) {
      x = a;
      return;
    }
  }
  *n.add_attr() = a;
}

inline void drop_attr(chakra::Node& n, const std::string& name) {
  auto* attrs = n.mutable_attr();
  for (int i = 0; i < attrs->size(); ++i) {
    if ((*attrs)[i].name() == name) {
      attrs->DeleteSubrange(i, 1);
      return;
    }
  }
}

inline chakra::Node& add_node(chakra::Trace& t, std::uint64_t id, chakra::NodeType type, const std::string& name) {
  chakra::Node& n = t.nodes.emplace_back();
  n.set_id(id);
  n.set_name(name);
  n.set_type(static_cast<ChakraProtoMsg::NodeType>(type));
  return n;
}

// A send (or receive) node with the given peer attributes; -1 leaves one out.
inline chakra::Node& add_p2p(chakra::Trace& t, bool send, std::int64_t peer, std::int64_t size, std::int64_t tag) {
  chakra::Node& n = add_node(t, kExtraId, send ? chakra::NodeType::kCommSend : chakra::NodeType::kCommRecv,
                             send ? "send_act" : "recv_act");
  if (peer >= 0) *n.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", static_cast<std::int32_t>(peer));
  if (size >= 0) *n.add_attr() = chakra::make_int64("comm_size", size);
  if (tag >= 0) *n.add_attr() = chakra::make_int32("comm_tag", static_cast<std::int32_t>(tag));
  return n;
}

// One run's inputs, written as files. A case rewrites what it breaks.
struct CaseFiles {
  fs::path dir;
  std::string prefix, system, network, memory, groups;
  std::vector<chakra::Trace> traces;
  Json system_json = baseline_system();
  std::vector<std::string> extra_args;
  std::vector<fs::path> restore_mode;  // files a case made unreadable

  explicit CaseFiles(const std::string& name) : dir(temp_dir(name)) {
    prefix = (dir / "trace").string();
    system = (dir / "system.json").string();
    network = (dir / "network.yml").string();
    for (int r = 0; r < kNpus; ++r) {
      traces.push_back(baseline_trace());
      chakra::write_trace(rank(r), traces.back());
    }
    write_network(network_yaml("Ring", "8", "50.0", "500.0"));
    write_system();
  }
  ~CaseFiles() {
    std::error_code ec;  // never throw from here
    for (const fs::path& p : restore_mode) fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write, ec);
  }
  CaseFiles(const CaseFiles&) = delete;
  CaseFiles& operator=(const CaseFiles&) = delete;

  std::string rank(int r) const { return chakra::rank_path(prefix, static_cast<std::size_t>(r)); }

  void rewrite(int r, const std::function<void(chakra::Trace&)>& edit) {
    edit(traces[static_cast<std::size_t>(r)]);
    chakra::write_trace(rank(r), traces[static_cast<std::size_t>(r)]);
  }
  void rewrite_all(const std::function<void(chakra::Trace&)>& edit) {
    for (int r = 0; r < kNpus; ++r) rewrite(r, edit);
  }
  void write_rank_bytes(int r, const std::string& bytes) { write_text(rank(r), bytes); }
  void write_network(const std::string& text) { write_text(network, text); }
  void write_system() { write_text(system, system_json.dump(2)); }
  void edit_system(const std::function<void(Json&)>& edit) {
    edit(system_json);
    write_system();
  }
  void write_system_text(const std::string& text) { write_text(system, text); }
  void write_memory(const std::string& text) {
    memory = (dir / "memory.json").string();
    write_text(memory, text);
  }
  void write_groups(const std::string& text) {
    groups = (dir / "groups.json").string();
    write_text(groups, text);
  }
  void make_unreadable(const std::string& path) {
    fs::permissions(path, fs::perms::none);
    restore_mode.emplace_back(path);
  }

  std::vector<std::string> args() const {
    std::vector<std::string> a = {"run", "--workload", prefix, "--system", system, "--network", network};
    if (!memory.empty()) a.insert(a.end(), {"--memory", memory});
    if (!groups.empty()) a.insert(a.end(), {"--comm-groups", groups});
    a.insert(a.end(), extra_args.begin(), extra_args.end());
    return a;
  }

  // Replaces {system}, {network}, {memory}, {groups}, {dir} and {rankN} by the paths.
  std::string expand(const std::string& needle) const {
    std::string out;
    std::size_t pos = 0;
    while (pos < needle.size()) {
      const std::size_t open = needle.find('{', pos);
      const std::size_t close = open == std::string::npos ? open : needle.find('}', open);
      if (close == std::string::npos) {
        out += needle.substr(pos);
        break;
      }
      const std::string token = needle.substr(open + 1, close - open - 1);
      std::string value;
      if (token == "system") value = system;
      else if (token == "network") value = network;
      else if (token == "memory") value = memory;
      else if (token == "groups") value = groups;
      else if (token == "dir") value = dir.string();
      else if (token.rfind("rank", 0) == 0 && token.size() > 4 &&
               token.find_first_not_of("0123456789", 4) == std::string::npos)
        value = rank(std::stoi(token.substr(4)));
      else value = "{" + token + "}";  // a literal brace (JSON in a needle)
      out += needle.substr(pos, open - pos) + value;
      pos = close + 1;
    }
    return out;
  }
};

struct Case {
  std::string name;
  std::function<void(CaseFiles&)> breaks;
  int exit_code;
  // Substrings stderr must contain; {system}, {network}, {memory}, {groups}, {rankN} become paths.
  std::vector<std::string> needles;
  bool needs_non_root = false;  // chmod 000 does not stop root
};

inline std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

inline chakra::Attribute double_attr(const std::string& name, double v) {
  chakra::Attribute a;
  a.set_name(name);
  a.set_double_val(v);
  return a;
}

// A custom all-reduce for every NPU (ring peers), named in the system JSON; `edit` breaks rank 0's.
// Returns rank 0's algorithm file.
inline std::string custom_algorithm(CaseFiles& s, const std::function<void(chakra::Trace&)>& edit = {}) {
  const std::string prefix = (s.dir / "custom").string();
  for (int r = 0; r < kNpus; ++r) {
    chakra::TraceBuilder b;
    b.send("to_next", (r + 1) % kNpus, 0, 1024);
    b.recv("from_prev", (r + kNpus - 1) % kNpus, 0, 1024);
    chakra::Trace t = b.trace();
    if (r == 0 && edit) edit(t);
    chakra::write_trace(chakra::rank_path(prefix, static_cast<std::size_t>(r)), t);
  }
  s.edit_system([&](Json& j) { j["all-reduce-implementation-custom"] = Json::array({prefix}); });
  return chakra::rank_path(prefix, 0);
}

// Runs one case: exit code, "error: ", every needle, and no finished run after an input error.
inline void check_case(const Case& c) {
  if (c.needs_non_root && ::geteuid() == 0) GTEST_SKIP() << "running as root: chmod 000 does not stop root reading";
  CaseFiles s("errors_" + c.name);
  c.breaks(s);
  const CommandResult r = run_binary(s.args());
  EXPECT_EQ(r.exit_code, c.exit_code) << "stderr:\n" << r.err << "stdout:\n" << r.out;
  EXPECT_THAT(r.err, ::testing::HasSubstr("error: ")) << "stdout:\n" << r.out;
  for (const std::string& needle : c.needles) EXPECT_THAT(r.err, ::testing::HasSubstr(s.expand(needle)));
  if (c.exit_code == 1) {
    EXPECT_THAT(r.out, ::testing::Not(::testing::HasSubstr("finished,"))) << "an input error must stop the run";
  }
}

}  // namespace chakrasim::test::errors
