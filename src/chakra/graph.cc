#include "chakra/graph.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <unordered_map>

#include "chakra/attributes.h"
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

// Decodes the attributes the models use. Returns false when the node has none of them.
bool decode_attrs(const Node& node, OpAttrs& out, std::vector<std::string>& strings,
                  std::unordered_map<std::string, std::uint32_t>& string_ids) {
  auto set_int = [&](const char* name, std::int64_t& field, OpAttrs::Present bit) {
    if (auto v = attr_int(node, name)) {
      field = *v;
      out.present |= bit;
    }
  };
  auto set_uint = [&](const char* name, std::uint64_t& field, OpAttrs::Present bit) {
    if (auto v = attr_uint(node, name)) {
      field = *v;
      out.present |= bit;
    }
  };
  set_int("comm_type", out.comm_type, OpAttrs::kCommType);
  set_uint("comm_size", out.comm_size, OpAttrs::kCommSize);
  set_int("comm_src", out.comm_src, OpAttrs::kCommSrc);
  set_int("comm_dst", out.comm_dst, OpAttrs::kCommDst);
  set_int("comm_tag", out.comm_tag, OpAttrs::kCommTag);
  set_uint("num_ops", out.num_ops, OpAttrs::kNumOps);
  set_uint("tensor_size", out.tensor_size, OpAttrs::kTensorSize);
  if (auto v = attr_int(node, "comm_priority")) out.comm_priority = static_cast<std::int32_t>(*v);
  if (auto v = attr_bool_list(node, "involved_dim")) {
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
  auto intern = [&](const std::string& v) {
    auto [it, inserted] = string_ids.emplace(v, static_cast<std::uint32_t>(strings.size()));
    if (inserted) strings.push_back(v);
    return it->second;
  };
  if (auto v = attr_string(node, "pg_name")) {
    out.pg_name = intern(*v);
    out.present |= OpAttrs::kPgName;
  }
  // PyTorch process-group descriptions ride on METADATA nodes' inputs.values.
  if (node.type() == ChakraProtoMsg::METADATA_NODE && !node.inputs().values().empty()) {
    out.inputs_values = intern(node.inputs().values());
    out.present |= OpAttrs::kInputsValues;
  }
  return out.present != 0 || out.comm_priority != 0;
}

}  // namespace

Graph Graph::build(const Trace& trace, const std::string& source) {
  Graph g;
  g.source_ = source;
  std::vector<std::uint32_t> order(trace.nodes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return trace.nodes[a].id() < trace.nodes[b].id(); });
  g.read_nodes(trace, order);
  g.check_acyclic(g.link_dependencies(trace, order));
  return g;
}

void Graph::read_nodes(const Trace& trace, const std::vector<std::uint32_t>& order) {
  const std::size_t n = order.size();
  ids_.resize(n);
  types_.resize(n);
  cpu_op_.resize(n);
  duration_micros_.resize(n);
  names_.resize(n);
  attr_index_.assign(n, kNoAttrs);
  std::unordered_map<std::string, std::uint32_t> string_ids{{"", 0}};

  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = trace.nodes[order[i]];
    if (i > 0 && ids_[i - 1] == node.id()) {
      fail("{}: node id {} appears twice; ids must be unique within a file", source_, node.id());
    }
    ids_[i] = node.id();
    types_[i] = static_cast<std::uint32_t>(node.type());
    duration_micros_[i] = node.duration_micros();
    names_[i] = node.name();
    try {
      cpu_op_[i] = attr_bool(node, "is_cpu_op").value_or(false) ? 1 : 0;
      OpAttrs attrs;
      if (decode_attrs(node, attrs, strings_, string_ids)) {
        attr_index_[i] = static_cast<std::uint32_t>(attrs_.size());
        attrs_.push_back(attrs);
      }
    } catch (const Error& e) {
      fail("{}: {}", source_, e.what());
    }
  }
}

std::vector<std::vector<std::uint32_t>> Graph::link_dependencies(const Trace& trace,
                                                                 const std::vector<std::uint32_t>& order) {
  const std::size_t n = order.size();
  auto index_of = [&](std::uint64_t id) -> std::int64_t {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    if (it == ids_.end() || *it != id) return -1;
    return it - ids_.begin();
  };

  // Parents per node (union of data and ctrl deps, duplicates collapsed), then invert to CSR.
  std::vector<std::vector<std::uint32_t>> parents(n);
  std::vector<std::uint32_t> child_count(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = trace.nodes[order[i]];
    auto& list = parents[i];
    auto add = [&](std::uint64_t parent_id, const char* kind) {
      std::int64_t p = index_of(parent_id);
      if (p < 0) {
        fail("{}: node {} (\"{}\") has {} dependency on node {}, which is not in the file", source_, node.id(),
             node.name(), kind, parent_id);
      }
      if (static_cast<std::size_t>(p) == i) {
        fail("{}: node {} (\"{}\") depends on itself; expected dependencies on other nodes only (a trace must be a "
             "DAG)",
             source_, node.id(), node.name());
      }
      list.push_back(static_cast<std::uint32_t>(p));
    };
    for (std::uint64_t d : node.data_deps()) add(d, "a data");
    for (std::uint64_t d : node.ctrl_deps()) add(d, "a control");
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (std::uint32_t p : list) ++child_count[p];
  }
  parent_count_.resize(n);
  child_begin_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) child_begin_[i + 1] = child_begin_[i] + child_count[i];
  children_.resize(child_begin_[n]);
  std::vector<std::uint32_t> fill(child_begin_.begin(), child_begin_.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    parent_count_[i] = static_cast<std::uint32_t>(parents[i].size());
    for (std::uint32_t p : parents[i]) children_[fill[p]++] = static_cast<std::uint32_t>(i);
  }
  return parents;
}

void Graph::check_acyclic(const std::vector<std::vector<std::uint32_t>>& parents) const {
  const std::size_t n = ids_.size();
  // Kahn's algorithm: whatever is never freed sits on or behind a cycle.
  std::vector<std::uint32_t> remaining = parent_count_;
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
    for (std::uint32_t p : parents[at]) {
      if (remaining[p] != 0) {
        at = p;
        break;
      }
    }
  }
  // path runs child to parent; the cycle is path[seen_at[at]..], shown parent first.
  const std::size_t first = seen_at[at], length = path.size() - first;
  const std::string cycle = describe_cycle(length, [&](std::size_t k) {
    const std::uint32_t i = path[path.size() - 1 - k];
    return std::pair<std::uint64_t, std::string_view>{ids_[i], names_[i]};
  });
  fail("{}: dependency cycle {}; {} node{} cannot run (on the cycle or after it); a trace must be a DAG", source_,
       cycle, n - freed, n - freed == 1 ? "" : "s");
}

}  // namespace chakrasim::chakra
