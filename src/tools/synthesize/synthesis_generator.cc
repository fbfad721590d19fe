#include "tools/synthesize/synthesis_generator.h"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "config/other_configs.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "tools/synthesize/synthesis_job.h"
#include "tools/synthesize/synthesis_stats.h"

namespace chakrasim::tools {
namespace {

// Refused before anything is written: a model that expands past this per rank is an error, not
// a run that fills the disk.
constexpr std::uint64_t kMaxNodesPerRank = 50'000'000;

// One node of a class's expanded step.
struct StepNode {
  const Slot* slot = nullptr;
  std::uint64_t duration = 0, num_ops = 0, tensor_size = 0, comm_size = 0;
  std::vector<std::uint64_t> data_deps, ctrl_deps;  // positions
};

// A slot's drawn values, one per repetition, per field (empty: the field is constant or absent).
struct SlotDraws {
  std::vector<std::uint64_t> fields[4];
  std::size_t next = 0;
};

const std::optional<ValueDistribution>& field(const Slot& s, int f) {
  switch (f) {
    case 0: return s.duration_us;
    case 1: return s.num_ops;
    case 2: return s.tensor_size;
    default: return s.comm_size;
  }
}

bool varies(const Slot& s) {
  for (int f = 0; f < 4; ++f) {
    if (field(s, f) && !field(s, f)->constant()) return true;
  }
  return false;
}

std::uint64_t nodes_per_step(const std::vector<ProgramItem>& program, const std::string& source) {
  std::uint64_t total = 0;
  for (const ProgramItem& item : program) {
    const std::uint64_t n = item.is_loop() ? nodes_per_step(item.body, source) : 1;
    const std::uint64_t reps = item.is_loop() ? item.count : 1;
    if (n > kMaxNodesPerRank / reps || total + n * reps > kMaxNodesPerRank) {
      fail("{}: a step expands to more than {} nodes per rank; expected a smaller model", source, kMaxNodesPerRank);
    }
    total += n * reps;
  }
  return total;
}

class ClassExpander {
 public:
  ClassExpander(const RankClass& c, const std::string& source, std::uint64_t seed)
      : class_(c), source_(source), random_(seed), draws_(c.slots.size()) {}

  std::vector<StepNode> expand(std::uint64_t iterations) {
    const std::uint64_t per_step = nodes_per_step(class_.program, source_);
    if (iterations > kMaxNodesPerRank / std::max<std::uint64_t>(per_step, 1)) {
      fail("{}: {} iterations of {} nodes exceed {} nodes per rank", source_, iterations, per_step, kMaxNodesPerRank);
    }
    std::vector<StepNode> nodes;
    nodes.reserve(per_step * iterations);
    std::vector<std::uint64_t> sinks;
    for (std::uint64_t it = 0; it < iterations; ++it) {
      // Each step draws afresh, so that a step's totals are the learned ones.
      for (SlotDraws& d : draws_) d = SlotDraws{};
      draw(class_.program, {}, 1);
      const std::size_t start = nodes.size();
      emit(class_.program, nodes, start);
      // The step after waits for the one before: its first nodes on the last ones before.
      std::vector<bool> needed(nodes.size() - start, false);
      for (std::size_t i = start; i < nodes.size(); ++i) {
        if (it > 0 && nodes[i].data_deps.empty() && nodes[i].ctrl_deps.empty()) nodes[i].ctrl_deps = sinks;
        for (const auto* deps : {&nodes[i].data_deps, &nodes[i].ctrl_deps}) {
          for (const std::uint64_t d : *deps) {
            if (d >= start) needed[d - start] = true;
          }
        }
      }
      sinks.clear();
      for (std::size_t i = 0; i < needed.size(); ++i) {
        if (!needed[i]) sinks.push_back(start + i);
      }
    }
    return nodes;
  }

 private:
  // Draws the values of the slots directly in `body` for `reps` repetitions, ordered by the loop's
  // correlations, then those of the loops inside.
  void draw(const std::vector<ProgramItem>& body, const std::vector<double>& correlation, std::uint64_t reps) {
    std::vector<std::size_t> varying;
    for (const ProgramItem& item : body) {
      if (!item.is_loop() && varies(class_.slots[static_cast<std::size_t>(item.slot)])) {
        varying.push_back(static_cast<std::size_t>(item.slot));
      }
    }
    std::vector<std::vector<std::size_t>> ranks;
    const std::size_t columns = varying.size() + 1;
    if (!varying.empty() && reps >= 2 && correlation.size() == columns * columns) {
      ranks = coupled_ranks(correlation, columns, reps, random_);
    }
    for (std::size_t j = 0; j < varying.size(); ++j) {
      const Slot& s = class_.slots[varying[j]];
      std::vector<std::size_t> order;
      if (!ranks.empty()) {
        order = std::move(ranks[j]);
      } else {
        // No learned dependence: a random order (Fisher-Yates).
        order.resize(reps);
        std::iota(order.begin(), order.end(), 0);
        for (std::size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[random_.below(k)]);
      }
      for (int f = 0; f < 4; ++f) {
        if (!field(s, f) || field(s, f)->constant()) continue;
        const std::vector<std::uint64_t> sorted = draw_values(*field(s, f), reps, random_);
        std::vector<std::uint64_t>& out = draws_[varying[j]].fields[f];
        out.resize(reps);
        for (std::size_t t = 0; t < reps; ++t) out[t] = sorted[order[t]];
      }
    }
    for (const ProgramItem& item : body) {
      if (item.is_loop()) draw(item.body, item.correlation, reps * item.count);
    }
  }

  void emit(const std::vector<ProgramItem>& program, std::vector<StepNode>& nodes, std::size_t step_start) {
    for (const ProgramItem& item : program) {
      if (item.is_loop()) {
        for (std::uint64_t k = 0; k < item.count; ++k) emit(item.body, nodes, step_start);
        continue;
      }
      const Slot& s = class_.slots[static_cast<std::size_t>(item.slot)];
      SlotDraws& d = draws_[static_cast<std::size_t>(item.slot)];
      StepNode n;
      n.slot = &s;
      std::uint64_t* into[4] = {&n.duration, &n.num_ops, &n.tensor_size, &n.comm_size};
      for (int f = 0; f < 4; ++f) {
        if (!field(s, f)) continue;
        *into[f] = field(s, f)->constant() ? static_cast<std::uint64_t>(std::llround(field(s, f)->quantiles.front()))
                                           : d.fields[f][d.next];
      }
      ++d.next;
      const std::size_t at = nodes.size();
      for (const auto& [from, to] : {std::pair{&s.data_deps, &n.data_deps}, std::pair{&s.ctrl_deps, &n.ctrl_deps}}) {
        for (const std::uint64_t back : *from) {
          if (back > at - step_start) {
            fail("{}: node {} of a step depends on the node {} before it, before the step's start", source_,
                 at - step_start, back);
          }
          to->push_back(at - back);
        }
      }
      nodes.push_back(std::move(n));
    }
  }

  const RankClass& class_;
  const std::string& source_;
  SplitMix random_;
  std::vector<SlotDraws> draws_;
};

chakra::Node make_node(const StepNode& n, std::uint64_t id) {
  chakra::Node out;
  out.set_id(id);
  const Slot& s = *n.slot;
  for (const std::uint64_t d : n.data_deps) out.add_data_deps(d);
  for (const std::uint64_t d : n.ctrl_deps) out.add_ctrl_deps(d);
  switch (s.kind) {
    case SlotKind::kGpuCompute:
    case SlotKind::kCpuCompute:
      out.set_type(ChakraProtoMsg::COMP_NODE);
      out.set_name("compute");
      out.set_duration_micros(n.duration);
      *out.add_attr() = chakra::make_bool("is_cpu_op", s.kind == SlotKind::kCpuCompute);
      if (s.num_ops) *out.add_attr() = chakra::make_uint64("num_ops", n.num_ops);
      if (s.tensor_size) *out.add_attr() = chakra::make_uint64("tensor_size", n.tensor_size);
      break;
    case SlotKind::kMemLoad:
    case SlotKind::kMemStore:
      out.set_type(s.kind == SlotKind::kMemLoad ? ChakraProtoMsg::MEM_LOAD_NODE : ChakraProtoMsg::MEM_STORE_NODE);
      out.set_name(s.kind == SlotKind::kMemLoad ? "memory_load" : "memory_store");
      out.set_duration_micros(n.duration);
      *out.add_attr() = chakra::make_bool("is_cpu_op", false);
      if (s.tensor_size) *out.add_attr() = chakra::make_uint64("tensor_size", n.tensor_size);
      break;
    case SlotKind::kCollective:
      out.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      out.set_name(chakra::comm_type_name(s.comm_type));
      *out.add_attr() = chakra::make_bool("is_cpu_op", false);
      *out.add_attr() = chakra::make_int64("comm_type", s.comm_type);
      *out.add_attr() = chakra::make_int64("comm_size", static_cast<std::int64_t>(n.comm_size));
      if (s.involved_dim) *out.add_attr() = chakra::make_bool_list("involved_dim", *s.involved_dim);
      break;
    case SlotKind::kSend:
    case SlotKind::kRecv:
      out.set_type(s.kind == SlotKind::kSend ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      out.set_name(s.kind == SlotKind::kSend ? "send" : "recv");
      *out.add_attr() = chakra::make_bool("is_cpu_op", false);
      break;
    case SlotKind::kMetadata:
      out.set_type(ChakraProtoMsg::METADATA_NODE);
      out.set_name("metadata");
      break;
  }
  return out;
}

}  // namespace

GenerateReport generate(const SynthesisModel& model, const std::string& source, const GenerateOptions& options,
                        const TraceSink& sink, std::vector<std::vector<std::uint64_t>>* groups_out) {
  if (options.iterations == 0) fail("--iterations 0: expected at least 1");
  const SynthesisJob job(model, options.npus, source);
  std::vector<std::uint64_t> per_step;
  for (const RankClass& c : model.classes) per_step.push_back(nodes_per_step(c.program, source));
  const std::uint64_t iterations = std::min(options.iterations, kMaxNodesPerRank);
  std::uint64_t total = 0;
  for (std::uint64_t rank = 0; rank < job.npus(); ++rank) {
    total += std::min(per_step[job.class_of(rank)] * iterations, options.max_total_nodes + 1);
    if (total > options.max_total_nodes) {
      fail("{}: {} NPUs of this model expand to more than {} nodes in all; expected a smaller job", source, job.npus(),
           options.max_total_nodes);
    }
  }
  // Every class's steps, drawn once: its ranks run the same step.
  std::vector<std::vector<StepNode>> steps;
  for (std::size_t k = 0; k < model.classes.size(); ++k) {
    ClassExpander expander(model.classes[k], source, splitmix64(options.seed * 0x100000001b3ull + k));
    steps.push_back(expander.expand(options.iterations));
  }
  // What the ranks must agree on, set by the first rank that reaches it: the k-th collective of a
  // group, the k-th message on a channel (source, destination).
  std::map<std::pair<std::int64_t, std::uint64_t>, std::uint64_t> collective_size;
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, std::uint64_t> message_size;
  GenerateReport report;
  for (std::uint64_t rank = 0; rank < job.npus(); ++rank) {
    const std::vector<StepNode>& step = steps[job.class_of(rank)];
    std::map<std::int64_t, std::uint64_t> collectives_on;           // by group
    std::map<std::uint64_t, std::uint64_t> sent_to, received_from;  // by peer
    chakra::Trace trace;
    trace.metadata.set_version("0.0.4");
    trace.nodes.reserve(step.size());
    for (std::size_t i = 0; i < step.size(); ++i) {
      const StepNode& n = step[i];
      chakra::Node node = make_node(n, i);
      const Slot& s = *n.slot;
      if (s.kind == SlotKind::kCollective) {
        const std::int64_t group = job.group_of(rank, s);
        const auto [it, fresh] = collective_size.emplace(std::pair{group, collectives_on[group]++}, n.comm_size);
        for (chakra::Attribute& a : *node.mutable_attr()) {
          if (a.name() == "comm_size") a = chakra::make_int64("comm_size", static_cast<std::int64_t>(it->second));
        }
        if (group >= 0) *node.add_attr() = chakra::make_string("pg_name", std::to_string(group + 1));
      } else if (s.kind == SlotKind::kSend || s.kind == SlotKind::kRecv) {
        const std::uint64_t peer = job.peer_of(rank, s.peer_offset);
        const bool send = s.kind == SlotKind::kSend;
        const std::uint64_t ordinal = send ? sent_to[peer]++ : received_from[peer]++;
        const auto key = send ? std::tuple{rank, peer, ordinal} : std::tuple{peer, rank, ordinal};
        const auto [it, fresh] = message_size.emplace(key, n.comm_size);
        if (ordinal > static_cast<std::uint64_t>(INT32_MAX)) fail("{}: more than 2^31 messages on one channel", source);
        *node.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", static_cast<std::int32_t>(peer));
        *node.add_attr() = chakra::make_int32("comm_tag", static_cast<std::int32_t>(ordinal));
        *node.add_attr() = chakra::make_int64("comm_size", static_cast<std::int64_t>(it->second));
      }
      trace.nodes.push_back(std::move(node));
    }
    report.nodes += trace.nodes.size();
    sink(rank, trace);
  }
  report.ranks = job.npus();
  report.groups = job.groups().size();
  report.caveat = job.caveat();
  if (groups_out) *groups_out = job.groups();
  return report;
}

GenerateReport generate_traces(const SynthesisModel& model, const std::string& source, const std::string& out_prefix,
                               const GenerateOptions& options) {
  std::vector<std::vector<std::uint64_t>> job_groups;
  GenerateReport report = generate(
      model, source, options,
      [&](std::uint64_t rank, const chakra::Trace& trace) {
        chakra::write_trace(chakra::rank_path(out_prefix, rank), trace);
      },
      &job_groups);
  if (!job_groups.empty()) {
    system::CommGroups groups;
    for (std::size_t g = 0; g < job_groups.size(); ++g) {
      groups[static_cast<std::uint32_t>(g + 1)] = std::vector<NpuId>(job_groups[g].begin(), job_groups[g].end());
    }
    report.groups_path = out_prefix + ".groups.json";
    write_file_atomically(report.groups_path, config::comm_groups_json(groups), "the communicator-group file");
  }
  return report;
}

}  // namespace chakrasim::tools
