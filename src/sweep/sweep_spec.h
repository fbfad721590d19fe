// A design-space sweep's specification (docs/sweep.md): the base inputs of `chakrasim run` (or a
// generator call) and the axes to vary, expanded into points.
//
//   base: { workload: traces/ar, system: system.json, network: network.yml }
//   axes:                                  # a grid: every combination
//     network.bandwidth[0]: [25, 50, 100, 200]
//     system.all-reduce-implementation: [[ring], [direct]]
//   zip:                                   # axes that advance together, as one axis of the grid
//     - { generate.tp: [1, 2, 4], generate.pp: [8, 4, 2] }
//   derived:                               # values computed from the others, per point
//     generate.dp: 64 / (generate.tp * generate.pp)
//   cost: network.bandwidth[0]             # the Pareto front's cost axis (the HTML page)
//
// A key names a system JSON key (`system.KEY`), a network YAML entry (`network.KEY` or one
// element, `network.KEY[i]`), a generator flag (`generate.FLAG`, with `base.generate` naming the
// generator and its fixed flags), or a run flag (`backend`, `collectives`, `workload`, ...).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace chakrasim::sweep {

using Value = nlohmann::ordered_json;

struct Axis {
  std::string key;
  std::vector<Value> values;
};

struct Derived {
  std::string key;
  std::string expression;  // + - * / ( ), numbers and other keys' (numeric) values
};

struct SweepSpec {
  std::string source;
  Value base = Value::object();         // run flags, and "generate": the generator call
  std::vector<std::vector<Axis>> grid;  // one entry per grid dimension; several axes: zipped
  std::vector<Derived> derived;
  std::string cost;  // "" when the spec names none
};

// One point: every column's value, in columns() order.
struct Point {
  std::size_t index = 0;
  std::vector<Value> values;
  std::string error;  // a derived value that could not be computed
};

// Reads and checks a spec: errors name `source`, the key and what was expected.
SweepSpec parse_spec(const std::string& yaml_text, const std::string& source);

// The varied keys: the axes in spec order (zipped ones in place), then the derived keys.
std::vector<std::string> columns(const SweepSpec& spec);

// Every point of the grid, the last axis varying fastest.
std::size_t point_count(const SweepSpec& spec);
Point point_at(const SweepSpec& spec, std::size_t index);

// A value as a table cell: strings bare, whole numbers without a fraction, lists and maps as JSON.
std::string cell_text(const Value& value);

// The value of an arithmetic expression whose names are looked up in `lookup` (numbers); throws
// Error naming the expression for a syntax error, an unknown or non-numeric name, or a division
// by zero.
double evaluate(const std::string& expression, const std::function<double(const std::string&)>& lookup);

}  // namespace chakrasim::sweep
