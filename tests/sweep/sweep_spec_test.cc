// A sweep's spec (sweep/sweep_spec.h), its table (sweep/sweep_table.h) and page
// (sweep/sweep_html.h): grids, zipped axes and derived values expanded in order, expressions,
// bad specs refused with the key, CSV that reads back, the Pareto front.
#include "sweep/sweep_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_support.h"
#include "sweep/sweep_html.h"
#include "sweep/sweep_table.h"

namespace chakrasim::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string cells(const sweep::Point& p) {
  std::string out;
  for (const sweep::Value& v : p.values) out += (out.empty() ? "" : " ") + sweep::cell_text(v);
  return out;
}

// The issue's example: 4 bandwidths x 3 algorithms, the last axis fastest.
TEST(SweepSpec, AGridOfAxes) {
  const sweep::SweepSpec spec = sweep::parse_spec(R"(
base: { workload: traces/ar, system: system.json, network: network.yml }
axes:
  network.bandwidth[0]: [25, 50, 100, 200]
  system.all-reduce-implementation: [[ring], [direct], [halvingDoubling]]
)",
                                                  "s.yaml");
  EXPECT_THAT(sweep::columns(spec), ElementsAre("network.bandwidth[0]", "system.all-reduce-implementation"));
  ASSERT_EQ(sweep::point_count(spec), 12u);
  EXPECT_EQ(cells(sweep::point_at(spec, 0)), R"(25 ["ring"])");
  EXPECT_EQ(cells(sweep::point_at(spec, 1)), R"(25 ["direct"])");
  EXPECT_EQ(cells(sweep::point_at(spec, 5)), R"(50 ["halvingDoubling"])");
  EXPECT_EQ(cells(sweep::point_at(spec, 11)), R"(200 ["halvingDoubling"])");
  // Bytes that are not UTF-8, in a list, are shown replaced (found by fuzzing: nlohmann throws).
  EXPECT_EQ(sweep::cell_text(sweep::Value::array({std::string("a\xff")})), "[\"a\xef\xbf\xbd\"]");
  EXPECT_EQ(spec.base["workload"], "traces/ar");
}

// Zipped axes advance together as one axis; derived values follow from them.
TEST(SweepSpec, ZippedAxesAndDerivedValues) {
  const sweep::SweepSpec spec = sweep::parse_spec(R"(
base: { generate: llm --model gpt3-13b }
zip:
  - { generate.tp: [1, 2, 4], generate.pp: [8, 4, 2] }
axes:
  backend: [congestion-unaware, congestion-aware]
derived:
  generate.dp: 64 / (generate.tp * generate.pp)
  network.bandwidth[1]: 12.5 * generate.tp - 1
cost: generate.tp
)",
                                                  "s.yaml");
  EXPECT_THAT(sweep::columns(spec),
              ElementsAre("generate.tp", "generate.pp", "backend", "generate.dp", "network.bandwidth[1]"));
  ASSERT_EQ(sweep::point_count(spec), 6u);
  EXPECT_EQ(cells(sweep::point_at(spec, 0)), "1 8 congestion-unaware 8 11.5");
  EXPECT_EQ(cells(sweep::point_at(spec, 3)), "2 4 congestion-aware 8 24");
  EXPECT_EQ(cells(sweep::point_at(spec, 5)), "4 2 congestion-aware 8 49");
  EXPECT_EQ(spec.cost, "generate.tp");
}

TEST(SweepSpec, Expressions) {
  auto lookup = [](const std::string& name) -> double {
    if (name == "x") return 3;
    fail("unknown {}", name);
  };
  EXPECT_DOUBLE_EQ(sweep::evaluate("1 + 2 * 3", lookup), 7);
  EXPECT_DOUBLE_EQ(sweep::evaluate("(1 + 2) * 3", lookup), 9);
  EXPECT_DOUBLE_EQ(sweep::evaluate("64 / (x - 1) / 2", lookup), 16);
  EXPECT_DOUBLE_EQ(sweep::evaluate("-x + 10", lookup), 7);
  EXPECT_DOUBLE_EQ(sweep::evaluate("2.5e1", lookup), 25);
  EXPECT_THAT(error_of([&] { sweep::evaluate("1 / (x - 3)", lookup); }), HasSubstr("division by zero"));
  EXPECT_THAT(error_of([&] { sweep::evaluate("(1 + 2", lookup); }), HasSubstr("a ( is not closed"));
  EXPECT_THAT(error_of([&] { sweep::evaluate("1 +", lookup); }), HasSubstr("ends where a value was expected"));
  EXPECT_THAT(error_of([&] { sweep::evaluate("y * 2", lookup); }), HasSubstr("unknown y"));
  EXPECT_THAT(error_of([&] { sweep::evaluate(". + 1", lookup); }), HasSubstr("\". + 1\" is not a number"));
  EXPECT_THAT(error_of([&] { sweep::evaluate("1e999", lookup); }), HasSubstr("is not a number"));
  const std::string deep = std::string(200, '(') + "1";
  EXPECT_THAT(error_of([&] { sweep::evaluate(deep, lookup); }), HasSubstr("nests too deeply"));
}

// A derived value that cannot be computed is that point's error, not the sweep's.
TEST(SweepSpec, ABadDerivedValueIsThePointsError) {
  const sweep::SweepSpec spec = sweep::parse_spec(R"(
base: { workload: w, system: s, network: n }
axes:
  system.endpoint-delay: [0, 10]
derived:
  system.local-mem-bw: 100 / system.endpoint-delay
)",
                                                  "s.yaml");
  EXPECT_THAT(sweep::point_at(spec, 0).error, HasSubstr("derived system.local-mem-bw: expression"));
  EXPECT_THAT(sweep::point_at(spec, 0).error, HasSubstr("division by zero"));
  EXPECT_EQ(sweep::point_at(spec, 1).error, "");
  EXPECT_EQ(cells(sweep::point_at(spec, 1)), "10 10");
}

TEST(SweepSpec, BadSpecsAreRefusedWithTheKey) {
  auto error = [](const std::string& text) { return error_of([&] { sweep::parse_spec(text, "s.yaml"); }); };
  EXPECT_THAT(error("axes: {a: [1]"), HasSubstr("s.yaml: invalid YAML"));
  EXPECT_THAT(error("- 1"), HasSubstr("expected a map with base and axes"));
  EXPECT_THAT(error("axes: {backend: [a]}"), HasSubstr("base: missing"));
  EXPECT_THAT(error("base: {workload: w}\naxes: {bandwidth: [1]}"), HasSubstr("axes: key \"bandwidth\" is not one a "
                                                                              "sweep can vary"));
  EXPECT_THAT(error("base: {workload: w}\naxes: {backend: []}"), HasSubstr("\"backend\": expected a non-empty list"));
  EXPECT_THAT(error("base: {workload: w}\nzip: [{generate.tp: [1, 2], generate.pp: [1]}]"), HasSubstr("\"generate.pp\" "
                                                                                                      "has 1 values "
                                                                                                      "and "
                                                                                                      "\"generate.tp\" "
                                                                                                      "2"));
  EXPECT_THAT(error("base: {workload: w}\naxes: {backend: [a]}\nderived: {backend: 1}"), HasSubstr("derived: "
                                                                                                   "\"backend\" is "
                                                                                                   "also an axis"));
  EXPECT_THAT(error("base: {workload: w}\naxes: {backend: [a]}\ncost: network.bandwidth[0]"), HasSubstr("cost: "
                                                                                                        "\"network."
                                                                                                        "bandwidth[0]"
                                                                                                        "\" is not an "
                                                                                                        "axis"));
  EXPECT_THAT(error("base: {workload: w}\naxes: {backend: [a]}\ncolour: red"), HasSubstr("key \"colour\" is not a "
                                                                                         "sweep key"));
  EXPECT_THAT(error("base: {workload: w, speed: 3}"), HasSubstr("base: key \"speed\""));
  // Aliases are refused before a node is built (an alias in its own anchor would be a cycle).
  EXPECT_THAT(error("base: &b {workload: w}\naxes: {backend: [*b]}"), HasSubstr("line 2: a YAML alias"));
  EXPECT_THAT(error("base: {workload: w}\naxes: {[a]: [1]}"), HasSubstr("a key that is not a name"));
  EXPECT_THAT(error("base: {workload: w}\naxes: {backend: [" + std::string(40, '[') + std::string(40, ']') + "]}"),
              HasSubstr("values nest deeper than 32 levels"));
  std::string huge = "base: {workload: w}\naxes:\n";
  for (int k = 0; k < 9; ++k) huge += "  system.k" + std::to_string(k) + ": [1,2,3,4,5,6,7,8,9,10]\n";
  EXPECT_THAT(error(huge), HasSubstr("expected at most 100000000"));
}

TEST(SweepTable, CsvReadsBackAndChecksItsColumns) {
  sweep::Table t;
  t.header = sweep::table_header({"system.x"});
  sweep::Row row;
  row.point = 3;
  row.cells.assign(t.header.size(), "");
  row.cells[0] = "3";
  row.cells[1] = R"(["a","b"])";
  row.cells[3] = "error: a, \"b\"\nand more";
  t.rows[3] = row;
  const std::string text = sweep::csv_text(t);
  EXPECT_THAT(text, HasSubstr(R"("[""a"",""b""]")"));
  const sweep::Table back = sweep::parse_csv(text, "r.csv", t.header);
  ASSERT_EQ(back.rows.size(), 1u);
  EXPECT_EQ(back.rows.at(3).cells, row.cells);
  EXPECT_THAT(error_of([&] { sweep::parse_csv(text, "r.csv", sweep::table_header({"system.y"})); }),
              HasSubstr("r.csv: line 1: the columns are not this sweep's"));
  EXPECT_THAT(error_of([&] { sweep::parse_csv(sweep::csv_line(t.header) + "\n1,2\n", "r.csv", t.header); }),
              HasSubstr("r.csv: line 2: 2 cells"));
}

// Cost and time both minimised: (1, 9) (2, 5) (4, 2) are the front; (3, 6) is dominated by (2, 5)
// and (5, 2) by (4, 2).
TEST(SweepHtml, ParetoFront) {
  EXPECT_THAT(sweep::pareto_front({3, 1, 2, 4, 5}, {6, 9, 5, 2, 2}), ElementsAre(1u, 2u, 3u));
}

}  // namespace
}  // namespace chakrasim::test
