// `chakra rescale --pp M` (rescaler.h): fewer pipeline stages, each running the passes of the
// K = P / M neighbouring stages it replaces, in the schedule generate llm builds for M stages.
//
// A stage's trace is read as passes: the nodes named F<mb>. (forward of microbatch mb), B<mb>.
// and R<mb>. (its backward and recomputation) and step. (gradient reduction and optimizer), as
// generate llm names them. The order of the passes gives the schedule: the one of gpipe, 1f1b
// and interleaved (llm_schedule.h) that orders every old stage's passes so.
//
// New stage s' of model chunk c runs, for each pass of the new schedule, the same pass of old
// stages s' K .. s' K + K - 1 (their chunk c, which holds the next layers of the model) back to
// back, forward in layer order and backward in reverse: every compute node and collective of
// those passes, with the pipeline message between two merged stages gone and those at the ends
// of the new stage re-addressed (peers M stages round, tags as generate llm numbers them). The
// compute nodes form one chain in the new order, and each group's collectives another (a
// communicator runs its work in order); any other dependency is kept when it points backwards
// in the new order.
//
// The step section: the merged stages' gradient buckets one after the other (the later stage's
// first, as the backward produces them), one all-reduce for the TP-replicated weights (their sizes
// summed), the tied embedding's all-reduce, one optimizer node (the merged ones' durations and
// sizes summed), then the parameter all-gathers.
//
// Splitting a stage is refused: fused compute nodes run across layer boundaries and gradient
// buckets span layers, so the traces do not say which work and which gradients belong to which
// half of a stage.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/error.h"
#include "generate/llm/llm_schedule.h"
#include "tools/rescale/rescale_step.h"

namespace chakrasim::tools::rescale {
namespace {

using llm::Schedule;
using llm::Task;

struct PassKey {
  bool backward = false;
  std::uint64_t microbatch = 0;
  bool operator==(const PassKey&) const = default;
};

// The pass a node belongs to, from its name; none for the step section. Throws on other names.
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

// One old stage's trace cut into its passes.
struct StagePasses {
  chakra::Trace trace;
  std::string source;
  std::vector<PassKey> keys;                             // in the order the stage runs them
  std::vector<std::vector<std::size_t>> passes;          // node indices of each pass, in trace order
  std::vector<std::size_t> step;                         // node indices of the step section
  std::unordered_map<std::uint64_t, std::size_t> index;  // node id -> index
  std::map<std::tuple<bool, std::uint64_t, std::uint64_t>, std::size_t> by_task;  // (backward, mb, chunk) -> pass
  std::unordered_set<std::uint64_t> dropped;  // step collectives whose group the new set lacks
};

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

struct PipelineShape {
  Schedule schedule = Schedule::kOneFOneB;
  std::uint64_t microbatches = 0, chunks = 1;
};

// rank = low + stride x p.
struct PpLayout {
  std::uint64_t stride = 0, stages = 0;
  std::uint64_t low(std::uint64_t r) const { return r % stride; }
  std::uint64_t stage(std::uint64_t r) const { return r / stride; }
  std::uint64_t rank(std::uint64_t low, std::uint64_t stage) const { return low + stride * stage; }
};

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

Step rescale_pp(TraceSetPtr in, std::uint64_t new_pp) {
  const std::vector<std::uint32_t> pp_groups = groups_named(*in, "PP");
  if (pp_groups.empty()) {
    fail("{}: no group is named \"PP\"; expected the pipeline groups labelled PP (a trace set of one stage has no "
         "stages to merge, and splitting is not supported)",
         in->names_source);
  }
  std::vector<NpuId> first = in->groups.at(pp_groups.front());
  std::sort(first.begin(), first.end());
  PpLayout old_layout;
  old_layout.stages = first.size();
  old_layout.stride = first.size() >= 2 ? first[1] - first[0] : 0;
  std::set<NpuId> covered;
  for (const std::uint32_t id : pp_groups) {
    std::vector<NpuId> members = in->groups.at(id);
    std::sort(members.begin(), members.end());
    bool ok = old_layout.stride > 0 && members.size() == old_layout.stages && members.front() < old_layout.stride;
    for (std::uint64_t p = 0; ok && p < members.size(); ++p) {
      ok = members[p] == old_layout.rank(members.front(), p) && covered.insert(members[p]).second;
    }
    if (!ok) {
      fail("{}: PP group {} is not {{low + {} x p : p < {}}}; expected the pipeline stage outermost (rank = low + "
           "stride x p)",
           in->groups_source, id, old_layout.stride, old_layout.stages);
    }
  }
  if (covered.size() != in->ranks) {
    fail("{}: the PP groups cover {} of the {} ranks; expected one PP group per rank of a stage", in->groups_source,
         covered.size(), in->ranks);
  }
  const std::uint64_t old_pp = old_layout.stages;
  if (old_pp % new_pp != 0) {
    if (new_pp % old_pp == 0) {
      fail("--pp {}: splitting {} stages into {} needs each layer's compute and gradients apart, which the traces do "
           "not keep (fused compute nodes run across layers, gradient buckets span layers); expected a --pp that "
           "divides {}",
           new_pp, old_pp, new_pp, old_pp);
    }
    fail("--pp {}: expected a divisor of the traces' {} pipeline stages (each new stage merges whole old stages)",
         new_pp, old_pp);
  }
  const std::uint64_t k = old_pp / new_pp;
  PpLayout layout{old_layout.stride, new_pp};

  // The schedule: the one that orders every old stage's passes as they are.
  PipelineShape shape;
  std::vector<StagePasses> stages;
  for (std::uint64_t p = 0; p < old_pp; ++p) {
    stages.push_back(cut(in->trace(old_layout.rank(0, p)), in->source(old_layout.rank(0, p))));
  }
  std::uint64_t forwards = 0;
  for (const PassKey& key : stages.front().keys) {
    shape.microbatches = std::max(shape.microbatches, key.microbatch + 1);
    forwards += key.backward ? 0 : 1;
  }
  shape.chunks = shape.microbatches == 0 ? 1 : std::max<std::uint64_t>(1, forwards / shape.microbatches);
  bool found = false;
  for (const Schedule s : {Schedule::kOneFOneB, Schedule::kGpipe, Schedule::kInterleaved}) {
    if ((s == Schedule::kInterleaved) != (shape.chunks > 1)) continue;
    bool all = true;
    for (std::uint64_t p = 0; all && p < old_pp; ++p) {
      all = follows(stages[p], llm::stage_tasks(s, old_pp, p, shape.microbatches, shape.chunks));
    }
    if (all) {
      shape.schedule = s;
      found = true;
      break;
    }
  }
  if (!found) {
    fail("{}: the passes of the {} stages follow none of the gpipe, 1f1b and interleaved schedules of {} microbatches "
         "and {} model chunks per stage; expected the schedule generate llm builds",
         in->source(0), old_pp, shape.microbatches, shape.chunks);
  }
  if (shape.schedule == Schedule::kInterleaved && new_pp == 1) {
    fail("--pp 1: the traces run an interleaved schedule, which needs 2 or more stages; expected --pp of at least 2");
  }

  auto out = std::make_shared<TraceSet>();
  out->ranks = layout.stride * new_pp;
  out->groups_source = in->groups_source;
  out->names_source = in->names_source;
  auto groups = std::make_shared<NewGroups>(*in);
  for (const auto& [id, members] : in->groups) {
    std::vector<NpuId> merged;
    for (const NpuId m : members) {
      merged.push_back(static_cast<NpuId>(layout.rank(old_layout.low(m), old_layout.stage(m) / k)));
    }
    groups->add(id, 0, std::move(merged));
  }
  groups->finish(*out);
  const bool tied = !groups_named(*in, "EMB").empty();

  out->source = [in, old_layout, layout, k](std::uint64_t r) {
    return in->source(old_layout.rank(layout.low(r), layout.stage(r) * k));
  };
  auto buckets_merged = std::make_shared<std::uint64_t>(0);
  out->trace = [in, out_set = out.get(), groups, old_layout, layout, k, shape, new_pp,
                buckets_merged](std::uint64_t r) {
    const std::uint64_t low = layout.low(r), stage = layout.stage(r);
    std::vector<StagePasses> parts;
    BucketLimits limits;
    for (std::uint64_t j = 0; j < k; ++j) {
      const std::uint64_t old_stage = stage * k + j;
      const std::uint64_t from = old_layout.rank(low, old_stage);
      const std::string source = in->source(from);
      chakra::Trace trace = in->trace(from);
      std::unordered_set<std::uint64_t> dropped;
      for (chakra::Node& node : trace.nodes) {
        const std::optional<std::uint32_t> old_id = group_of(node, *in, source);
        if (!old_id) continue;
        if (const std::optional<std::uint32_t> id = groups->id(*old_id, 0)) {
          set_group(node, *id);
        } else if (node.type() == ChakraProtoMsg::COMM_COLL_NODE && !pass_of(node, source)) {
          dropped.insert(node.id());  // the tied embedding's all-reduce at PP 1
        } else {
          fail("{}: node {} uses group {}, which --pp {} leaves with one member; expected a larger --pp", source,
               node.id(), *old_id, new_pp);
        }
      }
      for (const auto& [group, bytes] : bucket_limits(trace)) {
        const auto [at, added] = limits.try_emplace(group, bytes);
        if (!added) at->second = std::min(at->second, bytes);
      }
      StagePasses part = cut(std::move(trace), source);
      part.dropped = std::move(dropped);
      const std::vector<Task> tasks =
          llm::stage_tasks(shape.schedule, old_layout.stages, old_stage, shape.microbatches, shape.chunks);
      if (!follows(part, tasks)) {
        fail("{}: its passes do not follow the {} schedule the other stages follow; expected one schedule for every "
             "rank",
             source, schedule_name(shape.schedule));
      }
      for (std::size_t p = 0; p < tasks.size(); ++p) {
        part.by_task[{tasks[p].backward, tasks[p].microbatch, tasks[p].chunk}] = p;
      }
      parts.push_back(std::move(part));
    }
    chakra::Trace merged = StageMerger(parts, shape, layout, low, stage).build(*out_set);
    *buckets_merged += merge_buckets(merged, limits);
    return merged;
  };
  Step step;
  step.out = out;
  step.changes = [in, out, old_pp, new_pp, k, shape, buckets_merged]() {
    return std::vector<std::string>{fmt::format("rescaled {} ranks (PP {}) to {} ranks (PP {})", in->ranks, old_pp,
                                                out->ranks, new_pp),
                                    fmt::format("  each new stage runs the passes of {} old stages back to back; the "
                                                "{} schedule of {} "
                                                "microbatches{} rebuilt for {} stages",
                                                k, schedule_name(shape.schedule), shape.microbatches,
                                                shape.chunks > 1 ? fmt::format(" and {} model chunks", shape.chunks)
                                                                 : std::string(),
                                                new_pp)};
  };
  step.caveats = {
      "--pp: a new stage keeps the merged stages' compute and collectives; their gradient buckets are kept but for a "
      "stage's last, partly filled one, merged with the next (Megatron re-buckets the merged weights whole); only "
      "merging is done: a --pp larger than the traces' is refused, as the traces do not keep a stage's layers apart",
      "--pp: the passes and the schedule are read from generate llm's node names (F<mb>., B<mb>., R<mb>., step.)",
  };
  if (tied && new_pp == 1) {
    step.caveats.push_back("--pp 1: the tied embedding's all-reduce between the first and the last stage is gone, but "
                           "the last stage's "
                           "copy of the embedding stays in the gradients and the optimizer step (generate llm at PP 1 "
                           "has one copy)");
  }
  return step;
}

}  // namespace chakrasim::tools::rescale
