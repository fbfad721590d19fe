// chakra visualize. Worked example: model3.0.et (the text converter's MODEL workload, rank 0:
// 28 nodes, 33 data dependencies) gives the same graph as the reference visualizer's
// model3.0.dot and model3.0.graphml: the same nodes with the same labels and record shape, the
// same edges with the same arrowheads / dependency. The golden DOT was laid out by graphviz
// (pos, bb, width...), ours is not, so the test parses both and compares the graphs.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pugixml.hpp>

#include "chakra/trace_builder.h"
#include "support/test_support.h"
#include "tools/visualize/visualizer.h"

namespace chakrasim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A graph as both formats describe it: node id -> its attributes; edges (parent, child, kind)
// where kind is the DOT arrowhead or the GraphML dependency.
struct Graph {
  std::map<std::string, std::map<std::string, std::string>> nodes;
  std::multiset<std::tuple<std::string, std::string, std::string>> edges;
};

// Just enough of the DOT grammar for graphviz's output and ours: node and edge statements with
// attribute lists, default statements (skipped), quoted strings with \" and line continuations.
Graph parse_dot(const std::string& text) {
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"') {
      std::string value;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\n')) {
          if (text[++i] == '"') value += '"';
        } else if (text[i] == '\\' && i + 1 < text.size()) {
          value += text[i];
          value += text[++i];
        } else {
          value += text[i];
        }
      }
      ++i;
      tokens.push_back(value);
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '>') {
      tokens.emplace_back("->");
      i += 2;
    } else if (std::string("{}[]=,;").find(c) != std::string::npos) {
      tokens.emplace_back(1, c);
      ++i;
    } else {
      std::size_t end = i;
      while (end < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' || text[end] == '.'))
        ++end;
      if (end == i) ADD_FAILURE() << "unexpected character in DOT: " << c;
      tokens.push_back(text.substr(i, std::max<std::size_t>(end - i, 1)));
      i = std::max(end, i + 1);
    }
  }
  Graph graph;
  std::size_t at = 0;
  auto next = [&] { return at < tokens.size() ? tokens[at++] : std::string(); };
  auto attributes = [&] {
    std::map<std::string, std::string> attrs;
    if (at < tokens.size() && tokens[at] == "[") {
      ++at;
      while (at < tokens.size() && tokens[at] != "]") {
        if (tokens[at] == "," || tokens[at] == ";") {
          ++at;
          continue;
        }
        const std::string key = next();
        EXPECT_EQ(next(), "=");
        attrs[key] = next();
      }
      ++at;
    }
    return attrs;
  };
  EXPECT_EQ(next(), "digraph");
  if (tokens[at] != "{") ++at;  // the graph's name
  EXPECT_EQ(next(), "{");
  while (at < tokens.size() && tokens[at] != "}") {
    const std::string id = next();
    if (id == ";") continue;
    if (id == "graph" || id == "node" || id == "edge") {
      attributes();
    } else if (at < tokens.size() && tokens[at] == "->") {
      ++at;
      const std::string child = next();
      graph.edges.insert({id, child, attributes()["arrowhead"]});
    } else {
      graph.nodes[id] = attributes();
    }
  }
  return graph;
}

Graph parse_graphml(const std::string& text) {
  pugi::xml_document doc;
  const auto result = doc.load_string(text.c_str());
  EXPECT_TRUE(result) << result.description();
  std::map<std::string, std::string> key_names;
  for (const auto& key : doc.child("graphml").children("key"))
    key_names[key.attribute("id").value()] = key.attribute("attr.name").value();
  Graph graph;
  const pugi::xml_node g = doc.child("graphml").child("graph");
  EXPECT_STREQ(g.attribute("edgedefault").value(), "directed");
  for (const auto& node : g.children("node")) {
    auto& attrs = graph.nodes[node.attribute("id").value()];
    for (const auto& data : node.children("data")) attrs[key_names[data.attribute("key").value()]] = data.text().get();
  }
  for (const auto& edge : g.children("edge")) {
    std::string dependency;
    for (const auto& data : edge.children("data")) {
      if (key_names[data.attribute("key").value()] == "dependency") dependency = data.text().get();
    }
    graph.edges.insert({edge.attribute("source").value(), edge.attribute("target").value(), dependency});
  }
  return graph;
}

std::string dot_of(const chakra::Trace& trace) {
  std::ostringstream out;
  tools::write_dot(trace, out);
  return out.str();
}

std::string graphml_of(const chakra::Trace& trace) {
  std::ostringstream out;
  tools::write_graphml(trace, out);
  return out.str();
}

TEST(Visualizer, DotHasTheReferenceGraph) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const Graph golden = parse_dot(file_bytes(ref / "golden/visualizer/model3.0.dot"));
  const Graph ours = parse_dot(dot_of(chakra::read_trace(ref / "golden/text_converter/model3.0.et")));
  ASSERT_EQ(ours.nodes.size(), 28u);
  ASSERT_EQ(ours.nodes.size(), golden.nodes.size());
  for (const auto& [id, attrs] : golden.nodes) {
    SCOPED_TRACE("node " + id);
    ASSERT_TRUE(ours.nodes.count(id));
    for (const char* key : {"label", "id", "shape"}) EXPECT_EQ(ours.nodes.at(id).at(key), attrs.at(key)) << key;
  }
  EXPECT_EQ(ours.edges.size(), 33u);
  EXPECT_EQ(ours.edges, golden.edges);
}

TEST(Visualizer, GraphmlHasTheReferenceGraph) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const Graph golden = parse_graphml(file_bytes(ref / "golden/visualizer/model3.0.graphml"));
  const Graph ours = parse_graphml(graphml_of(chakra::read_trace(ref / "golden/text_converter/model3.0.et")));
  EXPECT_EQ(ours.nodes.size(), 28u);
  EXPECT_EQ(ours.nodes, golden.nodes);
  EXPECT_EQ(ours.edges.size(), 33u);
  EXPECT_EQ(ours.edges, golden.edges);
}

// 0 -> 1 data; 0 -> 2 control; 1 -> 2 both data and control; 2 depends on 9, which is not in
// the file.
chakra::Trace mixed_dependencies() {
  chakra::TraceBuilder builder;
  builder.comp("a", 1);
  builder.comp("b", 1, {0});
  chakra::Node& c = builder.comp("c", 1, {1, 9});
  c.add_ctrl_deps(0);
  c.add_ctrl_deps(1);
  return builder.trace();
}

TEST(Visualizer, AParentThatIsBothDataAndControlGetsBothEdges) {
  using Edges = std::multiset<std::tuple<std::string, std::string, std::string>>;
  const Graph dot = parse_dot(dot_of(mixed_dependencies()));
  EXPECT_EQ(dot.edges, (Edges{{"0", "1", "normal"},
                              {"1", "2", "normal"},
                              {"9", "2", "normal"},
                              {"0", "2", "tee"},
                              {"1", "2", "tee"}}));
  const Graph graphml = parse_graphml(graphml_of(mixed_dependencies()));
  EXPECT_EQ(graphml.edges, (Edges{{"0", "1", "data"},
                                  {"1", "2", "data"},
                                  {"9", "2", "data"},
                                  {"0", "2", "control"},
                                  {"1", "2", "control"}}));
  // The parent outside the file is declared (no label), so every GraphML edge ends at a node.
  ASSERT_TRUE(graphml.nodes.count("9"));
  EXPECT_TRUE(graphml.nodes.at("9").empty());
  EXPECT_EQ(graphml.nodes.size(), 4u);
}

TEST(Visualizer, LabelsAreEscapedForDotRecordsAndXml) {
  chakra::TraceBuilder builder;
  builder.comp("f{x}(y)<z>[w]|a&b-c \\ \"q\"\nline2", 1);
  builder.comp("a & <b> \x01", 1);
  const std::string dot = dot_of(builder.trace());
  EXPECT_THAT(dot, HasSubstr(R"(label="f\{x\}\(y\)\<z\>\[w\]\|a\&b\-c \\ \"q\"\nline2" id=0 shape=record)"));
  const Graph graphml = parse_graphml(graphml_of(builder.trace()));
  EXPECT_EQ(graphml.nodes.at("0").at("label"), "f{x}(y)<z>[w]|a&b-c \\ \"q\"\nline2");
  EXPECT_EQ(graphml.nodes.at("1").at("label"), "a & <b> \xef\xbf\xbd");  // XML 1.0 cannot hold U+0001
}

TEST(Visualizer, ARepeatedIdIsOneGraphmlNode) {
  chakra::TraceBuilder builder;
  builder.comp("first", 1);
  builder.set_next_id(0);
  builder.comp("again", 1);
  const Graph graphml = parse_graphml(graphml_of(builder.trace()));
  ASSERT_EQ(graphml.nodes.size(), 1u);
  EXPECT_EQ(graphml.nodes.at("0").at("label"), "first");
}

TEST(Visualizer, TheExtensionPicksTheFormatAndAnUnknownOneListsTheValidOnes) {
  EXPECT_EQ(tools::graph_format_of("a/b.dot"), tools::GraphFormat::kDot);
  EXPECT_EQ(tools::graph_format_of("b.GraphML"), tools::GraphFormat::kGraphml);
  EXPECT_EQ(tools::graph_format_of("b.svg"), tools::GraphFormat::kSvg);
  EXPECT_EQ(tools::graph_format_of("b.pdf"), tools::GraphFormat::kPdf);
  EXPECT_THAT(error_of([] { tools::graph_format_of("out.png"); }), HasSubstr("out.png: unknown output format \".png\"; "
                                                                             "expected a file name ending in .dot, "
                                                                             ".graphml, .svg or .pdf"));
  EXPECT_THAT(error_of([] { tools::graph_format_of("out"); }), HasSubstr("\"(no extension)\""));
}

void write_mixed(const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  out << chakra::serialize_trace(mixed_dependencies());
}

TEST(Visualizer, SvgAndPdfAreDrawnByGraphviz) {
  if (tools::find_on_path("dot").empty()) {
    GTEST_SKIP() << "graphviz's `dot` is not installed; install the graphviz package to test .svg and .pdf output";
  }
  const fs::path dir = temp_dir("visualizer_graphviz");
  write_mixed(dir / "t.et");
  tools::visualize_file((dir / "t.et").string(), (dir / "t.svg").string());
  const std::string svg = file_bytes(dir / "t.svg");
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr(">c</text>"));
  tools::visualize_file((dir / "t.et").string(), (dir / "t.pdf").string());
  EXPECT_EQ(file_bytes(dir / "t.pdf").substr(0, 5), "%PDF-");
  EXPECT_THAT(error_of(
                  [&] { tools::visualize_file((dir / "t.et").string(), (dir / "no_such_dir" / "t.svg").string()); }),
              HasSubstr("graphviz's dot (" + tools::find_on_path("dot") + ") failed drawing the graph (exit status"));
}

TEST(Visualizer, WithoutGraphvizSvgSaysToInstallIt) {
  const fs::path dir = temp_dir("visualizer_no_graphviz");
  write_mixed(dir / "t.et");
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  ::setenv("PATH", (dir / "empty").string().c_str(), 1);
  const std::string error = error_of([&] { tools::visualize_file((dir / "t.et").string(), (dir / "t.svg").string()); });
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_THAT(error, HasSubstr("t.svg: drawing .svg needs graphviz's `dot` program, which is not on PATH; install "
                               "graphviz"));
  EXPECT_FALSE(fs::exists(dir / "t.svg"));
}

TEST(VisualizerCli, WritesDotAndGraphmlAndFailsClearly) {
  const fs::path dir = temp_dir("visualizer_cli");
  write_mixed(dir / "t.et");
  for (const char* name : {"t.dot", "t.graphml"}) {
    const CommandResult r = run_binary({"chakra", "visualize", (dir / "t.et").string(), (dir / name).string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(file_bytes(dir / name).empty()) << name;
  }
  EXPECT_EQ(parse_dot(file_bytes(dir / "t.dot")).edges.size(), 5u);
  const CommandResult png = run_binary({"chakra", "visualize", (dir / "t.et").string(), (dir / "t.png").string()});
  EXPECT_NE(png.exit_code, 0);
  EXPECT_THAT(png.err, HasSubstr("expected a file name ending in .dot, .graphml, .svg or .pdf"));
  const CommandResult missing =
      run_binary({"chakra", "visualize", (dir / "none.et").string(), (dir / "t.dot").string()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("none.et"));
  const CommandResult help = run_binary({"chakra", "visualize", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Example:\n  chakrasim chakra visualize trace.0.et trace.0.graphml"));
}

// A part of a big trace: --nodes keeps an id range, --max-nodes the first N, and the edges to
// nodes left out are dropped; the CLI says what it is doing on stderr (not under -q).
TEST(VisualizerCli, DrawsAPartOfABigTrace) {
  using Edges = std::multiset<std::tuple<std::string, std::string, std::string>>;
  const chakra::Trace first_two = tools::select_nodes(mixed_dependencies(), {0, UINT64_MAX, 2});
  EXPECT_EQ(parse_dot(dot_of(first_two)).edges, (Edges{{"0", "1", "normal"}}));
  const chakra::Trace last_two = tools::select_nodes(mixed_dependencies(), {1, 2, 0});
  EXPECT_EQ(parse_dot(dot_of(last_two)).edges, (Edges{{"1", "2", "normal"}, {"1", "2", "tee"}}));
  const fs::path dir = temp_dir("visualizer_part");
  write_mixed(dir / "t.et");
  CommandResult r =
      run_binary({"chakra", "visualize", (dir / "t.et").string(), (dir / "t.dot").string(), "--nodes", "1-2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(parse_dot(file_bytes(dir / "t.dot")).nodes.size(), 2u);
  EXPECT_THAT(r.err, HasSubstr("visualize: reading "));
  r = run_binary({"chakra", "visualize", (dir / "t.et").string(), (dir / "t.dot").string(), "--max-nodes", "1", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(parse_dot(file_bytes(dir / "t.dot")).nodes.size(), 1u);
  r = run_binary({"chakra", "visualize", (dir / "t.et").string(), (dir / "t.dot").string(), "--nodes", "7-3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--nodes: \"7-3\" is not a range of node ids; expected FROM-TO"));
  r = run_binary({"chakra", "visualize", (dir / "t.et").string(), (dir / "t.dot").string(), "--nodes", "50-60"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no node is selected (the trace has 3 nodes)"));
}

}  // namespace
}  // namespace chakrasim::test
