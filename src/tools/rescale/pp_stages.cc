// Merging neighbouring pipeline stages for `chakra rescale --pp` (pp_stages.h; the design is
// described in rescale_pp.cc).
#include "tools/rescale/pp_stages.h"

#include <algorithm>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/error.h"

namespace chakrasim::tools::rescale {

using llm::Schedule;
using llm::Task;

std::optional<PassKey> pass_of(const chakra::Node& node, const std::string& source) {
  const std::string& name = node.name();
  if (name == "step" || name.starts_with("step.")) return std::nullopt;
  const std::size_t dot = name.find('.');
  const bool ok = name.size() >= 2 && (name[0] == 'F' || name[0] == 'B' || name[0] == 'R') &&
                  dot != std::string::npos && dot >= 2 && dot <= 10 && name.find_first_not_of("0123456789", 1) == dot;
  if (!ok) {
    fail("{}: node {} is named \"{}\"; expected F<microbatch>., B<microbatch>., R<microbatch>. or step. (--pp reads "
         "each node's pass from the names generate llm writes)",
         source, node.id(), name);
  }
  return PassKey{name[0] != 'F', std::stoull(name.substr(1, dot - 1))};
}

StagePasses cut(chakra::Trace trace, const std::string& source) {
  StagePasses s;
  s.source = source;
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const chakra::Node& node = trace.nodes[i];
    s.index.emplace(node.id(), i);
    const std::optional<PassKey> key = pass_of(node, source);
    if (!key) {
      s.step.push_back(i);
    } else if (!s.keys.empty() && s.keys.back() == *key) {
      s.passes.back().push_back(i);
    } else if (s.keys.size() >= 2 && s.keys[s.keys.size() - 2] == *key) {
      // A pass that ends without a message (the loss) has its last compute fused with the next
      // pass's first ops and written after that pass's first collective: it belongs to the earlier.
      s.passes[s.passes.size() - 2].push_back(i);
    } else {
      s.keys.push_back(*key);
      s.passes.push_back({i});
    }
  }
  s.trace = std::move(trace);
  return s;
}

bool follows(const StagePasses& s, const std::vector<Task>& tasks) {
  if (s.keys.size() != tasks.size()) return false;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (s.keys[i] != PassKey{tasks[i].backward, tasks[i].microbatch}) return false;
  }
  return true;
}

namespace {

// Builds one new stage's trace from the old stages it merges (`parts`, in layer order).
class StageMerger {
 public:
  StageMerger(std::vector<StagePasses>& parts, const PipelineShape& shape, const PpLayout& layout, std::uint64_t low,
              std::uint64_t stage)
      : parts_(parts), shape_(shape), layout_(layout), low_(low), stage_(stage), new_id_(parts.size()) {}

  chakra::Trace build(const TraceSet& out);

 private:
  std::uint64_t model_chunks() const { return layout_.stages * shape_.chunks; }
  std::uint64_t tag(std::uint64_t microbatch, std::uint64_t edge, bool gradient) const {
    return 2 * (microbatch * model_chunks() + edge) + (gradient ? 1 : 0);
  }
  // The new rank `delta` stages away, round the pipeline.
  std::int64_t peer(std::int64_t delta) const {
    const auto p = static_cast<std::int64_t>(layout_.stages);
    return static_cast<std::int64_t>(
        layout_.rank(low_, static_cast<std::uint64_t>(((static_cast<std::int64_t>(stage_) + delta) % p + p) % p)));
  }
  void run(const Task& task);
  // Appends a copy of part `j`'s node `i`; `map_deps` keeps its dependencies that point backwards
  // in the new order, else it gets none but the chains.
  chakra::Node& emit(std::size_t j, std::size_t i, bool map_deps);
  void add_dep(chakra::Node& node, std::uint64_t dep);
  void step_section(const TraceSet& out);
  // What an old dependency of a step node stands for now: the compute before the step, the
  // latest collective of its group, the latest send, or its copy.
  std::optional<std::uint64_t> by_role(std::size_t j, std::uint64_t old_dep) const;

  std::vector<StagePasses>& parts_;
  const PipelineShape& shape_;
  const PpLayout& layout_;
  std::uint64_t low_, stage_;
  chakra::Trace out_;
  std::vector<std::unordered_map<std::uint64_t, std::uint64_t>> new_id_;  // per part: old id -> new id
  std::optional<std::uint64_t> last_compute_, last_send_, body_end_;
  std::map<std::string, std::uint64_t> last_collective_;  // pg_name -> latest collective on it
};

void StageMerger::add_dep(chakra::Node& node, std::uint64_t dep) {
  for (const std::uint64_t d : node.data_deps()) {
    if (d == dep) return;
  }
  node.add_data_deps(dep);
}

chakra::Node& StageMerger::emit(std::size_t j, std::size_t i, bool map_deps) {
  const chakra::Node& old = parts_[j].trace.nodes[i];
  chakra::Node node = old;
  node.set_id(out_.nodes.size());
  node.clear_data_deps();
  node.clear_ctrl_deps();
  if (map_deps) {
    for (const std::uint64_t d : old.data_deps()) {
      const auto found = new_id_[j].find(d);
      if (found != new_id_[j].end()) add_dep(node, found->second);
    }
    for (const std::uint64_t d : old.ctrl_deps()) {
      const auto found = new_id_[j].find(d);
      if (found != new_id_[j].end()) node.add_ctrl_deps(found->second);
    }
  }
  new_id_[j][old.id()] = node.id();
  if (node.type() == ChakraProtoMsg::COMP_NODE) {
    if (last_compute_) add_dep(node, *last_compute_);
    last_compute_ = node.id();
  } else if (node.type() == ChakraProtoMsg::COMM_COLL_NODE) {
    const std::string pg = chakra::attr_string(node, "pg_name").value_or("");
    const auto previous = last_collective_.find(pg);
    if (previous != last_collective_.end()) add_dep(node, previous->second);
    last_collective_[pg] = node.id();
  } else if (node.type() == ChakraProtoMsg::COMM_SEND_NODE) {
    last_send_ = node.id();
  }
  out_.nodes.push_back(std::move(node));
  return out_.nodes.back();
}

void StageMerger::run(const Task& task) {
  const std::uint64_t k = parts_.size();
  const std::uint64_t g = task.chunk * layout_.stages + stage_;  // the new model chunk
  for (std::uint64_t q = 0; q < k; ++q) {
    const std::size_t j = task.backward ? k - 1 - q : q;
    const StagePasses& part = parts_[j];
    const auto pass = part.by_task.find({task.backward, task.microbatch, task.chunk});
    if (pass == part.by_task.end()) {
      fail("{}: no {} pass of microbatch {} in chunk {}; expected every pass of the schedule", part.source,
           task.backward ? "backward" : "forward", task.microbatch, task.chunk);
    }
    for (const std::size_t i : part.passes[pass->second]) {
      const chakra::Node& old = part.trace.nodes[i];
      const bool recv = old.type() == ChakraProtoMsg::COMM_RECV_NODE;
      const bool send = old.type() == ChakraProtoMsg::COMM_SEND_NODE;
      if (!recv && !send) {
        emit(j, i, true);
        continue;
      }
      if ((recv && q > 0) || (send && q + 1 < k)) {
        // A message between two merged stages: what waited on it waits on the compute before.
        if (last_compute_) new_id_[j][old.id()] = *last_compute_;
        continue;
      }
      // The new stage's own message: a forward receives from the stage before and sends to the
      // one after, a backward the other way round; edge e is the boundary after model chunk e.
      const std::uint64_t edge = recv == task.backward ? g : g - 1;
      const std::int64_t away = recv == task.backward ? 1 : -1;
      chakra::Node& node = emit(j, i, false);
      if (last_compute_) add_dep(node, *last_compute_);
      const auto self = static_cast<std::int64_t>(layout_.rank(low_, stage_));
      set_int_attr(node, "comm_src", recv ? peer(away) : self);
      set_int_attr(node, "comm_dst", recv ? self : peer(away));
      set_int_attr(node, "comm_tag", static_cast<std::int64_t>(tag(task.microbatch, edge, task.backward)));
    }
  }
}

std::optional<std::uint64_t> StageMerger::by_role(std::size_t j, std::uint64_t old_dep) const {
  const StagePasses& part = parts_[j];
  const auto at = part.index.find(old_dep);
  if (at == part.index.end() || part.dropped.contains(old_dep)) return std::nullopt;
  const chakra::Node& old = part.trace.nodes[at->second];
  const bool in_step = std::find(part.step.begin(), part.step.end(), at->second) != part.step.end();
  const auto copy = new_id_[j].find(old_dep);
  if (old.type() == ChakraProtoMsg::COMP_NODE) {
    if (in_step) return copy == new_id_[j].end() ? std::nullopt : std::optional(copy->second);
    return body_end_;
  }
  if (old.type() == ChakraProtoMsg::COMM_COLL_NODE) {
    const auto latest = last_collective_.find(chakra::attr_string(old, "pg_name").value_or(""));
    if (latest == last_collective_.end()) return std::nullopt;
    return latest->second;
  }
  if (old.type() == ChakraProtoMsg::COMM_SEND_NODE) return last_send_;
  return copy == new_id_[j].end() ? std::nullopt : std::optional(copy->second);
}

void StageMerger::step_section(const TraceSet& out) {
  body_end_ = last_compute_;
  // Step nodes of a kind (node type, collective type, group) gathered over the merged stages,
  // the later stage's first; before the optimizer, the optimizer, after it.
  struct Kind {
    std::tuple<int, std::int64_t, std::string> key;
    std::vector<std::pair<std::size_t, std::size_t>> nodes;  // (part, node index)
  };
  std::vector<Kind> phases[3];
  const std::size_t k = parts_.size();
  for (std::size_t q = 0; q < k; ++q) {
    const std::size_t j = k - 1 - q;
    int phase = 0;
    for (const std::size_t i : parts_[j].step) {
      const chakra::Node& node = parts_[j].trace.nodes[i];
      if (parts_[j].dropped.contains(node.id())) continue;
      if (node.type() == ChakraProtoMsg::COMP_NODE) {
        phase = 1;
      } else if (phase == 1) {
        phase = 2;
      }
      const std::tuple<int, std::int64_t, std::string> key{node.type(),
                                                           chakra::attr_int(node, "comm_type").value_or(-1),
                                                           chakra::attr_string(node, "pg_name").value_or("")};
      std::vector<Kind>& list = phases[phase];
      auto kind = std::find_if(list.begin(), list.end(), [&](const Kind& c) { return c.key == key; });
      if (kind == list.end()) kind = list.insert(list.end(), Kind{key, {}});
      kind->nodes.emplace_back(j, i);
    }
  }
  auto kind_name = [&](const chakra::Node& node) -> std::string {
    const std::string pg = chakra::attr_string(node, "pg_name").value_or("");
    if (pg.empty()) return "";
    const auto name = out.names.find(static_cast<std::uint32_t>(std::stoul(pg)));
    return name == out.names.end() ? "" : name->second;
  };
  // Gradient buckets in the order the new stage's backward makes them ready, as the generator
  // fills them (across merged stages and, interleaved, across chunks), and ZeRO's parameter
  // all-gathers in their buckets' order.
  auto ready_at = [&](std::size_t j, std::size_t i) {
    std::uint64_t latest = 0;
    for (const std::uint64_t d : parts_[j].trace.nodes[i].data_deps()) {
      const auto found = new_id_[j].find(d);
      if (found != new_id_[j].end()) latest = std::max(latest, found->second);
    }
    return latest;
  };
  auto gradients = [&](const Kind& kind) {
    const auto [j, i] = kind.nodes.front();
    const std::string group = kind_name(parts_[j].trace.nodes[i]);
    return std::get<0>(kind.key) == ChakraProtoMsg::COMM_COLL_NODE && (group == "DP" || group == "EDP");
  };
  std::map<std::pair<std::string, std::size_t>, std::vector<std::uint64_t>> bucket_ready;  // (pg, part) -> in order
  for (Kind& kind : phases[0]) {
    if (!gradients(kind)) continue;
    std::vector<std::pair<std::uint64_t, std::pair<std::size_t, std::size_t>>> keyed;
    for (const auto& [j, i] : kind.nodes) {
      keyed.emplace_back(ready_at(j, i), std::pair{j, i});
      bucket_ready[{std::get<2>(kind.key), j}].push_back(keyed.back().first);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t n = 0; n < keyed.size(); ++n) kind.nodes[n] = keyed[n].second;
  }
  for (Kind& kind : phases[2]) {
    if (!gradients(kind)) continue;
    std::vector<std::pair<std::uint64_t, std::pair<std::size_t, std::size_t>>> keyed;
    std::map<std::size_t, std::size_t> seen;  // part -> gathers so far
    for (const auto& [j, i] : kind.nodes) {
      const std::vector<std::uint64_t>& ready = bucket_ready[{std::get<2>(kind.key), j}];
      const std::size_t m = seen[j]++;
      keyed.emplace_back(m < ready.size() ? ready[m] : 0, std::pair{j, i});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t n = 0; n < keyed.size(); ++n) kind.nodes[n] = keyed[n].second;
  }
  for (int phase = 0; phase < 3; ++phase) {
    for (const Kind& kind : phases[phase]) {
      const auto [j0, i0] = kind.nodes.front();
      const chakra::Node& first = parts_[j0].trace.nodes[i0];
      const std::string group = kind_name(first);
      const bool compute = first.type() == ChakraProtoMsg::COMP_NODE;
      const bool collective = first.type() == ChakraProtoMsg::COMM_COLL_NODE;
      if (compute || (collective && group == "TP")) {
        // The optimizer, or the all-reduce of the weights every TP rank holds: one node for the
        // weights of every merged stage.
        std::vector<std::uint64_t> deps;
        std::uint64_t micros = 0, ops = 0, bytes = 0, size = 0;
        for (const auto& [j, i] : kind.nodes) {
          const chakra::Node& old = parts_[j].trace.nodes[i];
          micros += old.duration_micros();
          ops += chakra::attr_uint(old, "num_ops").value_or(0);
          bytes += chakra::attr_uint(old, "tensor_size").value_or(0);
          size += chakra::attr_uint(old, "comm_size").value_or(0);
          for (const std::uint64_t d : old.data_deps()) {
            if (const std::optional<std::uint64_t> now = by_role(j, d)) deps.push_back(*now);
          }
        }
        chakra::Node& node = emit(j0, i0, false);
        for (const std::uint64_t d : deps) add_dep(node, d);
        for (const auto& [j, i] : kind.nodes) new_id_[j][parts_[j].trace.nodes[i].id()] = node.id();
        if (compute) {
          node.set_duration_micros(micros);
          if (chakra::find_attribute(node, "num_ops")) set_int_attr(node, "num_ops", static_cast<std::int64_t>(ops));
          if (chakra::find_attribute(node, "tensor_size")) {
            set_int_attr(node, "tensor_size", static_cast<std::int64_t>(bytes));
          }
        } else {
          set_int_attr(node, "comm_size", static_cast<std::int64_t>(size));
        }
        continue;
      }
      // Gradient buckets keep what made them ready; anything else waits on what its kind of
      // dependency is in the new stage.
      const bool bucket = collective && phase == 0 && (group == "DP" || group == "EDP");
      for (const auto& [j, i] : kind.nodes) {
        chakra::Node& node = emit(j, i, bucket);
        if (bucket) continue;
        for (const std::uint64_t d : parts_[j].trace.nodes[i].data_deps()) {
          if (const std::optional<std::uint64_t> now = by_role(j, d); now && *now != node.id()) add_dep(node, *now);
        }
      }
    }
  }
}

chakra::Trace StageMerger::build(const TraceSet& out) {
  out_.metadata = parts_.front().trace.metadata;
  for (const Task& task :
       llm::stage_tasks(shape_.schedule, layout_.stages, stage_, shape_.microbatches, shape_.chunks)) {
    run(task);
  }
  step_section(out);
  return std::move(out_);
}

}  // namespace

chakra::Trace merge_stages(std::vector<StagePasses>& parts, const PipelineShape& shape, const PpLayout& layout,
                           std::uint64_t low, std::uint64_t stage, const TraceSet& out) {
  return StageMerger(parts, shape, layout, low, stage).build(out);
}

}  // namespace chakrasim::tools::rescale
