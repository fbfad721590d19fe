#include "tools/inspect/inspector.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_set>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/error.h"

namespace chakrasim::tools {

using chakra::Node;
using Severity = Problem::Severity;

namespace {

std::string type_name(std::uint32_t raw) {
  return raw < 8 ? chakra::node_type_name(raw) : "type " + std::to_string(raw);
}

// Finds values seen before in one node's list: a scan of the few earlier values for the usual
// handful, a hash set for long lists (a node with 1e6 parents must not cost 1e12 comparisons).
template <typename T>
class RepeatFinder {
 public:
  explicit RepeatFinder(int expected) {
    if (expected > kScanLimit) set_.emplace();
  }
  bool repeated(const T& value) {
    if (set_) return !set_->insert(value).second;
    const auto end = small_.begin() + small_count_;
    if (std::find(small_.begin(), end, value) != end) return true;
    small_[small_count_++] = value;
    return false;
  }

 private:
  static constexpr int kScanLimit = 16;
  std::array<T, kScanLimit> small_;
  std::size_t small_count_ = 0;
  std::optional<std::unordered_set<T>> set_;
};

std::string describe(const Node& n) { return fmt::format("node {} (\"{}\")", n.id(), n.name()); }

// What one summary is being built from, so the checks can add problems in one line.
struct Checker {
  TraceSummary& s;
  void add(Severity severity, const Node* node, std::string message) {
    s.problems.push_back({severity, s.file, node ? std::optional(node->id()) : std::nullopt, std::move(message)});
  }
  void error(const Node& node, std::string message) { add(Severity::kError, &node, describe(node) + ": " + message); }
  void warning(const Node& node, std::string message) {
    add(Severity::kWarning, &node, describe(node) + ": " + message);
  }
  // Reads an attribute as the simulator does; a value it cannot read is reported and absent.
  template <typename Read>
  auto read(const Node& node, Read&& reader) -> decltype(reader()) {
    try {
      return reader();
    } catch (const Error& e) {
      add(Severity::kError, &node, e.what());
      return std::nullopt;
    }
  }
};

// The attributes the simulator reads, decoded with its conversions; unreadable ones reported.
struct Decoded {
  std::optional<bool> is_cpu_op;
  std::optional<std::int64_t> comm_type, comm_src, comm_dst, comm_tag;
  std::optional<std::uint64_t> comm_size, tensor_size;
  std::optional<std::string> pg_name;
};

Decoded decode(const Node& n, Checker& c) {
  using namespace chakra;
  Decoded d;
  d.is_cpu_op = c.read(n, [&] { return attr_bool(n, "is_cpu_op"); });
  d.comm_type = c.read(n, [&] { return attr_int(n, "comm_type"); });
  d.comm_src = c.read(n, [&] { return attr_int(n, "comm_src"); });
  d.comm_dst = c.read(n, [&] { return attr_int(n, "comm_dst"); });
  d.comm_tag = c.read(n, [&] { return attr_int(n, "comm_tag"); });
  d.comm_size = c.read(n, [&] { return attr_uint(n, "comm_size"); });
  c.read(n, [&] { return attr_int(n, "comm_priority"); });  // read only to check the type
  c.read(n, [&] { return attr_uint(n, "num_ops"); });
  d.tensor_size = c.read(n, [&] { return attr_uint(n, "tensor_size"); });
  d.pg_name = c.read(n, [&] { return attr_string(n, "pg_name"); });
  if (auto dims = c.read(n, [&] { return attr_bool_list(n, "involved_dim"); }); dims && dims->size() > 32) {
    c.error(n, fmt::format("attribute \"involved_dim\" has {} entries; expected at most 32 dimensions", dims->size()));
  }
  static const std::set<std::string> kRead = {"is_cpu_op",   "comm_type",     "comm_src",    "comm_dst",
                                              "comm_tag",    "comm_priority", "comm_size",   "num_ops",
                                              "tensor_size", "pg_name",       "involved_dim"};
  RepeatFinder<std::string_view> names_seen(n.attr_size());
  for (int i = 0; i < n.attr_size(); ++i) {
    const chakra::Attribute& a = n.attr(i);
    if (names_seen.repeated(a.name())) {
      c.warning(n, fmt::format("attribute \"{}\" appears more than once; readers use the first", a.name()));
    } else if (a.value_case() == chakra::Attribute::VALUE_NOT_SET && !kRead.contains(a.name())) {
      c.warning(n, fmt::format("attribute \"{}\" has no value", a.name()));
    }
  }
  return d;
}

bool is_group_id(const std::string& pg) {
  return !pg.empty() && pg.size() <= 9 &&
         std::all_of(pg.begin(), pg.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// "" and "0" both mean all NPUs.
std::string group_key(const std::optional<std::string>& pg) { return !pg || *pg == "0" ? "" : *pg; }

// What each node type needs before the simulator can run it, and its volumes.
void check_node(const Node& n, const Decoded& d, Checker& c, std::optional<std::size_t> rank, std::size_t npus) {
  TraceSummary& s = c.s;
  const auto type = static_cast<std::uint32_t>(n.type());
  // An attribute present but unreadable was reported by decode().
  auto need = [&](bool present, const char* name) {
    if (!present && chakra::find_attribute(n, name) == nullptr) {
      c.error(n, fmt::format("missing the attribute \"{}\"", name));
    }
  };
  switch (type) {
    case 0: c.warning(n, "INVALID_NODE: the simulator skips it"); break;
    case 2:
    case 3: need(d.tensor_size.has_value(), "tensor_size"); break;
    case 5:
    case 6: {
      const bool send = type == 5;
      need((send ? d.comm_dst : d.comm_src).has_value(), send ? "comm_dst" : "comm_src");
      need(d.comm_size.has_value(), "comm_size");
      need(d.comm_tag.has_value(), "comm_tag");
      (send ? s.sends : s.recvs) += Volume{1, d.comm_size.value_or(0)};
      // The side that is this rank may be left out (it defaults to the rank).
      const auto self = send ? d.comm_src : d.comm_dst;
      const auto peer = send ? d.comm_dst : d.comm_src;
      if (rank && self && *self != static_cast<std::int64_t>(*rank)) {
        c.error(n, fmt::format("{} is {} in the file of rank {}; expected {}", send ? "comm_src" : "comm_dst", *self,
                               *rank, *rank));
      }
      if (peer && (*peer < 0 || (npus > 0 && *peer >= static_cast<std::int64_t>(npus)))) {
        c.error(n, fmt::format("{} is {}; expected a rank from 0 to {}", send ? "comm_dst" : "comm_src", *peer,
                               npus > 0 ? std::to_string(npus - 1) : "N-1"));
      } else if (peer && rank && *peer == static_cast<std::int64_t>(*rank)) {
        c.error(n, fmt::format("{} is its own rank {}; expected another rank", send ? "comm_dst" : "comm_src", *rank));
      }
      const auto own =
          self ? self : (rank ? std::optional<std::int64_t>(static_cast<std::int64_t>(*rank)) : std::nullopt);
      if (own && peer && d.comm_tag && d.comm_size) {
        s.p2p.push_back({n.id(), send, send ? *own : *peer, send ? *peer : *own, *d.comm_tag, *d.comm_size});
      }
      break;
    }
    case 7: {
      if (d.is_cpu_op.value_or(false)) c.error(n, "a collective cannot be a CPU op (is_cpu_op is true)");
      if (d.pg_name && !d.pg_name->empty() && !is_group_id(*d.pg_name)) {
        c.error(n, fmt::format("pg_name \"{}\" is not a communicator group id; expected a decimal integer "
                               "(\"\" or \"0\" for all NPUs)",
                               *d.pg_name));
      }
      if (!d.comm_type) {
        need(false, "comm_type");
        break;
      }
      const auto kind = static_cast<chakra::CommType>(*d.comm_type);
      // Every Chakra collective runs (docs/astra-sim-model.md §3.5); a barrier needs no size, and a
      // broadcast replayed by its duration (the default) none either.
      if (*d.comm_type < 0 || *d.comm_type > static_cast<std::int64_t>(chakra::CommType::kBarrier)) {
        c.error(n, fmt::format("comm_type {} is not a Chakra collective; expected 0 to 9 (ALL_REDUCE to BARRIER)",
                               *d.comm_type));
      }
      if (kind != chakra::CommType::kBarrier && kind != chakra::CommType::kBroadcast) {
        need(d.comm_size.has_value(), "comm_size");
      }
      s.collectives[chakra::comm_type_name(*d.comm_type)] += Volume{1, d.comm_size.value_or(0)};
      s.groups[group_key(d.pg_name)] += Volume{1, d.comm_size.value_or(0)};
      s.collectives_by_group[group_key(d.pg_name)].push_back({n.id(), *d.comm_type, d.comm_size.value_or(0)});
      break;
    }
    default:
      if (type > 7)
        c.error(n, fmt::format("unknown node type {}; expected 0 to 7 (INVALID_NODE to COMM_COLL_NODE)", type));
      break;
  }
}

// Lists of node indices per node, flat (CSR): one allocation for the whole trace.
struct Adjacency {
  std::vector<std::uint32_t> begin{0};
  std::vector<std::uint32_t> items;
  std::size_t size() const { return begin.size() - 1; }
  std::span<const std::uint32_t> operator[](std::size_t i) const {
    return {items.data() + begin[i], items.data() + begin[i + 1]};
  }
};

// Tarjan's strongly connected components, iteratively (traces can be deep chains). Returns the
// components with more than one node, each sorted; edges go from a node to its parents.
std::vector<std::vector<std::uint32_t>> cycles(const Adjacency& parents) {
  const std::size_t n = parents.size();
  constexpr std::uint32_t kUnseen = 0xffffffffu;
  std::vector<std::uint32_t> index(n, kUnseen), low(n, 0);
  std::vector<bool> on_stack(n, false);
  std::vector<std::uint32_t> stack;
  std::vector<std::pair<std::uint32_t, std::size_t>> frames;  // node, next parent to visit
  std::vector<std::vector<std::uint32_t>> out;
  std::uint32_t counter = 0;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (index[root] != kUnseen) continue;
    frames.push_back({root, 0});
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!frames.empty()) {
      auto& [v, next] = frames.back();
      if (next < parents[v].size()) {
        const std::uint32_t w = parents[v][next++];
        if (index[w] == kUnseen) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = true;
          frames.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const std::uint32_t done = v;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().first] = std::min(low[frames.back().first], low[done]);
      if (low[done] != index[done]) continue;
      std::vector<std::uint32_t> component;
      std::uint32_t w = 0;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = false;
        component.push_back(w);
      } while (w != done);
      std::sort(component.begin(), component.end());
      if (component.size() > 1) out.push_back(std::move(component));
    }
  }
  return out;
}

// One loop inside a strongly connected component, as "a -> b -> a" (parent before child): walk
// parents inside the component from its first node until one repeats.
std::string cycle_text(const std::vector<std::uint32_t>& component, const Adjacency& parents,
                       const std::vector<Node>& nodes) {
  std::vector<std::uint32_t> path;
  std::map<std::uint32_t, std::size_t> at;
  std::uint32_t v = component.front();
  while (!at.contains(v)) {
    at[v] = path.size();
    path.push_back(v);
    for (std::uint32_t p : parents[v]) {
      if (std::binary_search(component.begin(), component.end(), p)) {
        v = p;
        break;
      }
    }
  }
  const std::size_t first = at[v];
  return chakra::describe_cycle(path.size() - first, [&](std::size_t k) {
    const Node& n = nodes[path[path.size() - 1 - k]];
    return std::pair<std::uint64_t, std::string_view>{n.id(), n.name()};
  });
}

// Node ids sorted with their indices: the first of a repeated id is the one dependencies
// resolve to.
class IdIndex {
 public:
  explicit IdIndex(const std::vector<Node>& nodes) : by_id_(nodes.size()) {
    for (std::uint32_t i = 0; i < by_id_.size(); ++i) by_id_[i] = {nodes[i].id(), i};
    std::sort(by_id_.begin(), by_id_.end());
  }
  std::optional<std::uint32_t> operator()(std::uint64_t id) const {
    auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::pair<std::uint64_t, std::uint32_t>{id, 0});
    if (it == by_id_.end() || it->first != id) return std::nullopt;
    return it->second;
  }
  // Reports every repeated id; returns the number of distinct ids.
  std::size_t check_unique(const chakra::Trace& trace, Checker& c) const {
    std::size_t unique_ids = 0;
    for (std::size_t k = 0; k < by_id_.size();) {
      std::size_t end = k + 1;
      while (end < by_id_.size() && by_id_[end].first == by_id_[k].first) ++end;
      if (end - k > 1) {
        c.error(trace.nodes[by_id_[k].second],
                fmt::format("its id appears {} times; ids must be unique within a file", end - k));
      }
      ++unique_ids;
      k = end;
    }
    return unique_ids;
  }

 private:
  std::vector<std::pair<std::uint64_t, std::uint32_t>> by_id_;
};

// Every node's parents (deduplicated), reporting dependencies on missing nodes, on the node
// itself, and data dependencies listed twice.
Adjacency read_parents(const chakra::Trace& trace, const IdIndex& index_of, Checker& c) {
  const auto& nodes = trace.nodes;
  Adjacency parents;
  parents.items.reserve(nodes.size());
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const bool first = index_of(n.id()) == i;  // a repeated id: its first node stands for it
    auto add = [&](std::uint64_t parent, const char* kind) {
      const auto p = index_of(parent);
      if (!p) {
        c.error(n, fmt::format("has {} dependency on node {}, which is not in the file", kind, parent));
      } else if (*p == i) {
        c.error(n, "depends on itself; a trace must be a DAG");
      } else {
        parents.items.push_back(*p);
      }
    };
    RepeatFinder<std::uint64_t> data_deps_seen(n.data_deps_size());
    for (int k = 0; first && k < n.data_deps_size(); ++k) {
      const std::uint64_t d = n.data_deps(k);
      if (data_deps_seen.repeated(d)) {
        c.warning(n, fmt::format("lists data dependency {} twice (the old Chakra feeder then never issues it)", d));
        continue;
      }
      add(d, "a data");
    }
    for (int k = 0; first && k < n.ctrl_deps_size(); ++k) add(n.ctrl_deps(k), "a control");
    const auto mine = parents.items.begin() + parents.begin.back();
    std::sort(mine, parents.items.end());
    parents.items.erase(std::unique(mine, parents.items.end()), parents.items.end());
    parents.begin.push_back(static_cast<std::uint32_t>(parents.items.size()));
  }
  return parents;
}

// The longest path by duration (and, among equals, by hops), in dependency order (Kahn); set
// only when every distinct node is freed (no cycle keeps some waiting).
void critical_path(const chakra::Trace& trace, const Adjacency& parents, const IdIndex& index_of,
                   std::size_t unique_ids, TraceSummary& s) {
  const auto& nodes = trace.nodes;
  Adjacency children;
  children.begin.assign(nodes.size() + 1, 0);
  for (std::uint32_t p : parents.items) ++children.begin[p + 1];
  for (std::size_t i = 0; i < nodes.size(); ++i) children.begin[i + 1] += children.begin[i];
  children.items.resize(parents.items.size());
  std::vector<std::uint32_t> fill(children.begin.begin(), children.begin.end() - 1);
  std::vector<std::uint32_t> waiting(nodes.size(), 0), ready;
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    for (std::uint32_t p : parents[i]) children.items[fill[p]++] = i;
    waiting[i] = static_cast<std::uint32_t>(parents[i].size());
    if (waiting[i] == 0 && index_of(nodes[i].id()) == i) ready.push_back(i);
  }
  std::vector<std::uint64_t> finish(nodes.size(), 0), hops(nodes.size(), 0);
  std::size_t freed = 0;
  std::uint64_t best = 0, best_hops = 0;
  while (!ready.empty()) {
    const std::uint32_t i = ready.back();
    ready.pop_back();
    ++freed;
    finish[i] += nodes[i].duration_micros();
    hops[i] += 1;
    if (std::tie(finish[i], hops[i]) > std::tie(best, best_hops))
      std::tie(best, best_hops) = std::tie(finish[i], hops[i]);
    for (std::uint32_t ch : children[i]) {
      if (std::tie(finish[i], hops[i]) > std::tie(finish[ch], hops[ch]))
        std::tie(finish[ch], hops[ch]) = std::tie(finish[i], hops[i]);
      if (--waiting[ch] == 0) ready.push_back(ch);
    }
  }
  if (freed == unique_ids) {
    s.critical_path_micros = best;
    s.critical_path_nodes = best_hops;
  }
}

// The dependency structure: problems with it, cycles, and the critical path.
void check_graph(const chakra::Trace& trace, Checker& c) {
  const IdIndex index_of(trace.nodes);
  const std::size_t unique_ids = index_of.check_unique(trace, c);
  const Adjacency parents = read_parents(trace, index_of, c);
  for (const auto& component : cycles(parents)) {
    c.add(Severity::kError, &trace.nodes[component.front()],
          fmt::format("dependency cycle {} ({} nodes in all wait on one another); a trace must be a DAG",
                      cycle_text(component, parents, trace.nodes), component.size()));
  }
  critical_path(trace, parents, index_of, unique_ids, c.s);
}

}  // namespace

const char* severity_name(Severity severity) { return severity == Severity::kError ? "error" : "warning"; }

std::size_t Inspection::errors() const {
  std::size_t count = 0;
  auto tally = [&](const std::vector<Problem>& list) {
    for (const Problem& p : list) count += p.severity == Severity::kError ? 1 : 0;
  };
  tally(problems);
  for (const TraceSummary& r : ranks) tally(r.problems);
  return count;
}

std::size_t Inspection::warnings() const {
  std::size_t count = problems.size();
  for (const TraceSummary& r : ranks) count += r.problems.size();
  return count - errors();
}

TraceSummary summarize_trace(const chakra::Trace& trace, const std::string& file, std::optional<std::size_t> rank,
                             std::size_t npus) {
  TraceSummary s;
  s.file = file;
  s.rank = rank;
  s.readable = true;
  s.version = trace.metadata.version();
  s.nodes = trace.nodes.size();
  Checker c{s};
  if (trace.nodes.empty()) {
    c.add(Severity::kWarning, nullptr, "the trace has no nodes (ASTRA-sim rejects an empty trace)");
  }
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> by_type;  // raw type -> nodes, µs
  for (const Node& n : trace.nodes) {
    auto& [count, micros] = by_type[static_cast<std::uint32_t>(n.type())];
    count += 1;
    micros += n.duration_micros();
    const Decoded d = decode(n, c);
    if (n.type() == ChakraProtoMsg::COMP_NODE) {
      s.compute_micros += n.duration_micros();
      (d.is_cpu_op.value_or(false) ? s.cpu_compute_micros : s.gpu_compute_micros) += n.duration_micros();
    }
    check_node(n, d, c, rank, npus);
  }
  for (const auto& [type, figures] : by_type) {
    s.nodes_by_type[type_name(type)] = figures.first;
    s.micros_by_type[type_name(type)] = figures.second;
  }
  check_graph(trace, c);
  return s;
}

}  // namespace chakrasim::tools
