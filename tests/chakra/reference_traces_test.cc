// Covers the codec and Graph::build on every real .et file of the shared reference: each one
// reads, writes back byte for byte, survives write_trace/read_trace, builds a Graph, and decodes
// to exactly what the golden dumps of the real Chakra tools list.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "core/error.h"
#include "support/test_support.h"

namespace chakrasim::chakra {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<fs::path> files_with_suffix(const fs::path& root, const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <typename List>
std::string python_list(const List& values) {
  std::string out = "[";
  bool first = true;
  for (auto v : values) {
    if (!first) out += ", ";
    out += std::to_string(v);
    first = false;
  }
  return out + "]";
}

// One attribute as the golden dumps write it: "name:oneof=value".
std::string dump_attr(const Attribute& a) {
  std::string value;
  switch (a.value_case()) {
    case Attribute::kInt64Val: value = std::to_string(a.int64_val()); break;
    case Attribute::kInt32Val: value = std::to_string(a.int32_val()); break;
    case Attribute::kUint64Val: value = std::to_string(a.uint64_val()); break;
    case Attribute::kBoolVal: value = a.bool_val() ? "True" : "False"; break;
    case Attribute::kStringVal: value = a.string_val(); break;
    default: ADD_FAILURE() << "attribute " << a.name() << ": no dump format for this oneof member";
  }
  const auto* field = Attribute::descriptor()->FindFieldByNumber(static_cast<int>(a.value_case()));
  return a.name() + ":" + (field ? field->name() : "?") + "=" + value;
}

// The compact dump of golden/*/README.md: a GM line, then one line per node in file order.
std::vector<std::string> dump(const Trace& trace) {
  std::vector<std::string> lines;
  std::string gm = "GM version='" + trace.metadata.version() + "' attrs=[";
  for (int i = 0; i < trace.metadata.attr_size(); ++i) {
    const Attribute& a = trace.metadata.attr(i);
    const auto* field = Attribute::descriptor()->FindFieldByNumber(static_cast<int>(a.value_case()));
    if (i > 0) gm += ", ";
    gm += "('";
    gm += a.name();
    gm += "', '";
    gm += field ? field->name() : "?";
    gm += "')";
  }
  lines.push_back(gm + "]");
  for (const Node& n : trace.nodes) {
    std::string line = std::to_string(n.id()) + " " + ChakraProtoMsg::NodeType_Name(n.type()) + " " + n.name() +
                       " data=" + python_list(n.data_deps()) + " ctrl=" + python_list(n.ctrl_deps()) +
                       " dur=" + std::to_string(n.duration_micros()) + " ";
    for (int i = 0; i < n.attr_size(); ++i) {
      if (i > 0) line += ' ';
      line += dump_attr(n.attr(i));
    }
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(ReferenceTraces, EveryEtFileRoundTripsByteForByte) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto files = files_with_suffix(ref, ".et");
  // traces/ (112 microbenchmark + 8 custom-collective ranks) and golden/ (44 tool outputs).
  ASSERT_GE(files.size(), 164u);
  std::set<std::string> top_dirs;
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    top_dirs.insert(fs::relative(path, ref).begin()->string());
    const std::string bytes = read_bytes(path);
    ASSERT_FALSE(bytes.empty());
    Trace trace;
    ASSERT_NO_THROW(trace = parse_trace(bytes, path.string()));
    EXPECT_FALSE(trace.nodes.empty());
    EXPECT_EQ(serialize_trace(trace), bytes);
  }
  EXPECT_TRUE(top_dirs.count("traces"));
  EXPECT_TRUE(top_dirs.count("golden"));
}

TEST(ReferenceTraces, EveryEtFileSurvivesWriteAndReadThroughATempFile) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const fs::path dir = test::temp_dir("reference_traces_rw");
  std::size_t i = 0;
  for (const fs::path& path : files_with_suffix(ref, ".et")) {
    SCOPED_TRACE(path.string());
    const Trace trace = read_trace(path.string());
    const std::string copy = (dir / ("copy." + std::to_string(i++) + ".et")).string();
    write_trace(copy, trace);
    EXPECT_EQ(read_bytes(copy), read_bytes(path));
    const Trace back = read_trace(copy);
    EXPECT_EQ(back.metadata.version(), trace.metadata.version());
    ASSERT_EQ(back.nodes.size(), trace.nodes.size());
    for (std::size_t k = 0; k < trace.nodes.size(); ++k) {
      EXPECT_EQ(back.nodes[k].SerializeAsString(), trace.nodes[k].SerializeAsString()) << "node index " << k;
    }
  }
}

TEST(ReferenceTraces, EveryEtFileBuildsAGraph) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  for (const fs::path& path : files_with_suffix(ref, ".et")) {
    SCOPED_TRACE(path.string());
    const Trace trace = read_trace(path.string());
    try {
      const Graph g = Graph::build(trace, path.string());
      ASSERT_EQ(g.size(), trace.nodes.size());
      for (std::uint32_t k = 1; k < g.size(); ++k) EXPECT_LT(g.id(k - 1), g.id(k));
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(ReferenceTraces, DecodedNodesMatchTheGoldenDumpsOfTheRealTools) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dumps = files_with_suffix(ref / "golden", ".dump.txt");
  ASSERT_GE(dumps.size(), 16u);
  for (const fs::path& dump_path : dumps) {
    SCOPED_TRACE(dump_path.string());
    std::string et_name = dump_path.filename().string();
    et_name = et_name.substr(0, et_name.size() - std::string(".dump.txt").size()) + ".et";
    const Trace trace = read_trace((dump_path.parent_path() / et_name).string());
    const std::vector<std::string> expected = lines_of(dump_path);
    const std::vector<std::string> actual = dump(trace);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) EXPECT_EQ(actual[k], expected[k]) << "line " << k + 1;
  }
}

TEST(ReferenceTraces, MicrobenchmarkRanksDifferOnlyInTheirIds) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  // The microbenchmark scripts keep one id counter across ranks: rank R's single node has id R.
  const fs::path dir = ref / "traces" / "microbenchmarks" / "all_reduce" / "8npus_1MB";
  for (std::size_t r = 0; r < 8; ++r) {
    const Trace t = read_trace(rank_path((dir / "all_reduce").string(), r));
    ASSERT_EQ(t.nodes.size(), 1u);
    EXPECT_EQ(t.nodes[0].id(), r);
    EXPECT_EQ(t.nodes[0].name(), "all_reduce_8npus_1MB");
    EXPECT_EQ(t.metadata.version(), "0.0.4");
    const Graph g = Graph::build(t, "ar");
    EXPECT_EQ(g.type(0), NodeType::kCommColl);
    EXPECT_EQ(g.attrs(0).comm_type, 0);
    EXPECT_EQ(g.attrs(0).comm_size, 1048576u);
    EXPECT_FALSE(g.is_cpu_op(0));
  }
}

}  // namespace
}  // namespace chakrasim::chakra
