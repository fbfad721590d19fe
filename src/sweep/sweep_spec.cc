#include "sweep/sweep_spec.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"

namespace chakrasim::sweep {
namespace {

constexpr std::size_t kMaxPoints = 100'000'000;

constexpr int kMaxDepth = 32;

// Finds the first alias of a YAML text before any node is built: yaml-cpp shares aliased nodes,
// so an alias inside its own anchor is a cycle, and aliases of aliases expand exponentially.
class AliasFinder : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> alias;
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    if (!alias) alias = mark;
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// A YAML node as JSON: scalars become numbers or booleans where they read as such.
Value to_value(const YAML::Node& node, const std::string& source, int depth = 0) {
  if (depth > kMaxDepth) fail("{}: values nest deeper than {} levels", source, kMaxDepth);
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      Value out = Value::array();
      for (const YAML::Node& item : node) out.push_back(to_value(item, source, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      Value out = Value::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) fail("{}: line {}: a map key that is not a name", source, kv.first.Mark().line + 1);
        out[kv.first.Scalar()] = to_value(kv.second, source, depth + 1);
      }
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted: a string
      if (text == "true" || text == "false") return text == "true";
      if (!text.empty() && text.find_first_not_of("0123456789-") == std::string::npos && text.size() < 19) {
        try {
          return std::stoll(text);
        } catch (...) {}
      }
      char* end = nullptr;
      const double d = std::strtod(text.c_str(), &end);
      if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(d)) return d;
      return text;
    }
    default: return nullptr;
  }
}

bool known_key(const std::string& key) {
  static const std::set<std::string> kRunFlags = {"workload",
                                                  "system",
                                                  "network",
                                                  "comm-groups",
                                                  "backend",
                                                  "collectives",
                                                  "num-queues-per-dim",
                                                  "injection-scale",
                                                  "rendezvous-protocol",
                                                  "memory",
                                                  "group-names"};
  return key.starts_with("system.") || key.starts_with("network.") || key.starts_with("generate.") ||
         kRunFlags.count(key) > 0;
}

void check_key(const std::string& key, const std::string& source, const std::string& where) {
  if (key.empty() || !known_key(key) || key == "system." || key == "network." || key == "generate.") {
    fail("{}: {}: key \"{}\" is not one a sweep can vary; expected system.KEY, network.KEY[i], generate.FLAG or a "
         "run flag (workload, system, network, comm-groups, backend, collectives, num-queues-per-dim, "
         "injection-scale, rendezvous-protocol, memory, group-names)",
         source, where, key);
  }
}

std::vector<Value> axis_values(const YAML::Node& node, const std::string& source, const std::string& key) {
  if (!node.IsSequence() || node.size() == 0) {
    fail("{}: axes: \"{}\": expected a non-empty list of values", source, key);
  }
  std::vector<Value> values;
  for (const YAML::Node& v : node) values.push_back(to_value(v, source));
  return values;
}

// A key of the spec (axes, zip, derived, base): a name.
std::string key_of(const YAML::Node& key, const std::string& source) {
  if (!key.IsScalar()) fail("{}: line {}: a key that is not a name", source, key.Mark().line + 1);
  return key.Scalar();
}

// A recursive-descent reader of + - * / ( ), numbers and names.
class Expression {
 public:
  Expression(const std::string& text, const std::function<double(const std::string&)>& lookup)
      : text_(text), lookup_(lookup) {}

  double value() {
    const double v = sum();
    skip();
    if (at_ < text_.size()) error(fmt::format("unexpected \"{}\"", text_.substr(at_)));
    return v;
  }

 private:
  [[noreturn]] void error(const std::string& what) const { fail("expression \"{}\": {}", text_, what); }
  void skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  double sum() {
    double v = product();
    for (skip(); at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-'); skip()) {
      const char op = text_[at_++];
      const double r = product();
      v = op == '+' ? v + r : v - r;
    }
    return v;
  }
  double product() {
    double v = factor();
    for (skip(); at_ < text_.size() && (text_[at_] == '*' || text_[at_] == '/'); skip()) {
      const char op = text_[at_++];
      const double r = factor();
      if (op == '/' && r == 0) error("division by zero");
      v = op == '*' ? v * r : v / r;
    }
    return v;
  }
  double factor() {
    skip();
    if (at_ >= text_.size()) error("ends where a value was expected");
    if (++depth_ > 64) error("nests too deeply");
    double v = 0;
    const char c = text_[at_];
    if (c == '(') {
      ++at_;
      v = sum();
      skip();
      if (at_ >= text_.size() || text_[at_] != ')') error("a ( is not closed");
      ++at_;
    } else if (c == '-') {
      ++at_;
      v = -factor();
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const char* begin = text_.c_str() + at_;
      char* end = nullptr;
      v = std::strtod(begin, &end);
      if (end == begin || !std::isfinite(v)) error(fmt::format("\"{}\" is not a number", text_.substr(at_)));
      at_ += static_cast<std::size_t>(end - begin);
    } else {
      const std::size_t from = at_;
      // Keys hold dashes (system.endpoint-delay): a dash between a name and a letter is the
      // name's; a minus is written between spaces or before a number.
      while (at_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[at_])) &&
             (std::string("+-*/()").find(text_[at_]) == std::string::npos ||
              (text_[at_] == '-' && at_ > from && at_ + 1 < text_.size() &&
               std::isalpha(static_cast<unsigned char>(text_[at_ + 1]))))) {
        ++at_;
      }
      if (at_ == from) error(fmt::format("unexpected \"{}\"", text_.substr(at_)));
      v = lookup_(text_.substr(from, at_ - from));
    }
    --depth_;
    return v;
  }

  const std::string& text_;
  const std::function<double(const std::string&)>& lookup_;
  std::size_t at_ = 0;
  int depth_ = 0;
};

}  // namespace

double evaluate(const std::string& expression, const std::function<double(const std::string&)>& lookup) {
  return Expression(expression, lookup).value();
}

std::string cell_text(const Value& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == std::floor(d) && std::fabs(d) < 9e15) return fmt::format("{}", static_cast<std::int64_t>(d));
    return fmt::format("{}", d);
  }
  // Bytes that are not UTF-8 are shown as U+FFFD rather than thrown over.
  return v.dump(-1, ' ', false, Value::error_handler_t::replace);
}

SweepSpec parse_spec(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    AliasFinder aliases;
    std::istringstream in(text);
    YAML::Parser parser(in);
    parser.HandleNextDocument(aliases);
    if (aliases.alias) {
      fail("{}: line {}: a YAML alias (*name); expected plain values (anchors and aliases are not read)", source,
           aliases.alias->line + 1);
    }
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail("{}: invalid YAML (expected a sweep spec): line {}, column {}: {}", source, e.mark.line + 1, e.mark.column + 1,
         e.msg);
  }
  if (!root.IsMap()) fail("{}: expected a map with base and axes", source);
  SweepSpec spec;
  spec.source = source;
  std::set<std::string> seen;
  for (const auto& kv : root) {
    const std::string key = key_of(kv.first, source);
    if (key == "base") {
      if (!kv.second.IsMap()) fail("{}: base: expected a map of run flags such as workload, system, network", source);
      spec.base = to_value(kv.second, source);
      for (auto it = spec.base.begin(); it != spec.base.end(); ++it) {
        if (it.key() != "generate" && it.key() != "links") check_key(it.key(), source, "base");
      }
    } else if (key == "axes") {
      if (!kv.second.IsMap()) fail("{}: axes: expected a map of keys to lists of values", source);
      for (const auto& axis : kv.second) {
        const std::string name = key_of(axis.first, source);
        check_key(name, source, "axes");
        if (!seen.insert(name).second) fail("{}: axes: \"{}\" is given twice", source, name);
        spec.grid.push_back({Axis{name, axis_values(axis.second, source, name)}});
      }
    } else if (key == "zip") {
      if (!kv.second.IsSequence()) fail("{}: zip: expected a list of maps of axes that advance together", source);
      for (const YAML::Node& group : kv.second) {
        if (!group.IsMap() || group.size() == 0) fail("{}: zip: expected each entry to be a map of axes", source);
        std::vector<Axis> zipped;
        for (const auto& axis : group) {
          const std::string name = key_of(axis.first, source);
          check_key(name, source, "zip");
          if (!seen.insert(name).second) fail("{}: zip: \"{}\" is given twice", source, name);
          zipped.push_back(Axis{name, axis_values(axis.second, source, name)});
          if (zipped.back().values.size() != zipped.front().values.size()) {
            fail("{}: zip: \"{}\" has {} values and \"{}\" {}; expected axes that advance together to have as many",
                 source, name, zipped.back().values.size(), zipped.front().key, zipped.front().values.size());
          }
        }
        spec.grid.push_back(std::move(zipped));
      }
    } else if (key == "derived") {
      if (!kv.second.IsMap()) fail("{}: derived: expected a map of keys to expressions", source);
      for (const auto& d : kv.second) {
        const std::string name = key_of(d.first, source);
        check_key(name, source, "derived");
        if (!seen.insert(name).second) fail("{}: derived: \"{}\" is also an axis", source, name);
        if (!d.second.IsScalar())
          fail("{}: derived: \"{}\": expected an expression such as 64 / generate.tp", source, name);
        spec.derived.push_back({name, d.second.Scalar()});
      }
    } else if (key == "cost") {
      spec.cost = kv.second.IsScalar() ? kv.second.Scalar() : "";
    } else {
      fail("{}: key \"{}\" is not a sweep key; expected base, axes, zip, derived or cost", source, key);
    }
  }
  if (spec.base.empty())
    fail("{}: base: missing; expected the run's inputs (workload or generate, system, network)", source);
  if (!spec.cost.empty() && !seen.count(spec.cost)) {
    fail("{}: cost: \"{}\" is not an axis or derived key of this sweep", source, spec.cost);
  }
  const std::size_t n = point_count(spec);
  if (n > kMaxPoints) fail("{}: {} points; expected at most {}", source, n, kMaxPoints);
  return spec;
}

std::vector<std::string> columns(const SweepSpec& spec) {
  std::vector<std::string> out;
  for (const auto& dim : spec.grid) {
    for (const Axis& a : dim) out.push_back(a.key);
  }
  for (const Derived& d : spec.derived) out.push_back(d.key);
  return out;
}

std::size_t point_count(const SweepSpec& spec) {
  std::size_t n = 1;
  for (const auto& dim : spec.grid) {
    const std::size_t k = dim.front().values.size();
    if (n > kMaxPoints * 10 / k) return kMaxPoints * 10;  // far beyond any accepted sweep
    n *= k;
  }
  return n;
}

Point point_at(const SweepSpec& spec, std::size_t index) {
  Point p;
  p.index = index;
  // Mixed radix, the last dimension fastest.
  std::vector<std::size_t> pick(spec.grid.size());
  std::size_t rest = index;
  for (std::size_t d = spec.grid.size(); d-- > 0;) {
    const std::size_t k = spec.grid[d].front().values.size();
    pick[d] = rest % k;
    rest /= k;
  }
  std::vector<std::string> keys;
  for (std::size_t d = 0; d < spec.grid.size(); ++d) {
    for (const Axis& a : spec.grid[d]) {
      p.values.push_back(a.values[pick[d]]);
      keys.push_back(a.key);
    }
  }
  for (const Derived& d : spec.derived) {
    auto lookup = [&](const std::string& name) -> double {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] != name) continue;
        if (!p.values[i].is_number()) {
          fail("\"{}\" is {}, not a number", name, cell_text(p.values[i]));
        }
        return p.values[i].get<double>();
      }
      if (spec.base.contains(name) && spec.base[name].is_number()) return spec.base[name].get<double>();
      fail("\"{}\" is no axis of this sweep (derived values are computed in order)", name);
    };
    try {
      const double v = evaluate(d.expression, lookup);
      p.values.push_back(v == std::floor(v) && std::fabs(v) < 9e15 ? Value(static_cast<std::int64_t>(v)) : Value(v));
    } catch (const Error& e) {
      p.values.push_back(nullptr);
      if (p.error.empty()) p.error = fmt::format("derived {}: {}", d.key, e.what());
    }
    keys.push_back(d.key);
  }
  return p;
}

}  // namespace chakrasim::sweep
