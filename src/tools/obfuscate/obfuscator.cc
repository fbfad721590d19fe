#include "tools/obfuscate/obfuscator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <queue>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/read_file.h"
#include "core/splitmix.h"

namespace chakrasim::tools {
namespace {

// What the simulator reads, but the operation shapes (they show the layers); every other
// attribute goes.
bool kept(const std::string& name) {
  const std::span<const std::string_view> read = chakra::read_attribute_names();
  return std::find(read.begin(), read.end(), name) != read.end() && name != chakra::kGemmAttr &&
         name != chakra::kConvAttr && name != chakra::kPassAttr;
}

class Perturber {
 public:
  Perturber(const ObfuscateOptions& o, ObfuscateReport& report) : o_(o), report_(report) {}

  // `value` times a factor in [1 - pct, 1 + pct] that depends only on the seed, `what` and the
  // value: equal values stay equal across nodes and ranks.
  std::uint64_t operator()(std::uint64_t value, std::uint64_t what) const {
    if (o_.perturb_pct <= 0 || value == 0) return value;
    const std::uint64_t h = splitmix64(splitmix64(o_.seed ^ (what * 0x100000001b3ull)) ^ value);
    const double unit = static_cast<double>(h >> 11) / static_cast<double>(std::uint64_t{1} << 53);  // [0, 1)
    const double factor = 1 + (2 * unit - 1) * o_.perturb_pct / 100;
    const double changed = std::max(1.0, std::round(static_cast<double>(value) * factor));
    ++report_.perturbed_values;
    return changed >= 1.8e19 ? value : static_cast<std::uint64_t>(changed);
  }

 private:
  const ObfuscateOptions& o_;
  ObfuscateReport& report_;
};

constexpr std::uint64_t kDuration = 1, kNumOps = 2, kTensorSize = 3, kCommSize = 4;  // what is perturbed

bool is_compute(const chakra::Node& n) { return n.type() == ChakraProtoMsg::COMP_NODE; }
bool on_cpu(const chakra::Node& n) { return chakra::attr_bool(n, "is_cpu_op").value_or(false); }

// The node with only what the simulator reads, its sizes perturbed.
chakra::Node stripped(const chakra::Node& in, const Perturber& perturb, ObfuscateReport& report) {
  chakra::Node out;
  out.set_type(in.type());
  out.set_name(chakra::node_type_name(static_cast<std::uint32_t>(in.type())));
  if (!in.name().empty()) ++report.names;
  out.set_duration_micros(perturb(in.duration_micros(), kDuration));
  if (in.has_inputs() || in.has_outputs()) ++report.inputs_outputs;
  // A METADATA node's inputs.values describe its process groups (pg_name, ranks): runs need them.
  if (in.type() == ChakraProtoMsg::METADATA_NODE && !in.inputs().values().empty()) {
    out.mutable_inputs()->set_values(in.inputs().values());
  }
  for (const chakra::Attribute& a : in.attr()) {
    if (!kept(a.name())) {
      ++report.attributes[a.name()];
      continue;
    }
    chakra::Attribute copy = a;
    copy.clear_doc_string();
    const std::uint64_t what = a.name() == "num_ops"       ? kNumOps
                               : a.name() == "tensor_size" ? kTensorSize
                               : a.name() == "comm_size"   ? kCommSize
                                                           : 0;
    if (what != 0) {
      if (const auto v = chakra::attr_uint(in, &a)) copy = chakra::make_uint64(a.name(), perturb(*v, what));
    }
    *out.add_attr() = std::move(copy);
  }
  return out;
}

// Adds `from`'s num_ops and tensor_size to `into`'s (each summed where both have it).
void add_sizes(chakra::Node& into, const chakra::Node& from) {
  for (const char* name : {"num_ops", "tensor_size"}) {
    const auto extra = chakra::attr_uint(from, name);
    if (!extra) continue;
    bool found = false;
    for (chakra::Attribute& a : *into.mutable_attr()) {
      if (a.name() != name) continue;
      a = chakra::make_uint64(name, chakra::attr_uint(into, &a).value_or(0) + *extra);
      found = true;
      break;
    }
    if (!found) *into.add_attr() = chakra::make_uint64(name, *extra);
  }
}

}  // namespace

chakra::Trace obfuscate_trace(const chakra::Trace& trace, const std::string& source, const ObfuscateOptions& options,
                              ObfuscateReport& report) {
  chakra::Graph::build(trace, source);  // refuses what the simulator would: a cycle, a missing dependency
  const std::size_t n = trace.nodes.size();
  report.nodes_in += n;
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index.emplace(trace.nodes[i].id(), i);
  // Parents (data and ctrl, once each) and children, by position.
  std::vector<std::vector<std::size_t>> parents(n), children(n);
  for (std::size_t i = 0; i < n; ++i) {
    const chakra::Node& node = trace.nodes[i];
    for (const auto* deps : {&node.data_deps(), &node.ctrl_deps()}) {
      for (const std::uint64_t d : *deps) {
        const std::size_t p = index.at(d);
        if (std::find(parents[i].begin(), parents[i].end(), p) != parents[i].end()) continue;
        parents[i].push_back(p);
        children[p].push_back(i);
      }
    }
  }
  // Runs of compute: a node joins the one before when it is that one's only child and has no
  // other parent, on the same processor. head[i] is the node i was merged into.
  std::vector<std::size_t> head(n);
  for (std::size_t i = 0; i < n; ++i) head[i] = i;
  // Both must have a recorded time: a node of 0 us replays as 1 ns, which a sum cannot keep.
  auto joins = [&](std::size_t child) {
    if (parents[child].size() != 1 || !is_compute(trace.nodes[child])) return false;
    const std::size_t p = parents[child][0];
    return children[p].size() == 1 && is_compute(trace.nodes[p]) &&
           on_cpu(trace.nodes[p]) == on_cpu(trace.nodes[child]) && trace.nodes[p].duration_micros() > 0 &&
           trace.nodes[child].duration_micros() > 0;
  };
  // In dependency order, so that a whole run ends up in its first node.
  std::vector<std::size_t> order, remaining(n);
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    remaining[i] = parents[i].size();
    if (remaining[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (const std::size_t c : children[i]) {
      if (--remaining[c] == 0) ready.push(c);
    }
  }
  const Perturber perturb(options, report);
  std::vector<chakra::Node> merged(n);
  std::vector<bool> alive(n, false);
  for (const std::size_t i : order) {
    if (joins(i)) {
      const std::size_t h = head[parents[i][0]];
      head[i] = h;
      chakra::Node& into = merged[h];
      const chakra::Node& from = trace.nodes[i];
      into.set_duration_micros(into.duration_micros() + from.duration_micros());
      add_sizes(into, from);
      ++report.fused_nodes;
      // What the fused node had beyond its sizes goes, and is counted as removed.
      if (!from.name().empty()) ++report.names;
      if (from.has_inputs() || from.has_outputs()) ++report.inputs_outputs;
      for (const chakra::Attribute& a : from.attr()) {
        if (!kept(a.name())) ++report.attributes[a.name()];
      }
      continue;
    }
    merged[i] = trace.nodes[i];
    alive[i] = true;
  }
  // New ids in dependency order; the dependencies follow the runs' heads.
  std::vector<std::uint64_t> new_id(n);
  std::uint64_t next = 0;
  for (const std::size_t i : order) {
    if (alive[i]) new_id[i] = next++;
  }
  chakra::Trace out;
  out.metadata.set_version(trace.metadata.version());
  report.metadata_attributes += static_cast<std::uint64_t>(trace.metadata.attr_size());
  for (const std::size_t i : order) {
    if (!alive[i]) continue;
    chakra::Node node = stripped(merged[i], perturb, report);
    node.set_id(new_id[i]);
    // The original's dependencies, data and ctrl apart, each on its run's head.
    const chakra::Node& original = trace.nodes[i];
    auto remap = [&](const auto& deps, auto add) {
      std::vector<std::uint64_t> done;
      for (const std::uint64_t d : deps) {
        const std::uint64_t id = new_id[head[index.at(d)]];
        if (std::find(done.begin(), done.end(), id) != done.end()) continue;
        done.push_back(id);
        add(id);
      }
    };
    remap(original.data_deps(), [&](std::uint64_t id) { node.add_data_deps(id); });
    remap(original.ctrl_deps(), [&](std::uint64_t id) { node.add_ctrl_deps(id); });
    out.nodes.push_back(std::move(node));
  }
  report.nodes_out += out.nodes.size();
  ++report.ranks;
  return out;
}

ObfuscateReport obfuscate_files(const std::string& in_prefix, const std::string& out_prefix,
                                const std::string& groups_path, const ObfuscateOptions& options) {
  if (!(options.perturb_pct >= 0 && options.perturb_pct <= 50)) {
    fail("--perturb {}: expected a percentage from 0 to 50", options.perturb_pct);
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(chakra::rank_path(in_prefix, 0), ec)) {
    fail("{}: no {}; expected the PREFIX of PREFIX.0.et, PREFIX.1.et, ...", in_prefix, chakra::rank_path(in_prefix, 0));
  }
  ObfuscateReport report;
  for (std::size_t rank = 0; fs::exists(chakra::rank_path(in_prefix, rank), ec); ++rank) {
    const std::string in = chakra::rank_path(in_prefix, rank);
    chakra::write_trace(chakra::rank_path(out_prefix, rank),
                        obfuscate_trace(chakra::read_trace(in), in, options, report));
  }
  const std::string groups = groups_path.empty() ? in_prefix + ".groups.json" : groups_path;
  if (!groups_path.empty() || fs::exists(groups, ec)) {
    report.groups_path = out_prefix + ".groups.json";
    write_file_atomically(report.groups_path, read_file(groups, "--comm-groups", "a communicator-group JSON file"),
                          "the communicator-group file");
    // The group kinds (TP, DP, ...) name the layout, not the model: they go along.
    const std::string names = in_prefix + ".group-names.json";
    if (groups_path.empty() && fs::exists(names, ec)) {
      write_file_atomically(out_prefix + ".group-names.json", read_file(names, "group names", "a JSON file"),
                            "the group names file");
    }
  }
  return report;
}

std::string describe(const ObfuscateReport& r, const ObfuscateOptions& o) {
  std::string out = fmt::format("obfuscated {} ranks: {} nodes in, {} out\n", r.ranks, r.nodes_in, r.nodes_out);
  out += fmt::format("  removed: {} node names (each node is named by its type), {} nodes' inputs and outputs (a "
                     "METADATA node keeps its process groups), {} GlobalMetadata attributes\n",
                     r.names, r.inputs_outputs, r.metadata_attributes);
  if (!r.attributes.empty()) {
    std::string list;
    for (const auto& [name, count] : r.attributes)
      list += fmt::format("{}{} x{}", list.empty() ? "" : ", ", name, count);
    out += "  removed attributes: " + list + "\n";
  }
  out += fmt::format("  fused: {} compute nodes into the one before them (runs nothing else waits on); ids renumbered "
                     "in dependency order\n",
                     r.fused_nodes);
  if (o.perturb_pct > 0) {
    out += fmt::format("  perturbed: {} durations, num_ops, tensor_size and comm_size values by up to +-{}% (seed {}; "
                       "equal values alike)\n",
                       r.perturbed_values, o.perturb_pct, o.seed);
  }
  if (!r.groups_path.empty()) out += "  kept: the communicator groups, " + r.groups_path + "\n";
  return out;
}

}  // namespace chakrasim::tools
