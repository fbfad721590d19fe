#include "tools/pytorch/pytorch_ops.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/error.h"
#include "core/json_input.h"
#include "tools/common/text_format.h"

namespace chakrasim::tools::pytorch {

bool contains(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

std::optional<std::int64_t> as_int64(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  return std::nullopt;
}

std::optional<std::uint64_t> as_uint64(const Json& v) {
  return v.is_number_unsigned() ? std::optional(v.get<std::uint64_t>()) : std::nullopt;
}

Json parse_json(std::string_view text, const std::string& source) {
  return parse_json_input<Json>(text, source, "a PyTorch execution trace (a JSON object with \"nodes\")");
}

void fail_node(const std::string& source, const Op& op, const std::string& what) {
  fail("{}: node {} (\"{}\"): {}", source, op.id, op.name, what);
}

namespace {

// Upstream lists "1.1.1-chakra.1.0.0" too (docs/chakra-format.md calls it broken there); it reads like
// 1.1.1-chakra.0.0.4 here.
constexpr const char* kSchemas[] = {"1.0.2-chakra.0.0.4", "1.0.3-chakra.0.0.4", "1.1.0-chakra.0.0.4",
                                    "1.1.1-chakra.0.0.4", "1.1.1-chakra.1.0.0"};

class OpReader {
 public:
  OpReader(const Json& root, const std::string& source) : root_(root), source_(source) {}

  std::vector<Op> take_ops() { return std::move(ops_); }

  void write_metadata(chakra::GlobalMetadata& gm) const {
    if (!root_.is_object())
      fail("{}: expected a JSON object (a PyTorch execution trace), got {}", source_, json_excerpt(root_));
    const Json& schema = top("schema");
    if (!schema.is_string() ||
        std::find(std::begin(kSchemas), std::end(kSchemas), schema.get<std::string>()) == std::end(kSchemas)) {
      fail("{}: key \"schema\" is {}; expected a supported PyTorch ET schema: 1.0.2-chakra.0.0.4, 1.0.3-chakra.0.0.4, "
           "1.1.0-chakra.0.0.4, 1.1.1-chakra.0.0.4 or 1.1.1-chakra.1.0.0",
           source_, json_excerpt(schema));
    }
    for (const char* key : {"schema", "pid", "time", "start_ts", "finish_ts"}) {
      const Json& v = top(key);
      const bool text = std::string_view(key) == "schema" || std::string_view(key) == "time";
      if (text && !v.is_string()) fail("{}: key \"{}\" is {}; expected a string", source_, key, json_excerpt(v));
      if (!text && !as_uint64(v))
        fail("{}: key \"{}\" is {}; expected a non-negative integer", source_, key, json_excerpt(v));
      *gm.add_attr() =
          text ? chakra::make_string(key, v.get<std::string>()) : chakra::make_uint64(key, v.get<std::uint64_t>());
    }
  }

  void read_ops() {
    const Json& nodes = top("nodes");
    if (!nodes.is_array()) fail("{}: key \"nodes\" is {}; expected a list of nodes", source_, json_excerpt(nodes));
    ops_.resize(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) read_op(nodes[i], i, ops_[i]);
    // Callers, linked as the reference links them: by ctrl_deps, when that id is in the trace.
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const Json& caller = (*ops_[i].json)["ctrl_deps"];
      const auto found = caller.is_number_unsigned() ? index_.find(caller.get<std::uint64_t>()) : index_.end();
      if (found == index_.end()) continue;
      Op& parent = ops_[found->second];
      ops_[i].parent = found->second;
      parent.children.push_back(i);
      if (ops_[i].gpu) parent.gpu_children.push_back(i);
      if (contains(ops_[i].name, "record_param_comms")) parent.record_param_comms = i;
    }
    for (Op& op : ops_) {
      std::sort(op.children.begin(), op.children.end(),
                [&](std::size_t a, std::size_t b) { return ops_[a].id < ops_[b].id; });
    }
    check_call_trees();
  }

 private:
  [[noreturn]] void bad_node(const Op& op, const std::string& what) const { fail_node(source_, op, what); }

  // Callers must form trees: the converter walks each tree from its root, so an op whose callers
  // loop (or that calls itself) is never reached and would vanish from the output, with every op
  // it calls. Only the process root names itself, as PyTorch writes it.
  void check_call_trees() const {
    enum : std::uint8_t { kUnseen, kOnPath, kDone };
    std::vector<std::uint8_t> state(ops_.size(), kUnseen);
    std::vector<std::size_t> path;
    for (std::size_t start = 0; start < ops_.size(); ++start) {
      path.clear();
      std::optional<std::size_t> at = start;
      while (at && state[*at] == kUnseen) {
        state[*at] = kOnPath;
        path.push_back(*at);
        const Op& op = ops_[*at];
        if (op.parent == at) {
          if (op.name == "[pytorch|profiler|execution_trace|process]" || op.name == "[pytorch|profiler|execution_graph|"
                                                                                    "process]")
            break;
          bad_node(op, "ctrl_deps names the node itself; expected its caller's id (only the process root may)");
        }
        at = op.parent;
      }
      if (at && state[*at] == kOnPath && ops_[*at].parent != at) {
        // path[first..] is the loop, each op called by the next: shown caller first.
        const std::size_t first = static_cast<std::size_t>(std::find(path.begin(), path.end(), *at) - path.begin());
        const std::size_t length = path.size() - first;
        bad_node(ops_[*at], fmt::format("its callers (ctrl_deps) loop, a call cycle {} (each calls the next); expected "
                                        "each op's callers to lead up to a thread or process root",
                                        chakra::describe_cycle(length, [&](std::size_t k) {
                                          const Op& op = ops_[path[path.size() - 1 - k]];
                                          return std::pair<std::uint64_t, std::string_view>{op.id, op.name};
                                        })));
      }
      for (std::size_t i : path) state[i] = kDone;
    }
  }

  const Json& top(const char* key) const {
    if (!root_.contains(key)) {
      fail("{}: no key \"{}\"; expected a PyTorch ET with schema, pid, time, start_ts, finish_ts and nodes", source_,
           key);
    }
    return root_[key];
  }

  void read_op(const Json& j, std::size_t index, Op& op) {
    if (!j.is_object()) fail("{}: nodes[{}] is {}; expected a node object", source_, index, json_excerpt(j));
    if (!j.contains("id") || !as_uint64(j["id"])) {
      fail("{}: nodes[{}]: key \"id\" is {}; expected a non-negative integer", source_, index,
           j.contains("id") ? json_excerpt(j["id"]) : "missing");
    }
    op.json = &j;
    op.id = j["id"].get<std::uint64_t>();
    if (!j.contains("name") || !j["name"].is_string()) {
      fail("{}: node {}: key \"name\" is {}; expected a string", source_, op.id,
           j.contains("name") ? json_excerpt(j["name"]) : "missing");
    }
    op.name = j["name"].get<std::string>();
    if (!index_.emplace(op.id, index).second)
      bad_node(op, fmt::format("duplicate id: nodes[{}] has it too; expected unique ids", index_[op.id]));
    auto bad = [&](const std::string& key, const Json& v, const char* expected) {
      bad_node(op, fmt::format("{} is {}; expected {}", key, json_excerpt(v), expected));
    };
    auto given = [&](const char* key) { return j.contains(key) && !j[key].is_null(); };
    if (!j.contains("ctrl_deps")) bad_node(op, "no key \"ctrl_deps\"; expected the caller's id");
    if (given("ctrl_deps") && !j["ctrl_deps"].is_number_integer())
      bad("key \"ctrl_deps\"", j["ctrl_deps"], "the caller's id");
    for (const char* key : {"inputs", "outputs"}) {
      for (const char* field : {"values", "shapes", "types"}) {
        if (!j.contains(key) || !j[key].is_object() || !j[key].contains(field)) {
          bad_node(op, fmt::format("no key \"{}\".\"{}\"; expected {} with values, shapes and types", key, field, key));
        }
      }
    }
    op.gpu = given("cat");
    op.kind = contains(op.name, "process_group:init") ? OpKind::kMetadata : op.gpu ? OpKind::kGpu : OpKind::kCpu;
    if (j.contains("exclusive_dur")) {
      // Python's int() truncates toward zero: -0.5 is 0, but -1 cannot be a duration.
      const Json& v = j["exclusive_dur"];
      const double micros = v.is_number() ? v.get<double>() : -1;
      if (micros <= -1 || micros >= 1.8e19) bad("key \"exclusive_dur\"", v, "a duration in microseconds");
      op.duration_micros = v.is_number_unsigned() ? v.get<std::uint64_t>()
                           : micros < 1           ? 0
                                                  : static_cast<std::uint64_t>(micros);
    }
    if (contains(op.name, "Optimizer.step")) op.duration_micros = 0;  // as the reference: it spans the others
    if (given("ts") && j["ts"].is_number()) op.ts = j["ts"].get<double>();
    if (given("inter_thread_dep")) {
      if (!as_uint64(j["inter_thread_dep"])) bad("key \"inter_thread_dep\"", j["inter_thread_dep"], "a node id");
      op.inter_thread_dep = j["inter_thread_dep"].get<std::uint64_t>();
    }
    if (given("sync_dep")) {
      if (!j["sync_dep"].is_array()) bad("key \"sync_dep\"", j["sync_dep"], "a list of node ids");
      for (const Json& dep : j["sync_dep"]) {
        if (!as_uint64(dep)) bad("an entry of sync_dep", dep, "a node id");
        op.sync_deps.push_back(dep.get<std::uint64_t>());
      }
    }
    if (!j.contains("stream")) op.stream = 0;  // "stream": null writes none
    if (given("stream")) {
      op.stream = as_int64(j["stream"]);
      if (!op.stream) bad("key \"stream\"", j["stream"], "an integer");
    }
    auto set_pg_name = [&](const Json& v) {
      if (!v.is_string()) bad("pg_name", v, "a string");
      op.pg_name = v.get<std::string>();
    };
    if (j.contains("pg_name")) set_pg_name(j["pg_name"]);
    if (!j.contains("attrs")) return;  // missing attributes are an error only on a node that is written
    if (!j["attrs"].is_array()) bad("key \"attrs\"", j["attrs"], "a list of {name, type, value}");
    for (const Json& a : j["attrs"]) {
      if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("value")) {
        bad("an attribute", a, "an object with a string \"name\" and a \"value\"");
      }
      const std::string& name = a["name"].get_ref<const std::string&>();
      const Json& value = a["value"];
      if (name == "pg_name") set_pg_name(value);
      if (name == "op_schema") {
        if (!value.is_string()) bad("attribute \"op_schema\"", value, "a string");
        op.op_schema = value.get<std::string>();
      }
      for (std::size_t k = 0; k < kIntAttrCount; ++k) {
        if (name != kIntAttrs[k]) continue;
        op.int_attrs[k] = as_int64(value);
        if (!op.int_attrs[k]) bad("attribute \"" + name + "\"", value, "a 64-bit integer");
      }
    }
  }

  const Json& root_;
  const std::string& source_;
  std::vector<Op> ops_;                                   // in file order
  std::unordered_map<std::uint64_t, std::size_t> index_;  // id -> ops_ index
};

}  // namespace

void read_metadata(const Json& root, const std::string& source, chakra::GlobalMetadata& gm) {
  OpReader(root, source).write_metadata(gm);
}

std::vector<Op> read_ops(const Json& root, const std::string& source) {
  OpReader reader(root, source);
  reader.read_ops();
  return reader.take_ops();
}

}  // namespace chakrasim::tools::pytorch
