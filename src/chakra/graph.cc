#include "chakra/graph.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <numeric>
#include <unordered_map>

#include "chakra/attributes.h"
#include "chakra/node_wire.h"
#include "core/error.h"

namespace chakrasim::chakra {

const char* node_type_name(std::uint32_t raw_type) {
  static const char* const kNames[] = {"INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
                                       "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};
  return raw_type < 8 ? kNames[raw_type] : "an unknown node type";
}

std::string describe_cycle(std::size_t length,
                           const std::function<std::pair<std::uint64_t, std::string_view>(std::size_t)>& member) {
  constexpr std::size_t kShownEachEnd = 3;
  constexpr std::size_t kNameChars = 40;
  auto show = [&](std::size_t k) {
    const auto [id, name] = member(k);
    if (name.empty()) return std::to_string(id);
    return name.size() <= kNameChars ? fmt::format("{} \"{}\"", id, name)
                                     : fmt::format("{} \"{}...\"", id, name.substr(0, kNameChars));
  };
  std::string out = fmt::format("of {} node{}: ", length, length == 1 ? "" : "s");
  for (std::size_t k = 0; k < length; ++k) {
    if (length > 2 * kShownEachEnd + 1 && k == kShownEachEnd) {
      out += fmt::format("... ({} more) -> ", length - 2 * kShownEachEnd);
      k = length - kShownEachEnd - 1;
      continue;
    }
    out += show(k) + " -> ";
  }
  return out + show(0);
}

const char* comm_type_name(std::int64_t raw_type) {
  static const char* const kNames[] = {"ALL_REDUCE", "REDUCE",         "ALL_GATHER",
                                       "GATHER",     "SCATTER",        "BROADCAST",
                                       "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK",
                                       "BARRIER"};
  return raw_type >= 0 && raw_type < 10 ? kNames[raw_type] : "an unknown collective type";
}

std::optional<CommType> comm_type_from_name(std::string_view name) {
  std::string folded;
  for (const char c : name) {
    if (c == '_' || c == '-' || c == ' ') continue;
    folded += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (std::int32_t t = 0; t <= static_cast<std::int32_t>(CommType::kBarrier); ++t) {
    std::string candidate;
    for (const char* c = comm_type_name(t); *c != 0; ++c) {
      if (*c != '_') candidate += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    }
    if (candidate == folded) return static_cast<CommType>(t);
  }
  return std::nullopt;
}

const char* comm_type_file_name(CommType type) {
  static const char* const kNames[] = {"all_reduce", "reduce",         "all_gather",
                                       "gather",     "scatter",        "broadcast",
                                       "all_to_all", "reduce_scatter", "reduce_scatter_block",
                                       "barrier"};
  const auto t = static_cast<std::int32_t>(type);
  return t >= 0 && t < 10 ? kNames[t] : "collective";
}

namespace {

// The attributes the models read, by name; a node's first attribute of each name counts.
enum KnownAttr : std::uint8_t {
  kIsCpuOp,
  kCommTypeAttr,
  kCommSizeAttr,
  kCommSrcAttr,
  kCommDstAttr,
  kCommTagAttr,
  kNumOpsAttr,
  kTensorSizeAttr,
  kCommPriorityAttr,
  kInvolvedDimAttr,
  kPgNameAttr,
  kGemmAttr,
  kConvAttr,
  kPassAttr,
  kKnownAttrs
};
constexpr std::array<std::string_view, kKnownAttrs> kKnownNames = {"is_cpu_op",    "comm_type",   "comm_size",
                                                                   "comm_src",     "comm_dst",    "comm_tag",
                                                                   "num_ops",      "tensor_size", "comm_priority",
                                                                   "involved_dim", "pg_name",     "gemm",
                                                                   "conv",         "pass"};

}  // namespace

std::span<const std::string_view> read_attribute_names() { return kKnownNames; }

namespace {

// One pass over the node's attributes: the first of each known name (nullptr: absent).
std::array<const Attribute*, kKnownAttrs> find_known(const Node& node) {
  std::array<const Attribute*, kKnownAttrs> found{};
  for (const Attribute& attr : node.attr()) {
    const std::string& name = attr.name();
    for (std::size_t k = 0; k < kKnownAttrs; ++k) {
      if (found[k] == nullptr && name == kKnownNames[k]) {
        found[k] = &attr;
        break;
      }
    }
  }
  return found;
}

// Decodes the attributes the models use (but the strings, which the caller interns). Returns
// false when the node has none of them.
bool decode_attrs(const Node& node, const std::array<const Attribute*, kKnownAttrs>& found, OpAttrs& out,
                  std::optional<std::string>& pg_name, OpShape& shape) {
  auto set_int = [&](KnownAttr k, std::int64_t& field, OpAttrs::Present bit) {
    if (auto v = attr_int(node, found[k])) {
      field = *v;
      out.present |= bit;
    }
  };
  auto set_uint = [&](KnownAttr k, std::uint64_t& field, OpAttrs::Present bit) {
    if (auto v = attr_uint(node, found[k])) {
      field = *v;
      out.present |= bit;
    }
  };
  set_int(kCommTypeAttr, out.comm_type, OpAttrs::kCommType);
  set_uint(kCommSizeAttr, out.comm_size, OpAttrs::kCommSize);
  set_int(kCommSrcAttr, out.comm_src, OpAttrs::kCommSrc);
  set_int(kCommDstAttr, out.comm_dst, OpAttrs::kCommDst);
  set_int(kCommTagAttr, out.comm_tag, OpAttrs::kCommTag);
  set_uint(kNumOpsAttr, out.num_ops, OpAttrs::kNumOps);
  set_uint(kTensorSizeAttr, out.tensor_size, OpAttrs::kTensorSize);
  if (auto v = attr_int(node, found[kCommPriorityAttr])) out.comm_priority = static_cast<std::int32_t>(*v);
  if (auto v = attr_bool_list(node, found[kInvolvedDimAttr])) {
    if (v->size() > 32) {
      fail("node {}: attribute \"involved_dim\" has {} entries; at most 32 dimensions are "
           "supported",
           node.id(), v->size());
    }
    for (std::size_t d = 0; d < v->size(); ++d) {
      if ((*v)[d]) out.involved_dims |= 1u << d;
    }
    out.present |= OpAttrs::kInvolvedDim;
  }
  pg_name = attr_string(node, found[kPgNameAttr]);
  if (pg_name) out.present |= OpAttrs::kPgName;
  const auto gemm = attr_int_list(node, found[kGemmAttr]);
  const auto conv = attr_int_list(node, found[kConvAttr]);
  const auto pass = attr_string(node, found[kPassAttr]);
  try {
    const auto made = make_op_shape(gemm ? std::optional<std::span<const std::int64_t>>(*gemm) : std::nullopt,
                                    conv ? std::optional<std::span<const std::int64_t>>(*conv) : std::nullopt,
                                    pass ? std::optional<std::string_view>(*pass) : std::nullopt);
    if (made) {
      shape = *made;
      out.present |= OpAttrs::kShape;
    }
  } catch (const Error& e) {
    fail("node {} (\"{}\"): {}", node.id(), node.name(), e.what());
  }
  // PyTorch process-group descriptions ride on METADATA nodes' inputs.values.
  if (node.type() == ChakraProtoMsg::METADATA_NODE && !node.inputs().values().empty()) {
    out.present |= OpAttrs::kInputsValues;
  }
  return out.present != 0 || out.comm_priority != 0;
}

}  // namespace

struct Graph::Collected {
  std::string source;
  std::vector<std::uint64_t> ids, durations;
  std::vector<std::uint32_t> types;
  std::vector<std::uint8_t> cpu_op;
  std::vector<std::string> names;
  std::vector<std::uint32_t> attr_index;  // into attrs, or kNoAttrs
  std::vector<OpAttrs> attrs;
  // Per attrs record, the strings interned in id order at the end (as the columns are).
  std::vector<std::string> pg_names, inputs_values;
  std::vector<OpShape> shapes;  // per attrs record (read when it has kShape)
  // An attribute that could not be decoded, by the node's place in the file: reported when the
  // node's turn comes in id order, as if decoded then.
  std::unordered_map<std::uint32_t, std::string> errors;
  // Dependencies, data then control, per node: [dep_begin[k], dep_begin[k + 1]), the first
  // data_deps[k] of them data.
  std::vector<std::uint64_t> deps;
  std::vector<std::uint32_t> dep_begin{0}, data_deps;

  void clear() {
    for (auto* v : {&ids, &durations, &deps}) v->clear();
    for (auto* v : {&types, &attr_index, &data_deps}) v->clear();
    cpu_op.clear();
    names.clear();
    attrs.clear();
    pg_names.clear();
    inputs_values.clear();
    shapes.clear();
    errors.clear();
    dep_begin.assign(1, 0);
  }

  void add(const Node& node) {
    const auto at = static_cast<std::uint32_t>(ids.size());
    ids.push_back(node.id());
    types.push_back(static_cast<std::uint32_t>(node.type()));
    durations.push_back(node.duration_micros());
    names.push_back(node.name());
    cpu_op.push_back(0);
    attr_index.push_back(kNoAttrs);
    try {
      const std::array<const Attribute*, kKnownAttrs> found = find_known(node);
      cpu_op.back() = attr_bool(node, found[kIsCpuOp]).value_or(false) ? 1 : 0;
      OpAttrs decoded;
      std::optional<std::string> pg_name;
      OpShape shape;
      if (decode_attrs(node, found, decoded, pg_name, shape)) {
        attr_index.back() = static_cast<std::uint32_t>(attrs.size());
        attrs.push_back(decoded);
        pg_names.push_back(pg_name.value_or(""));
        inputs_values.push_back(decoded.has(OpAttrs::kInputsValues) ? node.inputs().values() : "");
        shapes.push_back(shape);
      }
    } catch (const Error& e) {
      errors.emplace(at, e.what());
    }
    deps.insert(deps.end(), node.data_deps().begin(), node.data_deps().end());
    deps.insert(deps.end(), node.ctrl_deps().begin(), node.ctrl_deps().end());
    dep_begin.push_back(static_cast<std::uint32_t>(deps.size()));
    data_deps.push_back(static_cast<std::uint32_t>(node.data_deps_size()));
  }

  // The same from the wire reader, which takes only nodes that decode without an error.
  void add(const WireNode& node) {
    ids.push_back(node.id);
    types.push_back(node.type);
    durations.push_back(node.duration_micros);
    names.emplace_back(node.name);
    cpu_op.push_back(node.cpu_op ? 1 : 0);
    attr_index.push_back(kNoAttrs);
    if (node.has_attrs) {
      attr_index.back() = static_cast<std::uint32_t>(attrs.size());
      attrs.push_back(node.attrs);
      pg_names.emplace_back(node.pg_name);
      inputs_values.emplace_back();
      shapes.push_back(node.shape);
    }
    deps.insert(deps.end(), node.data_deps.begin(), node.data_deps.end());
    deps.insert(deps.end(), node.ctrl_deps.begin(), node.ctrl_deps.end());
    dep_begin.push_back(static_cast<std::uint32_t>(deps.size()));
    data_deps.push_back(static_cast<std::uint32_t>(node.data_deps.size()));
  }
};

Graph Graph::build(const Trace& trace, const std::string& source) {
  Collected c;
  c.source = source;
  for (const Node& node : trace.nodes) c.add(node);
  return finish(c);
}

Graph Graph::parse(std::string_view bytes, const std::string& source) {
  // One gathering per thread, emptied and reused from one file to the next: its columns keep
  // their capacity, so that loading a thousand ranks does not map and unmap them a thousand
  // times. So does the Node message, from one message to the next.
  thread_local Collected c;
  c.clear();
  c.source = source;
  GlobalMetadata metadata;
  thread_local Node node;
  thread_local WireNode wire;
  for_each_message(bytes, source, [&](std::size_t index, const char* data, int length) {
    if (index == 0) return metadata.ParseFromArray(data, length);
    // Straight from the bytes where the node allows it (chakra/node_wire.h), else by protobuf.
    if (read_wire_node(data, static_cast<std::size_t>(length), wire)) {
      c.add(wire);
      return true;
    }
    if (!node.ParseFromArray(data, length)) return false;
    c.add(node);
    return true;
  });
  return finish(c);
}

Graph Graph::finish(Collected& c) {
  Graph g;
  g.source_ = c.source;
  auto structure = std::make_shared<Structure>();
  Structure& st = *structure;
  const std::size_t n = c.ids.size();
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (!std::is_sorted(c.ids.begin(), c.ids.end())) {  // writers put nodes in id order; not all
    std::sort(order.begin(), order.end(), [&c](std::uint32_t a, std::uint32_t b) { return c.ids[a] < c.ids[b]; });
  }

  // The columns, in id order.
  st.ids.resize(n);
  st.types.resize(n);
  st.cpu_op.resize(n);
  st.duration_micros.resize(n);
  st.names.resize(n);
  st.attr_index.assign(n, kNoAttrs);
  std::unordered_map<std::string, std::uint32_t> string_ids{{"", 0}};
  auto intern = [&](std::string& v) {
    auto [it, inserted] = string_ids.emplace(v, static_cast<std::uint32_t>(g.strings_.size()));
    if (inserted) g.strings_.push_back(std::move(v));
    return it->second;
  };
  std::map<OpShape, std::uint32_t> shape_ids;
  auto intern_shape = [&](const OpShape& shape) {
    auto [it, inserted] = shape_ids.emplace(shape, static_cast<std::uint32_t>(g.shapes_.size()));
    if (inserted) g.shapes_.push_back(shape);
    return it->second;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t k = order[i];
    if (i > 0 && st.ids[i - 1] == c.ids[k]) {
      fail("{}: node id {} appears twice; ids must be unique within a file", g.source_, c.ids[k]);
    }
    if (!c.errors.empty()) {
      const auto error = c.errors.find(k);
      if (error != c.errors.end()) fail("{}: {}", g.source_, error->second);
    }
    st.ids[i] = c.ids[k];
    st.types[i] = c.types[k];
    st.cpu_op[i] = c.cpu_op[k];
    st.duration_micros[i] = c.durations[k];
    st.names[i] = std::move(c.names[k]);
    const std::uint32_t a = c.attr_index[k];
    if (a != kNoAttrs) {
      st.attr_index[i] = static_cast<std::uint32_t>(g.attrs_.size());
      OpAttrs attrs = c.attrs[a];
      if (attrs.has(OpAttrs::kPgName)) attrs.pg_name = intern(c.pg_names[a]);
      if (attrs.has(OpAttrs::kInputsValues)) attrs.inputs_values = intern(c.inputs_values[a]);
      if (attrs.has(OpAttrs::kShape)) attrs.shape = intern_shape(c.shapes[a]);
      g.attrs_.push_back(attrs);
    }
  }

  // Parents per node (union of data and ctrl deps, duplicates collapsed) as CSR, then inverted.
  // Ids 0..n-1 (or any run without gaps), as writers number them, index themselves.
  const bool dense = n == 0 || st.ids.back() - st.ids.front() == n - 1;
  auto index_of = [&st, dense](std::uint64_t id) -> std::int64_t {
    if (dense) {
      if (id < st.ids.front() || id > st.ids.back()) return -1;
      return static_cast<std::int64_t>(id - st.ids.front());
    }
    auto it = std::lower_bound(st.ids.begin(), st.ids.end(), id);
    if (it == st.ids.end() || *it != id) return -1;
    return it - st.ids.begin();
  };
  std::vector<std::uint32_t> parent_begin(n + 1, 0), parents;
  parents.reserve(c.deps.size());
  std::vector<std::uint32_t> child_count(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t k = order[i];
    const std::uint32_t begin = c.dep_begin[k], end = c.dep_begin[k + 1];
    const auto first = parents.size();
    for (std::uint32_t d = begin; d < end; ++d) {
      const std::uint64_t parent_id = c.deps[d];
      const std::int64_t p = index_of(parent_id);
      if (p < 0) {
        fail("{}: node {} (\"{}\") has {} dependency on node {}, which is not in the file", g.source_, st.ids[i],
             st.names[i], d - begin < c.data_deps[k] ? "a data" : "a control", parent_id);
      }
      if (static_cast<std::size_t>(p) == i) {
        fail("{}: node {} (\"{}\") depends on itself; expected dependencies on other nodes only (a trace must be a "
             "DAG)",
             g.source_, st.ids[i], st.names[i]);
      }
      parents.push_back(static_cast<std::uint32_t>(p));
    }
    std::sort(parents.begin() + static_cast<std::ptrdiff_t>(first), parents.end());
    parents.erase(std::unique(parents.begin() + static_cast<std::ptrdiff_t>(first), parents.end()), parents.end());
    parent_begin[i + 1] = static_cast<std::uint32_t>(parents.size());
    for (auto p = first; p < parents.size(); ++p) ++child_count[parents[p]];
  }
  st.parent_count.resize(n);
  st.child_begin.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) st.child_begin[i + 1] = st.child_begin[i] + child_count[i];
  st.children.resize(st.child_begin[n]);
  std::vector<std::uint32_t> fill(st.child_begin.begin(), st.child_begin.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    st.parent_count[i] = parent_begin[i + 1] - parent_begin[i];
    for (std::uint32_t p = parent_begin[i]; p < parent_begin[i + 1]; ++p) {
      st.children[fill[parents[p]]++] = static_cast<std::uint32_t>(i);
    }
  }
  g.structure_ = std::move(structure);
  g.s_ = g.structure_.get();
  g.check_acyclic(parent_begin, parents);
  return g;
}

std::uint64_t Graph::structure_hash() const {
  // The columns that decide most: sizes, types, durations and the dependencies' shape.
  auto bytes = [](const auto& v) {
    return std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0])));
  };
  std::uint64_t h = s_->ids.size();
  for (const std::uint64_t part :
       {bytes(s_->types), bytes(s_->duration_micros), bytes(s_->children), bytes(s_->attr_index)}) {
    h = h * 0x9e3779b97f4a7c15ull ^ part;
  }
  return h;
}

std::size_t Graph::RecordHash::operator()(const OpAttrs& a) const {
  // Equal records hash alike (OpAttrs' == compares every field); the fields that tell ranks'
  // records apart spread them.
  std::uint64_t h = a.present;
  for (const std::uint64_t v :
       {a.comm_size, a.num_ops, static_cast<std::uint64_t>(a.comm_src), static_cast<std::uint64_t>(a.comm_dst),
        static_cast<std::uint64_t>(a.comm_tag), std::uint64_t{a.pg_name}, std::uint64_t{a.shape}}) {
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
  }
  return static_cast<std::size_t>(h ^ (h >> 29));
}

bool Graph::share_structure(const Graph& other) {
  if (s_ == other.s_) return true;
  if (!(*s_ == *other.s_)) return false;
  structure_ = other.structure_;
  s_ = other.s_;
  if (pool_ != nullptr) return true;
  // This graph's records go into the structure's pool, each distinct one once; it keeps their
  // places. The pool starts as the first sharer's records, in their places: most of a later
  // rank's records equal the one in the same place, and only the others are looked up.
  const bool first = !s_->pool.pool;
  if (first) s_->pool.pool = std::make_shared<AttrPool>();
  AttrPool& pool = *s_->pool.pool;
  refs_.resize(attrs_.size());
  for (std::size_t a = 0; a < attrs_.size(); ++a) {
    if (first) {
      pool.records.push_back(attrs_[a]);
    } else if (attrs_[a] != pool.records[a]) {
      const auto [at, added] = pool.index.try_emplace(attrs_[a], static_cast<std::uint32_t>(pool.records.size()));
      if (added) pool.records.push_back(attrs_[a]);
      refs_[a] = at->second;
      continue;
    }
    refs_[a] = static_cast<std::uint32_t>(a);
  }
  pool_ = &pool;
  std::vector<OpAttrs>().swap(attrs_);
  return true;
}

void Graph::check_acyclic(const std::vector<std::uint32_t>& parent_begin,
                          const std::vector<std::uint32_t>& parents) const {
  const std::size_t n = s_->ids.size();
  // Kahn's algorithm: whatever is never freed sits on or behind a cycle.
  std::vector<std::uint32_t> remaining = s_->parent_count;
  std::vector<std::uint32_t> ready;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (remaining[i] == 0) ready.push_back(i);
  }
  std::size_t freed = 0;
  while (!ready.empty()) {
    std::uint32_t i = ready.back();
    ready.pop_back();
    ++freed;
    for (std::uint32_t c : children(i)) {
      if (--remaining[c] == 0) ready.push_back(c);
    }
  }
  if (freed == n) return;
  // Walk parents from a stuck node until one repeats: that node is on a cycle.
  std::uint32_t at = 0;
  while (remaining[at] == 0) ++at;
  std::vector<std::uint32_t> seen_at(n, 0xffffffffu);
  std::vector<std::uint32_t> path;
  while (seen_at[at] == 0xffffffffu) {
    seen_at[at] = static_cast<std::uint32_t>(path.size());
    path.push_back(at);
    for (std::uint32_t q = parent_begin[at]; q < parent_begin[at + 1]; ++q) {
      if (remaining[parents[q]] != 0) {
        at = parents[q];
        break;
      }
    }
  }
  // path runs child to parent; the cycle is path[seen_at[at]..], shown parent first.
  const std::size_t first = seen_at[at], length = path.size() - first;
  const std::string cycle = describe_cycle(length, [&](std::size_t k) {
    const std::uint32_t i = path[path.size() - 1 - k];
    return std::pair<std::uint64_t, std::string_view>{s_->ids[i], s_->names[i]};
  });
  fail("{}: dependency cycle {}; {} node{} cannot run (on the cycle or after it); a trace must be a DAG", source_,
       cycle, n - freed, n - freed == 1 ? "" : "s");
}

}  // namespace chakrasim::chakra
