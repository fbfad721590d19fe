#include "tools/pytorch_converter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "chakra/attributes.h"
#include "core/error.h"
#include "core/read_file.h"

namespace chakrasim::tools {
namespace {

// Key order is kept, as Python's json.load keeps it, so objects print in the input's order.
using Json = nlohmann::ordered_json;

// ---- Python's repr() of what json.load returns --------------------------------------------

// Code points above U+007F that Python's str.isprintable() rejects, as sorted inclusive ranges:
// controls, format characters, separators other than the space, surrogates, private use and
// noncharacters. Unassigned code points, which Python escapes too, print as themselves here.
constexpr std::pair<char32_t, char32_t> kUnprintable[] = {
    {0x80, 0xa0},       {0xad, 0xad},       {0x600, 0x605},     {0x61c, 0x61c},     {0x6dd, 0x6dd},
    {0x70f, 0x70f},     {0x890, 0x891},     {0x8e2, 0x8e2},     {0x1680, 0x1680},   {0x180e, 0x180e},
    {0x2000, 0x200f},   {0x2028, 0x202f},   {0x205f, 0x206f},   {0x3000, 0x3000},   {0xd800, 0xf8ff},
    {0xfdd0, 0xfdef},   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0xfffe, 0xffff},   {0x110bd, 0x110bd},
    {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
    {0xe0020, 0xe007f}, {0xf0000, 0x10ffff}};

bool printable(char32_t c) {
  if ((c & 0xfffe) == 0xfffe) return false;  // U+xFFFE and U+xFFFF of every plane
  for (const auto& [first, last] : kUnprintable) {
    if (c < first) return true;
    if (c <= last) return false;
  }
  return true;
}

void append_escape(std::string& out, const char* prefix, std::uint32_t value, int digits) {
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += "0123456789abcdef"[(value >> shift) & 0xf];
}

// The text is valid UTF-8: the JSON parser checked it.
void repr_string(const std::string& s, std::string& out) {
  const bool single = s.find('\'') != std::string::npos;
  const char quote = single && s.find('"') == std::string::npos ? '"' : '\'';
  out += quote;
  for (std::size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {
      const char c = s[i++];
      if (c == quote || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (lead < 0x20 || lead == 0x7f) {
        append_escape(out, "\\x", lead, 2);
      } else {
        out += c;
      }
      continue;
    }
    const std::size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    char32_t c = lead & (length == 4 ? 0x07u : length == 3 ? 0x0fu : 0x1fu);
    for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
    if (printable(c)) out.append(s, i, length);
    else if (c <= 0xff) append_escape(out, "\\x", c, 2);
    else if (c <= 0xffff) append_escape(out, "\\u", c, 4);
    else append_escape(out, "\\U", c, 8);
    i += length;
  }
  out += quote;
}

// Python prints the shortest digits that read back as the same double, in positional notation
// when the decimal point falls within 16 digits of them, else as d.ddde+XX.
void repr_double(double value, std::string& out) {
  char buffer[64];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string_view sci(buffer, static_cast<std::size_t>(written.ptr - buffer));
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c == '-') out += c;
    else if (c != '.') digits += c;
  }
  int exponent = 0;
  const std::string_view exp_text = sci.substr(e + (sci[e + 1] == '+' ? 2 : 1));
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  const int point = exponent + 1;  // digits before the decimal point
  const int count = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out.append("0.").append(static_cast<std::size_t>(-point), '0').append(digits);
    } else if (point >= count) {
      out.append(digits).append(static_cast<std::size_t>(point - count), '0').append(".0");
    } else {
      const auto whole = static_cast<std::size_t>(point);
      out.append(digits, 0, whole).append(1, '.').append(digits, whole);
    }
    return;
  }
  out += digits[0];
  if (count > 1) out.append(1, '.').append(digits, 1);
  out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
}

void repr(const Json& v, std::string& out) {
  switch (v.type()) {
    case Json::value_t::null: out += "None"; return;
    case Json::value_t::boolean: out += v.get<bool>() ? "True" : "False"; return;
    case Json::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); return;
    case Json::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); return;
    case Json::value_t::number_float: repr_double(v.get<double>(), out); return;
    case Json::value_t::string: repr_string(v.get_ref<const std::string&>(), out); return;
    case Json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i > 0) out += ", ";
        repr(v[i], out);
      }
      out += ']';
      return;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : v.items()) {
        if (!first) out += ", ";
        first = false;
        repr_string(key, out);
        out += ": ";
        repr(item, out);
      }
      out += '}';
      return;
    }
    default: out += "None"; return;  // binary values cannot come from JSON text
  }
}

std::string str(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  repr(v, out);
  return out;
}

Json parse_json(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    fail("{}: invalid JSON: {}", source, e.what());
  }
}

// ---- the trace as read ---------------------------------------------------------------------

enum class OpKind { kCpu, kGpu, kMetadata };

// The attributes every converted node carries, in the order they are written.
constexpr const char* kIntAttrs[] = {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid"};
constexpr std::size_t kIntAttrCount = std::size(kIntAttrs);

constexpr const char* kSchemas[] = {"1.0.2-chakra.0.0.4", "1.0.3-chakra.0.0.4", "1.1.0-chakra.0.0.4",
                                    "1.1.1-chakra.0.0.4", "1.1.1-chakra.1.0.0"};

bool is_root_name(const std::string& name) {
  return name == "[pytorch|profiler|execution_trace|thread]" || name == "[pytorch|profiler|execution_graph|thread]";
}

struct Op {
  const Json* json = nullptr;
  std::uint64_t id = 0;
  std::string name;
  OpKind kind = OpKind::kCpu;
  std::optional<std::size_t> parent;  // the caller, when it is in the trace
  std::uint64_t duration_micros = 0;
  std::optional<double> ts;
  std::uint64_t inter_thread_dep = 0;  // 0 is none, for the reference too
  std::vector<std::uint64_t> sync_deps;
  std::optional<std::int64_t> stream;
  std::optional<std::int64_t> int_attrs[kIntAttrCount];
  std::optional<std::string> op_schema;
  std::string pg_name;
  std::vector<std::size_t> children;      // every callee, ascending id
  std::vector<std::size_t> gpu_children;  // kernels it launched, in file order
  std::optional<std::size_t> record_param_comms;  // its last record_param_comms callee
};

std::string shown(const Json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

std::optional<std::int64_t> as_int64(const Json& v) {
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  return std::nullopt;
}

std::optional<std::uint64_t> as_uint64(const Json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  return std::nullopt;
}

class Converter {
 public:
  Converter(const Json& root, const std::string& source, const PytorchOptions& options)
      : root_(root), source_(source), options_(options) {}

  chakra::Trace run() {
    chakra::Trace trace;
    write_metadata(trace.metadata);
    read_ops();
    convert_ops();
    for (std::size_t n = 0; n < out_.size(); ++n) {
      if (is_root_name(out_[n].node.name())) chain_from(n);
    }
    drop_dangling();
    check_cycles();
    std::vector<std::size_t> order;
    for (std::size_t n = 0; n < out_.size(); ++n) {
      if (!out_[n].dropped) order.push_back(n);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return out_[a].node.id() < out_[b].node.id(); });
    for (std::size_t n : order) {
      Out& o = out_[n];
      for (std::uint64_t d : o.ctrl) o.node.add_ctrl_deps(d);
      for (std::uint64_t d : o.data) o.node.add_data_deps(d);
      trace.nodes.push_back(std::move(o.node));
    }
    return trace;
  }

 private:
  struct Out {
    chakra::Node node;
    std::size_t op = 0;
    std::vector<std::uint64_t> ctrl, data;
    bool dropped = false;
  };

  [[noreturn]] void bad_node(const Op& op, const std::string& what) const {
    fail("{}: node {} (\"{}\"): {}", source_, op.id, op.name, what);
  }

  const Json& top(const char* key) const {
    if (!root_.contains(key)) fail("{}: no key \"{}\"; expected a PyTorch ET with schema, pid, time, start_ts, finish_ts and nodes", source_, key);
    return root_[key];
  }

  void write_metadata(chakra::GlobalMetadata& gm) const {
    if (!root_.is_object()) fail("{}: expected a JSON object (a PyTorch execution trace), got {}", source_, shown(root_));
    const Json& schema = top("schema");
    if (!schema.is_string() || std::find(std::begin(kSchemas), std::end(kSchemas), schema.get<std::string>()) == std::end(kSchemas)) {
      fail("{}: key \"schema\" is {}; expected a supported PyTorch ET schema: 1.0.2-chakra.0.0.4, "
           "1.0.3-chakra.0.0.4, 1.1.0-chakra.0.0.4, 1.1.1-chakra.0.0.4 or 1.1.1-chakra.1.0.0", source_, shown(schema));
    }
    auto text = [&](const char* key) {
      const Json& v = top(key);
      if (!v.is_string()) fail("{}: key \"{}\" is {}; expected a string", source_, key, shown(v));
      return v.get<std::string>();
    };
    auto count = [&](const char* key) {
      const std::optional<std::uint64_t> v = as_uint64(top(key));
      if (!v) fail("{}: key \"{}\" is {}; expected a non-negative integer", source_, key, shown(top(key)));
      return *v;
    };
    *gm.add_attr() = chakra::make_string("schema", text("schema"));
    *gm.add_attr() = chakra::make_uint64("pid", count("pid"));
    *gm.add_attr() = chakra::make_string("time", text("time"));
    *gm.add_attr() = chakra::make_uint64("start_ts", count("start_ts"));
    *gm.add_attr() = chakra::make_uint64("finish_ts", count("finish_ts"));
  }

  void read_ops() {
    const Json& nodes = top("nodes");
    if (!nodes.is_array()) fail("{}: key \"nodes\" is {}; expected a list of nodes", source_, shown(nodes));
    ops_.resize(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) read_op(nodes[i], i, ops_[i]);
    // Callers, as the reference links them: by ctrl_deps, when that id is in the trace.
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const Json& caller = (*ops_[i].json)["ctrl_deps"];
      const auto found = caller.is_number_unsigned() ? index_.find(caller.get<std::uint64_t>()) : index_.end();
      if (found == index_.end()) continue;
      Op& parent = ops_[found->second];
      ops_[i].parent = found->second;
      parent.children.push_back(i);
      if (ops_[i].json->contains("cat") && !(*ops_[i].json)["cat"].is_null()) parent.gpu_children.push_back(i);
      if (ops_[i].name.find("record_param_comms") != std::string::npos) parent.record_param_comms = i;
    }
    for (Op& op : ops_) {
      std::sort(op.children.begin(), op.children.end(), [&](std::size_t a, std::size_t b) { return ops_[a].id < ops_[b].id; });
    }
  }

  void read_op(const Json& j, std::size_t index, Op& op) {
    if (!j.is_object()) fail("{}: nodes[{}] is {}; expected a node object", source_, index, shown(j));
    if (!j.contains("id") || !as_uint64(j["id"])) {
      fail("{}: nodes[{}]: key \"id\" is {}; expected a non-negative integer", source_, index,
           j.contains("id") ? shown(j["id"]) : "missing");
    }
    op.json = &j;
    op.id = j["id"].get<std::uint64_t>();
    if (!j.contains("name") || !j["name"].is_string()) {
      fail("{}: node {}: key \"name\" is {}; expected a string", source_, op.id, j.contains("name") ? shown(j["name"]) : "missing");
    }
    op.name = j["name"].get<std::string>();
    if (!index_.emplace(op.id, index).second) bad_node(op, fmt::format("duplicate id: nodes[{}] has it too; expected unique ids", index_[op.id]));
    auto need = [&](const char* key) -> const Json& {
      if (!j.contains(key)) bad_node(op, fmt::format("no key \"{}\"", key));
      return j[key];
    };
    const Json& caller = need("ctrl_deps");
    if (!caller.is_null() && !caller.is_number_integer()) bad_node(op, fmt::format("key \"ctrl_deps\" is {}; expected the caller's id", shown(caller)));
    for (const char* key : {"inputs", "outputs"}) {
      const Json& io = need(key);
      for (const char* field : {"values", "shapes", "types"}) {
        if (!io.is_object() || !io.contains(field)) bad_node(op, fmt::format("key \"{}\" has no \"{}\"; expected values, shapes and types", key, field));
      }
    }
    const bool gpu = j.contains("cat") && !j["cat"].is_null();
    op.kind = op.name.find("process_group:init") != std::string::npos ? OpKind::kMetadata : gpu ? OpKind::kGpu : OpKind::kCpu;
    if (j.contains("exclusive_dur")) {
      const Json& v = j["exclusive_dur"];
      // int() truncates toward zero, so -0.5 is 0 but -1 cannot be a duration.
      const double micros = v.is_number() ? v.get<double>() : -1;
      if (!v.is_number() || micros <= -1 || micros >= 1.8e19) bad_node(op, fmt::format("key \"exclusive_dur\" is {}; expected a duration in microseconds", shown(v)));
      op.duration_micros = v.is_number_unsigned() ? v.get<std::uint64_t>() : micros < 1 ? 0 : static_cast<std::uint64_t>(micros);
    }
    if (op.name.find("Optimizer.step") != std::string::npos) op.duration_micros = 0;  // as the reference: it spans the step
    if (j.contains("ts") && j["ts"].is_number()) op.ts = j["ts"].get<double>();
    if (j.contains("inter_thread_dep") && !j["inter_thread_dep"].is_null()) {
      const std::optional<std::uint64_t> dep = as_uint64(j["inter_thread_dep"]);
      if (!dep) bad_node(op, fmt::format("key \"inter_thread_dep\" is {}; expected a node id", shown(j["inter_thread_dep"])));
      op.inter_thread_dep = *dep;
    }
    if (j.contains("sync_dep") && !j["sync_dep"].is_null()) {
      const Json& deps = j["sync_dep"];
      for (std::size_t k = 0; deps.is_array() && k < deps.size(); ++k) {
        if (!as_uint64(deps[k])) bad_node(op, fmt::format("sync_dep[{}] is {}; expected a node id", k, shown(deps[k])));
        op.sync_deps.push_back(deps[k].get<std::uint64_t>());
      }
      if (!deps.is_array()) bad_node(op, fmt::format("key \"sync_dep\" is {}; expected a list of node ids", shown(deps)));
    }
    if (!j.contains("stream")) op.stream = 0;
    else if (!j["stream"].is_null()) {
      op.stream = as_int64(j["stream"]);
      if (!op.stream) bad_node(op, fmt::format("key \"stream\" is {}; expected an integer", shown(j["stream"])));
    }
    auto set_pg_name = [&](const Json& v) {
      if (!v.is_string()) bad_node(op, fmt::format("pg_name is {}; expected a string", shown(v)));
      op.pg_name = v.get<std::string>();
    };
    if (j.contains("pg_name")) set_pg_name(j["pg_name"]);
    if (!j.contains("attrs")) return;
    const Json& attrs = j["attrs"];
    if (!attrs.is_array()) bad_node(op, fmt::format("key \"attrs\" is {}; expected a list of {{name, type, value}}", shown(attrs)));
    for (const Json& a : attrs) {
      if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("value")) {
        bad_node(op, fmt::format("attribute {} is not an object with a string \"name\" and a \"value\"", shown(a)));
      }
      const std::string& name = a["name"].get_ref<const std::string&>();
      const Json& value = a["value"];
      if (name == "op_schema") {
        if (!value.is_string()) bad_node(op, fmt::format("attribute \"op_schema\" is {}; expected a string", shown(value)));
        op.op_schema = value.get<std::string>();
      } else if (name == "pg_name") {
        set_pg_name(value);
      }
      for (std::size_t k = 0; k < kIntAttrCount; ++k) {
        if (name != kIntAttrs[k]) continue;
        op.int_attrs[k] = as_int64(value);
        if (!op.int_attrs[k]) bad_node(op, fmt::format("attribute \"{}\" is {}; expected a 64-bit integer", name, shown(value)));
      }
    }
  }

  // ---- conversion ---------------------------------------------------------------------------

  void convert_ops() {
    out_of_op_.assign(ops_.size(), kNone);
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind == OpKind::kGpu) continue;  // converted after the op that launched it
      convert(i);
      for (std::size_t g : ops_[i].gpu_children) add_comm_attrs(convert(g));
    }
    if (!options_.fix_defects) return;
    // Every caller in the output, wherever the file lists it (not only the ones listed earlier).
    for (Out& o : out_) {
      const std::optional<std::size_t> parent = ops_[o.op].parent;
      o.ctrl.clear();
      if (parent && *parent != o.op && out_of_op_[*parent] != kNone) o.ctrl.push_back(ops_[*parent].id);
    }
  }

  // Converts op `i` (again, in place, if it already was: the reference overwrites by id).
  Out& convert(std::size_t i) {
    Op& op = ops_[i];
    for (std::size_t k = 0; k < kIntAttrCount; ++k) {
      if (!op.int_attrs[k]) bad_node(op, fmt::format("attrs has no \"{}\"; expected rf_id, fw_parent, seq_id, scope, tid, fw_tid and op_schema", kIntAttrs[k]));
    }
    if (!op.op_schema) bad_node(op, "attrs has no \"op_schema\"; expected rf_id, fw_parent, seq_id, scope, tid, fw_tid and op_schema");
    if (out_of_op_[i] == kNone) {
      out_of_op_[i] = out_.size();
      out_.emplace_back();
    }
    Out& o = out_[out_of_op_[i]];
    o = Out{};
    o.op = i;
    // The reference keeps the caller only when it was converted before this op.
    if (op.parent && out_of_op_[*op.parent] != kNone && *op.parent != i) o.ctrl.push_back(ops_[*op.parent].id);
    chakra::Node& n = o.node;
    n.set_id(op.id);
    n.set_name(op.name);
    n.set_type(node_type(op));
    n.set_duration_micros(op.duration_micros);
    using Io = std::pair<const char*, ChakraProtoMsg::IOInfo*>;
    for (const auto& [key, io] : {Io{"inputs", n.mutable_inputs()}, Io{"outputs", n.mutable_outputs()}}) {
      const Json& j = (*op.json)[key];
      io->set_values(str(j["values"]));
      io->set_shapes(str(j["shapes"]));
      io->set_types(str(j["types"]));
    }
    for (std::size_t k = 0; k < kIntAttrCount; ++k) *n.add_attr() = chakra::make_int64(kIntAttrs[k], *op.int_attrs[k]);
    *n.add_attr() = chakra::make_string("op_schema", *op.op_schema);
    *n.add_attr() = chakra::make_bool("is_cpu_op", !op.json->contains("cat") || (*op.json)["cat"].is_null());
    if (op.stream) *n.add_attr() = chakra::make_int64("stream", *op.stream);
    return o;
  }

  const Op& caller_of(const Op& op, const char* role) const {
    if (!op.parent) bad_node(op, fmt::format("its caller (ctrl_deps) is not in the trace; expected {}", role));
    return ops_[*op.parent];
  }

  ChakraProtoMsg::NodeType node_type(Op& op) const {
    if (op.kind == OpKind::kMetadata) return ChakraProtoMsg::METADATA_NODE;
    if (!op.json->contains("cat") || (*op.json)["cat"].is_null()) return ChakraProtoMsg::COMP_NODE;
    if (op.name.find("ncclDevKernel_SendRecv") != std::string::npos) {
      // What kind of point-to-point this is shows in the name of the op that called NCCL.
      const Op& parent = caller_of(op, "the op that launched this kernel");
      std::string keyword = parent.name;
      if (parent.name == "record_param_comms") {
        keyword = caller_of(parent, "the nccl: op that called it").name;
        if (!parent.pg_name.empty()) op.pg_name = parent.pg_name;
      }
      if (keyword.find("send") != std::string::npos) return ChakraProtoMsg::COMM_SEND_NODE;
      if (keyword.find("recv") != std::string::npos) return ChakraProtoMsg::COMM_RECV_NODE;
      if (keyword.find("nccl:all_to_all") != std::string::npos) return ChakraProtoMsg::COMM_COLL_NODE;
    }
    if (op.name.find("ncclKernel") != std::string::npos || op.name.find("ncclDevKernel") != std::string::npos) {
      return ChakraProtoMsg::COMM_COLL_NODE;
    }
    return ChakraProtoMsg::COMP_NODE;
  }

  std::int64_t collective_of(const Op& op) const {
    std::string key;
    for (char c : op.name) {
      if (c != '_' && c != '-') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    static const std::pair<const char*, ChakraProtoMsg::CollectiveCommType> kKinds[] = {
        {"allreduce", ChakraProtoMsg::ALL_REDUCE},         {"alltoall", ChakraProtoMsg::ALL_TO_ALL},
        {"allgather", ChakraProtoMsg::ALL_GATHER},         {"reducescatter", ChakraProtoMsg::REDUCE_SCATTER},
        {"broadcast", ChakraProtoMsg::BROADCAST}};
    for (const auto& [word, kind] : kKinds) {
      if (key.find(word) != std::string::npos) return kind;
    }
    if (op.name.find("ncclDevKernel_SendRecv") != std::string::npos) return ChakraProtoMsg::ALL_TO_ALL;
    bad_node(op, "unknown NCCL kernel: cannot tell its collective; expected a name containing AllReduce, "
                 "AllToAll, AllGather, ReduceScatter, Broadcast or SendRecv");
  }

  // Bytes of the tensors among the inputs; a tensor is [id, storage, offset, elements, element
  // bytes, device], and a GenericList[Tensor...] input is a list of them.
  std::int64_t comm_size_of(const Op& op) const {
    const Json& inputs = (*op.json)["inputs"];
    const Json& values = inputs["values"];
    const Json& types = inputs["types"];
    if (!values.is_array() || !types.is_array()) bad_node(op, "inputs.values and inputs.types are not lists; expected lists to size the message");
    std::int64_t bytes = 0;
    auto add = [&](const Json& tensor, std::size_t k) {
      const std::optional<std::int64_t> count = tensor.is_array() && tensor.size() >= 5 ? as_int64(tensor[3]) : std::nullopt;
      const std::optional<std::int64_t> width = count ? as_int64(tensor[4]) : std::nullopt;
      if (!width || *count < 0 || *width < 0 || (*width > 0 && *count > (std::numeric_limits<std::int64_t>::max() - bytes) / *width)) {
        bad_node(op, fmt::format("inputs.values[{}] holds {}; expected a tensor [id, storage id, offset, elements, "
                                 "bytes per element, device]", k, shown(tensor)));
      }
      bytes += *count * *width;
    };
    for (std::size_t k = 0; k < std::min(values.size(), types.size()); ++k) {
      if (!types[k].is_string()) bad_node(op, fmt::format("inputs.types[{}] is {}; expected a type name", k, shown(types[k])));
      const std::string& type = types[k].get_ref<const std::string&>();
      if (type.find("Tensor") == std::string::npos) continue;
      if (type.rfind("GenericList[Tensor", 0) == 0) {
        if (!values[k].is_array()) bad_node(op, fmt::format("inputs.values[{}] is {}; expected a list of tensors", k, shown(values[k])));
        for (const Json& t : values[k]) add(t, k);
      } else {
        add(values[k], k);
      }
    }
    return bytes;
  }

  void add_comm_attrs(Out& o) {
    const Op& op = ops_[o.op];
    chakra::Node& n = o.node;
    const bool p2p = n.type() == ChakraProtoMsg::COMM_SEND_NODE || n.type() == ChakraProtoMsg::COMM_RECV_NODE;
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE && !p2p) return;
    if (!p2p) *n.add_attr() = chakra::make_int64("comm_type", collective_of(op));
    *n.add_attr() = chakra::make_int64("comm_size", comm_size_of(op));
    if (!op.pg_name.empty()) *n.add_attr() = chakra::make_string("pg_name", op.pg_name);
    if (!p2p || !options_.fix_defects) return;
    const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
    *n.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", peer_of(op, send));
    *n.add_attr() = chakra::make_int32("comm_tag", 0);
  }

  // The peer's global rank. PyTorch records a send or receive as record_param_comms(..., peer
  // rank within the group, "send" | "recv", ...); the group's rank list maps it to a global rank.
  std::int32_t peer_of(const Op& kernel, bool send) const {
    const char* word = send ? "send" : "recv";
    auto rank_argument = [&](const Op& op) -> std::optional<std::int64_t> {
      const Json& in = (*op.json)["inputs"];
      const Json& values = in["values"];
      const Json& types = in["types"];
      for (std::size_t k = 1; values.is_array() && types.is_array() && k < std::min(values.size(), types.size()); ++k) {
        if (types[k] == "String" && values[k] == word && types[k - 1] == "Int") return as_int64(values[k - 1]);
      }
      return std::nullopt;
    };
    std::optional<std::int64_t> local = rank_argument(kernel);
    if (!local && kernel.parent) {
      const Op& parent = ops_[*kernel.parent];
      if (parent.name == "record_param_comms") local = rank_argument(parent);
      else if (parent.record_param_comms) local = rank_argument(ops_[*parent.record_param_comms]);
    }
    if (!local || *local < 0) {
      bad_node(kernel, fmt::format("cannot find the {} peer: expected its record_param_comms inputs to hold the peer "
                                   "rank (Int) before \"{}\" (String); convert without --fix-defects to leave it out",
                                   send ? "send's" : "receive's", word));
    }
    std::int64_t global = *local;
    const auto group = process_groups().find(kernel.pg_name);
    if (group != process_groups().end() && !group->second.empty()) {
      if (static_cast<std::uint64_t>(*local) >= group->second.size()) {
        bad_node(kernel, fmt::format("peer rank {} is outside process group \"{}\" of {} ranks", *local, kernel.pg_name, group->second.size()));
      }
      global = group->second[static_cast<std::size_t>(*local)];
    }
    if (global > std::numeric_limits<std::int32_t>::max()) bad_node(kernel, fmt::format("peer rank {} does not fit comm_src/comm_dst (int32)", global));
    return static_cast<std::int32_t>(global);
  }

  // pg_name -> global ranks, from the "## process_group:init ##" ops: their first input is the
  // JSON list [{"pg_name": ..., "ranks": [...]}, ...]; no ranks means every rank.
  const std::map<std::string, std::vector<std::int64_t>>& process_groups() const {
    if (groups_) return *groups_;
    groups_.emplace();
    for (const Op& op : ops_) {
      const Json& values = (*op.json)["inputs"]["values"];
      if (op.kind != OpKind::kMetadata || !values.is_array() || values.empty() || !values[0].is_string()) continue;
      const Json list = Json::parse(values[0].get<std::string>(), nullptr, false);
      for (std::size_t k = 0; list.is_array() && k < list.size(); ++k) {
        const Json& pg = list[k];
        if (!pg.is_object() || !pg.contains("pg_name")) continue;
        std::vector<std::int64_t>& ranks = (*groups_)[str(pg["pg_name"])];
        for (std::size_t r = 0; pg.contains("ranks") && pg["ranks"].is_array() && r < pg["ranks"].size(); ++r) {
          if (const auto rank = as_int64(pg["ranks"][r])) ranks.push_back(*rank);
        }
      }
    }
    return *groups_;
  }

  // ---- dependencies -------------------------------------------------------------------------

  static bool has(const std::vector<std::uint64_t>& deps, std::uint64_t id) {
    return std::find(deps.begin(), deps.end(), id) != deps.end();
  }

  // The reference's call-tree walk from one root, children in ascending id: a CPU op depends on
  // the CPU op walked before it (and its inter-thread dependency); a kernel depends on the last
  // op walked, except that sibling kernels of one CPU op all depend on that op.
  void chain_from(std::size_t root) {
    ++walk_;
    visited_.resize(out_.size(), 0);
    std::vector<std::size_t> stack{root};
    std::optional<std::size_t> last_cpu, last_any;
    while (!stack.empty()) {
      const std::size_t n = stack.back();
      stack.pop_back();
      if (visited_[n] == walk_) continue;
      visited_[n] = walk_;
      Out& o = out_[n];
      const Op& op = ops_[o.op];
      if (op.kind == OpKind::kGpu) {
        if (last_any && !has(o.data, out_[*last_any].node.id())) o.data.push_back(out_[*last_any].node.id());
        last_any = last_cpu;
      } else {
        if (op.inter_thread_dep != 0 && !has(o.data, op.inter_thread_dep)) o.data.push_back(op.inter_thread_dep);
        if (last_cpu && !has(o.data, out_[*last_cpu].node.id())) o.data.push_back(out_[*last_cpu].node.id());
        last_cpu = n;
        last_any = n;
      }
      // Fixed here (the reference compares start times it never sets, so adds none): a sync
      // dependency on a node of the output that started before this one.
      for (std::uint64_t dep : op.sync_deps) {
        const auto found = index_.find(dep);
        if (found == index_.end() || out_of_op_[found->second] == kNone || has(o.data, dep)) continue;
        const Op& earlier = ops_[found->second];
        if (!earlier.ts || !op.ts || *earlier.ts < *op.ts) o.data.push_back(dep);
      }
      for (auto child = op.children.rbegin(); child != op.children.rend(); ++child) {
        const std::size_t c = out_of_op_[*child];
        if (c != kNone && visited_[c] != walk_) stack.push_back(c);
      }
    }
  }

  // Nodes with no data dependency that no node depends on go, as in the reference.
  void drop_dangling() {
    std::vector<bool> parent(out_.size(), false);
    std::unordered_map<std::uint64_t, std::size_t> by_id;
    for (std::size_t n = 0; n < out_.size(); ++n) by_id[out_[n].node.id()] = n;
    for (const Out& o : out_) {
      for (std::uint64_t d : o.data) {
        const auto found = by_id.find(d);
        if (found != by_id.end()) parent[found->second] = true;
      }
    }
    for (std::size_t n = 0; n < out_.size(); ++n) out_[n].dropped = out_[n].data.empty() && !parent[n];
    for (Out& o : out_) {
      for (std::uint64_t d : o.data) {
        const auto found = by_id.find(d);
        if (found == by_id.end()) {
          bad_node(ops_[o.op], fmt::format("it depends on node {} (its inter_thread_dep), which is not in the output; "
                                           "expected the id of a CPU op of the trace", d));
        }
      }
      // A caller that was dropped cannot stay a dependency of a trace that should load.
      if (options_.fix_defects) {
        std::erase_if(o.ctrl, [&](std::uint64_t d) { return out_[by_id.at(d)].dropped; });
      }
    }
    by_id_ = std::move(by_id);
  }

  // Data and ctrl dependencies must form a DAG: the simulator follows both. Iterative, so a
  // long trace cannot exhaust the stack (the reference's recursion stops near 1,000 nodes).
  void check_cycles() const {
    enum : std::uint8_t { kNew, kOnPath, kDone };
    std::vector<std::uint8_t> state(out_.size(), kNew);
    auto parents_of = [&](std::size_t n) {
      std::vector<std::size_t> parents;
      for (const auto* deps : {&out_[n].data, &out_[n].ctrl}) {
        for (std::uint64_t d : *deps) {
          const auto found = by_id_.find(d);
          if (found != by_id_.end() && !out_[found->second].dropped) parents.push_back(found->second);
        }
      }
      return parents;
    };
    for (std::size_t start = 0; start < out_.size(); ++start) {
      if (out_[start].dropped || state[start] != kNew) continue;
      std::vector<std::pair<std::size_t, std::vector<std::size_t>>> path;
      path.emplace_back(start, parents_of(start));
      state[start] = kOnPath;
      while (!path.empty()) {
        auto& [n, parents] = path.back();
        if (parents.empty()) {
          state[n] = kDone;
          path.pop_back();
          continue;
        }
        const std::size_t p = parents.back();
        parents.pop_back();
        if (state[p] == kDone) continue;
        if (state[p] == kOnPath) {
          std::string cycle;
          bool on = false;
          for (const auto& step : path) {
            on = on || step.first == p;
            if (on) cycle += fmt::format("{} (\"{}\") -> ", out_[step.first].node.id(), out_[step.first].node.name());
          }
          fail("{}: dependency cycle: node {}{} (each depends on the next); expected the dependencies to form a DAG",
               source_, cycle, out_[p].node.id());
        }
        state[p] = kOnPath;
        path.emplace_back(p, parents_of(p));
      }
    }
  }

  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  const Json& root_;
  const std::string& source_;
  const PytorchOptions& options_;
  std::vector<Op> ops_;
  std::unordered_map<std::uint64_t, std::size_t> index_;  // id -> ops_ index
  std::vector<Out> out_;                                   // in the order converted
  std::vector<std::size_t> out_of_op_;                     // ops_ index -> out_ index or kNone
  std::unordered_map<std::uint64_t, std::size_t> by_id_;   // id -> out_ index
  std::vector<std::uint32_t> visited_;
  std::uint32_t walk_ = 0;
  mutable std::optional<std::map<std::string, std::vector<std::int64_t>>> groups_;
};

}  // namespace

chakra::Trace convert_pytorch(std::string_view json_text, const std::string& source, const PytorchOptions& options) {
  const Json root = parse_json(json_text, source);
  return Converter(root, source, options).run();
}

std::size_t convert_pytorch_file(const std::string& json_path, const std::string& et_path, const PytorchOptions& options) {
  const std::string text = read_file(json_path, "PyTorch execution trace", "a PyTorch ET or ET+ JSON file");
  const chakra::Trace trace = convert_pytorch(text, json_path, options);
  chakra::write_trace(et_path, trace);
  return trace.nodes.size();
}

std::string python_str(std::string_view json_text) { return str(parse_json(json_text, "JSON")); }

}  // namespace chakrasim::tools
