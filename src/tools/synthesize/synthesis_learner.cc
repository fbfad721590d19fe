#include "tools/synthesize/synthesis_learner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "chakra/process_groups.h"
#include "config/other_configs.h"
#include "core/error.h"
#include "core/read_file.h"
#include "tools/obfuscate/obfuscator.h"
#include "tools/synthesize/loop_finder.h"
#include "tools/synthesize/synthesis_stats.h"

namespace chakrasim::tools {
namespace {

using Groups = std::map<std::string, std::vector<std::uint64_t>>;  // by pg_name

// The process groups a METADATA node describes (chakra/process_groups.h), those with ranks.
void add_metadata_groups(const chakra::Node& node, Groups& groups) {
  if (!node.has_inputs()) return;
  for (chakra::ProcessGroupDescription& pg : chakra::describe_process_groups(node.inputs().values())) {
    if (pg.has_ranks) groups.emplace(std::move(pg.name), std::move(pg.ranks));
  }
}

// What a node is, apart from its values: equal symbols are interchangeable across ranks.
struct NodeShape {
  Slot slot;  // without distributions
  bool has_duration = false, has_num_ops = false, has_tensor_size = false, has_comm_size = false;
  std::int64_t size_class = 0;  // floor(log_R(main value)); 0 without a resolution
};

std::string symbol_key(const NodeShape& s) {
  const Slot& k = s.slot;
  std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}{}{}{}|{}|", static_cast<int>(k.kind), k.comm_type, k.group_shape, k.group_nth,
                  k.peer_offset, s.has_duration, s.has_num_ops, s.has_tensor_size, s.has_comm_size, s.size_class);
  if (k.involved_dim) {
    for (const bool b : *k.involved_dim) key += b ? '1' : '0';
  }
  key += '|';
  for (const std::uint64_t d : k.data_deps) key += fmt::format("{},", d);
  key += '|';
  for (const std::uint64_t d : k.ctrl_deps) key += fmt::format("{},", d);
  return key;
}

struct NodeValues {
  double duration = 0, num_ops = 0, tensor_size = 0, comm_size = 0;
};

class Learner {
 public:
  Learner(const std::string& in_prefix, const std::string& groups_path, double resolution)
      : prefix_(in_prefix), resolution_(resolution) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(chakra::rank_path(in_prefix, 0), ec)) {
      fail("{}: no {}; expected the PREFIX of PREFIX.0.et, PREFIX.1.et, ...", in_prefix,
           chakra::rank_path(in_prefix, 0));
    }
    for (std::size_t r = 0; fs::exists(chakra::rank_path(in_prefix, r), ec); ++r) ++npus_;
    const std::string groups = groups_path.empty() ? in_prefix + ".groups.json" : groups_path;
    if (!groups_path.empty() || fs::exists(groups, ec)) {
      const auto parsed =
          config::parse_comm_groups(read_file(groups, "--comm-groups", "a communicator-group JSON file"), groups,
                                    static_cast<NpuId>(npus_));
      for (const auto& [id, members] : parsed) {
        groups_[std::to_string(id)] = std::vector<std::uint64_t>(members.begin(), members.end());
      }
    }
  }

  SynthesisModel run(LearnReport& report) {
    // The process groups METADATA nodes describe must be known before any collective is read:
    // a first pass reads only them. The second reduces each rank to its symbols and values,
    // holding one trace at a time (not every rank's: 0.6 GB for GPT-3 175B on 256 GPUs).
    for (std::size_t r = 0; r < npus_; ++r) {
      for (const chakra::Node& n : chakra::read_trace(chakra::rank_path(prefix_, r)).nodes) {
        if (n.type() == ChakraProtoMsg::METADATA_NODE) add_metadata_groups(n, groups_);
      }
    }
    index_groups();
    std::map<std::vector<std::uint32_t>, std::size_t> class_of;
    std::vector<std::vector<std::uint32_t>> class_symbols;
    std::vector<std::vector<std::size_t>> class_ranks;
    std::vector<std::vector<NodeValues>> values(npus_);
    for (std::size_t r = 0; r < npus_; ++r) {
      const std::string path = chakra::rank_path(prefix_, r);
      ObfuscateReport ignored;
      const chakra::Trace trace = obfuscate_trace(chakra::read_trace(path), path, ObfuscateOptions{}, ignored);
      std::vector<std::uint32_t> symbols;
      symbols.reserve(trace.nodes.size());
      values[r].reserve(trace.nodes.size());
      for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
        NodeValues v;
        symbols.push_back(intern(shape_of(trace.nodes[i], i, r, v)));
        values[r].push_back(v);
      }
      report.nodes += symbols.size();
      const auto [it, fresh] = class_of.emplace(std::move(symbols), class_symbols.size());
      if (fresh) {
        class_symbols.push_back(it->first);
        class_ranks.emplace_back();
      }
      class_ranks[it->second].push_back(r);
    }
    SynthesisModel model;
    model.npus = npus_;
    model.groups = group_members_;
    model.group_shapes = shapes_;
    for (std::size_t k = 0; k < class_symbols.size(); ++k) {
      model.classes.push_back(build_class(class_symbols[k], class_ranks[k], values, report));
    }
    report.ranks = npus_;
    report.classes = model.classes.size();
    report.groups = model.groups.size();
    return model;
  }

 private:
  // Groups in pg_name order (numbers by value), each with its shape.
  void index_groups() {
    std::vector<std::string> names;
    for (const auto& [name, members] : groups_) names.push_back(name);
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    for (const std::string& name : names) {
      const std::vector<std::uint64_t>& members = groups_.at(name);
      // A process group listed without ranks is the whole job (PyTorch's default group).
      if (members.empty()) continue;
      for (const std::uint64_t m : members) {
        if (m >= npus_) {
          fail("{}: process group \"{}\" lists rank {}; expected ranks below the {} traces", prefix_, name, m, npus_);
        }
      }
      group_index_[name] = group_members_.size();
      group_members_.push_back(members);
      const std::vector<std::int64_t> shape = group_shape(members);
      auto found = std::find(shapes_.begin(), shapes_.end(), shape);
      if (found == shapes_.end()) found = shapes_.insert(shapes_.end(), shape);
      group_shape_index_.push_back(static_cast<std::size_t>(found - shapes_.begin()));
    }
  }

  NodeShape shape_of(const chakra::Node& n, std::size_t position, std::size_t rank, NodeValues& v) const {
    const std::string path = chakra::rank_path(prefix_, rank);
    NodeShape s;
    Slot& k = s.slot;
    for (const std::uint64_t d : n.data_deps()) k.data_deps.push_back(position - d);
    for (const std::uint64_t d : n.ctrl_deps()) k.ctrl_deps.push_back(position - d);
    auto size_of = [&](const char* name, double& into) {
      const auto value = chakra::attr_uint(n, name);
      if (value) into = static_cast<double>(*value);
      return value.has_value();
    };
    switch (n.type()) {
      case ChakraProtoMsg::COMP_NODE:
        k.kind = chakra::attr_bool(n, "is_cpu_op").value_or(false) ? SlotKind::kCpuCompute : SlotKind::kGpuCompute;
        s.has_duration = true;
        v.duration = static_cast<double>(n.duration_micros());
        s.has_num_ops = size_of("num_ops", v.num_ops);
        s.has_tensor_size = size_of("tensor_size", v.tensor_size);
        break;
      case ChakraProtoMsg::MEM_LOAD_NODE:
      case ChakraProtoMsg::MEM_STORE_NODE:
        k.kind = n.type() == ChakraProtoMsg::MEM_LOAD_NODE ? SlotKind::kMemLoad : SlotKind::kMemStore;
        s.has_duration = true;
        v.duration = static_cast<double>(n.duration_micros());
        s.has_tensor_size = size_of("tensor_size", v.tensor_size);
        break;
      case ChakraProtoMsg::COMM_COLL_NODE: {
        k.kind = SlotKind::kCollective;
        k.comm_type = static_cast<std::int32_t>(chakra::attr_int(n, "comm_type").value_or(0));
        if (k.comm_type < 0 || k.comm_type > static_cast<std::int32_t>(chakra::CommType::kBarrier)) {
          fail("{}: node {}: comm_type {} is not a collective type chakrasim knows", path, n.id(), k.comm_type);
        }
        k.involved_dim = chakra::attr_bool_list(n, "involved_dim");
        const std::string pg = chakra::attr_string(n, "pg_name").value_or("");
        const bool whole_job = pg.empty() || pg == "0" || (groups_.count(pg) && groups_.at(pg).empty());
        if (!whole_job) {
          const auto it = group_index_.find(pg);
          if (it == group_index_.end()) {
            fail("{}: node {}: pg_name \"{}\" is no group of the communicator-group file or of a METADATA node", path,
                 n.id(), pg);
          }
          const std::size_t group = it->second;
          const std::vector<std::uint64_t>& members = group_members_[group];
          if (std::find(members.begin(), members.end(), rank) == members.end()) {
            fail("{}: node {}: rank {} is not a member of group \"{}\"", path, n.id(), rank, pg);
          }
          k.group_shape = static_cast<std::int64_t>(group_shape_index_[group]);
          // Which of the rank's groups of that shape, when it is in several.
          for (std::size_t g = 0; g < group; ++g) {
            const auto& other = group_members_[g];
            if (group_shape_index_[g] == group_shape_index_[group] &&
                std::find(other.begin(), other.end(), rank) != other.end()) {
              ++k.group_nth;
            }
          }
        }
        s.has_comm_size = size_of("comm_size", v.comm_size);
        break;
      }
      case ChakraProtoMsg::COMM_SEND_NODE:
      case ChakraProtoMsg::COMM_RECV_NODE: {
        const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
        k.kind = send ? SlotKind::kSend : SlotKind::kRecv;
        const auto peer = chakra::attr_int(n, send ? "comm_dst" : "comm_src");
        if (!peer || *peer < 0 || static_cast<std::uint64_t>(*peer) >= npus_ ||
            static_cast<std::uint64_t>(*peer) == rank) {
          fail("{}: node {}: a {} without a valid {}; expected another rank below {}", path, n.id(),
               send ? "send" : "recv", send ? "comm_dst" : "comm_src", npus_);
        }
        k.peer_offset = *peer - static_cast<std::int64_t>(rank);
        s.has_comm_size = size_of("comm_size", v.comm_size);
        break;
      }
      case ChakraProtoMsg::METADATA_NODE: k.kind = SlotKind::kMetadata; break;
      default:
        fail("{}: node {}: type {} is not one the synthesizer models; expected compute, memory, collective, send, "
             "recv or metadata nodes",
             path, n.id(), chakra::node_type_name(static_cast<std::uint32_t>(n.type())));
    }
    if ((k.kind == SlotKind::kCollective || k.kind == SlotKind::kSend || k.kind == SlotKind::kRecv) &&
        !s.has_comm_size) {
      fail("{}: node {}: a communication node without comm_size", path, n.id());
    }
    if (resolution_ > 1) {
      const double main = s.has_comm_size                                                 ? v.comm_size
                          : s.has_num_ops                                                 ? v.num_ops
                          : k.kind == SlotKind::kMemLoad || k.kind == SlotKind::kMemStore ? v.tensor_size
                                                                                          : v.duration;
      s.size_class = main >= 1 ? static_cast<std::int64_t>(std::floor(std::log(main) / std::log(resolution_))) + 1 : 0;
    }
    return s;
  }

  std::uint32_t intern(const NodeShape& s) {
    const auto [it, fresh] = symbols_.emplace(symbol_key(s), static_cast<std::uint32_t>(shapes_of_symbols_.size()));
    if (fresh) shapes_of_symbols_.push_back(s);
    return it->second;
  }

  // Turns a loop tree into the model's program, slots in program order. Loops are numbered in
  // pre-order from 1 (0 is the step itself); each gets its repetitions per step and the slots
  // directly in its body.
  void to_program(const std::vector<LoopItem>& tree, std::vector<ProgramItem>& out, RankClass& c,
                  std::vector<std::uint32_t>& slot_symbols, std::vector<std::uint64_t>& loop_reps,
                  std::vector<std::vector<std::size_t>>& loop_slots, std::size_t loop, std::uint64_t reps) {
    for (const LoopItem& t : tree) {
      if (!t.is_loop()) {
        ProgramItem item;
        item.slot = static_cast<std::int64_t>(c.slots.size());
        const NodeShape& shape = shapes_of_symbols_[t.symbol];
        c.slots.push_back(shape.slot);
        slot_symbols.push_back(t.symbol);
        loop_slots[loop].push_back(c.slots.size() - 1);
        out.push_back(std::move(item));
        continue;
      }
      ProgramItem item;
      item.count = t.count;
      out.push_back(std::move(item));
      const std::size_t id = loop_reps.size();
      loop_reps.push_back(reps * t.count);
      loop_slots.emplace_back();
      to_program(t.body, out.back().body, c, slot_symbols, loop_reps, loop_slots, id, reps * t.count);
    }
  }

  RankClass build_class(const std::vector<std::uint32_t>& symbols, const std::vector<std::size_t>& ranks,
                        const std::vector<std::vector<NodeValues>>& values, LearnReport& report) {
    RankClass c;
    c.ranks.assign(ranks.begin(), ranks.end());
    const std::vector<LoopItem> tree = find_loops(symbols);
    std::vector<std::uint32_t> slot_symbols;
    std::vector<std::uint64_t> loop_reps = {1};  // loop 0: the step
    std::vector<std::vector<std::size_t>> loop_slots(1);
    to_program(tree, c.program, c, slot_symbols, loop_reps, loop_slots, 0, 1);
    // Pointers into the nested vectors are taken once the tree is complete.
    std::vector<ProgramItem*> loop_items(loop_reps.size(), nullptr);
    std::size_t next_loop = 1;
    link_loops(c.program, loop_items, next_loop);
    report.slots += c.slots.size();
    report.loops += loop_reps.size() - 1;
    // The slot of each node of the expanded step.
    std::vector<std::size_t> node_slot;
    node_slot.reserve(symbols.size());
    place(c.program, node_slot);
    // Values per slot and field, rank-major, then in repetition order (the expansion's).
    const std::size_t slots = c.slots.size();
    std::vector<std::array<std::vector<double>, 4>> samples(slots);
    for (const std::size_t r : ranks) {
      for (std::size_t i = 0; i < node_slot.size(); ++i) {
        const NodeValues& v = values[r][i];
        auto& s = samples[node_slot[i]];
        s[0].push_back(v.duration);
        s[1].push_back(v.num_ops);
        s[2].push_back(v.tensor_size);
        s[3].push_back(v.comm_size);
      }
    }
    std::vector<int> primary(slots, -1);  // the first varying field of each slot
    for (std::size_t s = 0; s < slots; ++s) {
      const NodeShape& shape = shapes_of_symbols_[slot_symbols[s]];
      Slot& slot = c.slots[s];
      const bool has[4] = {shape.has_duration, shape.has_num_ops, shape.has_tensor_size, shape.has_comm_size};
      std::optional<ValueDistribution>* into[4] = {&slot.duration_us, &slot.num_ops, &slot.tensor_size,
                                                   &slot.comm_size};
      for (int f = 0; f < 4; ++f) {
        if (!has[f]) continue;
        *into[f] = summarise(samples[s][static_cast<std::size_t>(f)]);
        if (primary[s] < 0 && !(*into[f])->constant()) primary[s] = f;
      }
    }
    // Rank correlations per loop: the repetition index and each varying slot of the body.
    for (std::size_t l = 1; l < loop_reps.size(); ++l) {
      std::vector<std::size_t> varying;
      for (const std::size_t s : loop_slots[l]) {
        if (primary[s] >= 0) varying.push_back(s);
      }
      if (varying.empty()) continue;
      std::vector<std::vector<double>> columns;
      std::vector<double> position;
      for (std::size_t k = 0; k < ranks.size(); ++k) {
        for (std::uint64_t rep = 0; rep < loop_reps[l]; ++rep) position.push_back(static_cast<double>(rep));
      }
      columns.push_back(std::move(position));
      for (const std::size_t s : varying) columns.push_back(samples[s][static_cast<std::size_t>(primary[s])]);
      loop_items[l]->correlation = normal_score_correlation(columns);
    }
    return c;
  }

  static void link_loops(std::vector<ProgramItem>& program, std::vector<ProgramItem*>& loop_items, std::size_t& next) {
    for (ProgramItem& item : program) {
      if (!item.is_loop()) continue;
      loop_items[next++] = &item;
      link_loops(item.body, loop_items, next);
    }
  }

  static void place(const std::vector<ProgramItem>& program, std::vector<std::size_t>& node_slot) {
    for (const ProgramItem& item : program) {
      if (!item.is_loop()) {
        node_slot.push_back(static_cast<std::size_t>(item.slot));
        continue;
      }
      for (std::uint64_t k = 0; k < item.count; ++k) place(item.body, node_slot);
    }
  }

  std::string prefix_;
  double resolution_;
  std::size_t npus_ = 0;
  Groups groups_;
  std::map<std::string, std::size_t> group_index_;
  std::vector<std::vector<std::uint64_t>> group_members_;
  std::vector<std::size_t> group_shape_index_;
  std::vector<std::vector<std::int64_t>> shapes_;
  std::unordered_map<std::string, std::uint32_t> symbols_;
  std::vector<NodeShape> shapes_of_symbols_;
};

}  // namespace

SynthesisModel learn_model(const std::string& in_prefix, const std::string& groups_path, double resolution,
                           LearnReport& report) {
  if (!(resolution == 0 || (resolution > 1 && resolution <= 1e6))) {
    fail("--resolution {}: expected 0 (structure only) or a factor above 1", resolution);
  }
  Learner learner(in_prefix, groups_path, resolution);
  return learner.run(report);
}

}  // namespace chakrasim::tools
