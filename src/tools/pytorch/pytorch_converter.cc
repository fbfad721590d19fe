#include "tools/pytorch/pytorch_converter.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/error.h"
#include "core/json_input.h"
#include "core/read_file.h"
#include "tools/common/text_format.h"
#include "tools/pytorch/pytorch_ops.h"
#include "tools/pytorch/pytorch_repr.h"
#include "tools/pytorch/pytorch_shapes.h"

namespace chakrasim::tools {
namespace {

using pytorch::as_int64;
using pytorch::contains;
using pytorch::Json;
using pytorch::kAttrList;
using pytorch::kIntAttrCount;
using pytorch::kIntAttrs;
using pytorch::Op;
using pytorch::OpKind;

class Converter {
 public:
  Converter(const Json& root, const std::string& source, const PytorchOptions& options)
      : root_(root), source_(source), options_(options) {}

  chakra::Trace run() {
    chakra::Trace trace;
    pytorch::read_metadata(root_, source_, trace.metadata);
    ops_ = pytorch::read_ops(root_, source_);
    convert_ops();
    for (std::size_t n = 0; n < out_.size(); ++n) {
      if (is_thread_root(ops_[out_[n].op])) chain_from(n);
    }
    // Not in the reference: an op whose caller is not in the trace roots a call tree of its own.
    // trace_link keeps such ops (the reference linker drops everything outside node 1's tree), so
    // they get the same chain as a thread's ops instead of being dropped for having no dependency.
    for (std::size_t n = 0; n < out_.size(); ++n) {
      const Op& op = ops_[out_[n].op];
      if (!op.parent && !is_thread_root(op)) chain_from(n);
    }
    drop_dangling();
    std::vector<std::size_t> order;
    for (std::size_t n = 0; n < out_.size(); ++n) {
      if (!out_[n].dropped) order.push_back(n);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return id_of(a) < id_of(b); });
    for (std::size_t n : order) {
      Out& o = out_[n];
      for (std::uint64_t d : o.ctrl) o.node.add_ctrl_deps(d);
      for (std::uint64_t d : o.data) o.node.add_data_deps(d);
      trace.nodes.push_back(std::move(o.node));
    }
    // Data and ctrl dependencies must form a DAG, as the simulator follows both: the graph
    // checks that without recursion (the reference's recursive check fails near 1,000 nodes).
    chakra::Graph::build(trace, source_);
    return trace;
  }

 private:
  // A node of the output, with its dependencies kept aside until it is written.
  struct Out {
    chakra::Node node;
    std::size_t op = 0;
    std::vector<std::uint64_t> ctrl, data;
    bool dropped = false;
  };

  [[noreturn]] void bad_node(const Op& op, const std::string& what) const { pytorch::fail_node(source_, op, what); }

  std::uint64_t id_of(std::size_t out) const { return ops_[out_[out].op].id; }

  static bool is_thread_root(const Op& op) {
    return op.name == "[pytorch|profiler|execution_trace|thread]" || op.name == "[pytorch|profiler|execution_graph|"
                                                                                "thread]";
  }

  // ---- conversion ---------------------------------------------------------------------------

  void convert_ops() {
    out_of_op_.assign(ops_.size(), kNone);
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind == OpKind::kGpu) continue;  // converted right after the op that launched it
      convert(i);
      for (std::size_t g : ops_[i].gpu_children) {
        Out& o = convert(g);
        add_comm_attrs(o);
        if (options_.op_shapes && o.node.type() == ChakraProtoMsg::COMP_NODE) add_shape(o.node, i);
      }
    }
    for (std::size_t n = 0; n < out_.size(); ++n) by_id_[id_of(n)] = n;
    if (!options_.fix_defects) return;
    // Fixed: every caller in the output, wherever the file lists it.
    for (Out& o : out_) {
      const std::optional<std::size_t> parent = ops_[o.op].parent;
      o.ctrl.clear();
      if (parent && *parent != o.op && out_of_op_[*parent] != kNone) o.ctrl.push_back(ops_[*parent].id);
    }
  }

  // Converts op `i`; again, in place, if it already was (the reference overwrites by id).
  Out& convert(std::size_t i) {
    Op& op = ops_[i];
    for (std::size_t k = 0; k < kIntAttrCount; ++k) {
      if (!op.int_attrs[k]) bad_node(op, fmt::format("attrs has no \"{}\"; expected {}", kIntAttrs[k], kAttrList));
    }
    if (!op.op_schema) bad_node(op, fmt::format("attrs has no \"op_schema\"; expected {}", kAttrList));
    if (out_of_op_[i] == kNone) {
      out_of_op_[i] = out_.size();
      out_.emplace_back();
    }
    Out& o = out_[out_of_op_[i]];
    o = Out{};
    o.op = i;
    // The reference's defect: the caller only when it was converted before this op.
    if (op.parent && *op.parent != i && out_of_op_[*op.parent] != kNone) o.ctrl.push_back(ops_[*op.parent].id);
    chakra::Node& n = o.node;
    n.set_id(op.id);
    n.set_name(op.name);
    n.set_type(node_type(op));
    n.set_duration_micros(op.duration_micros);
    using Io = std::pair<const char*, ChakraProtoMsg::IOInfo*>;
    for (const auto& [key, io] : {Io{"inputs", n.mutable_inputs()}, Io{"outputs", n.mutable_outputs()}}) {
      const Json& j = (*op.json)[key];
      io->set_values(pyrepr::python_str(j["values"]));
      io->set_shapes(pyrepr::python_str(j["shapes"]));
      io->set_types(pyrepr::python_str(j["types"]));
    }
    for (std::size_t k = 0; k < kIntAttrCount; ++k) *n.add_attr() = chakra::make_int64(kIntAttrs[k], *op.int_attrs[k]);
    *n.add_attr() = chakra::make_string("op_schema", *op.op_schema);
    *n.add_attr() = chakra::make_bool("is_cpu_op", !op.gpu);
    if (op.stream) *n.add_attr() = chakra::make_int64("stream", *op.stream);
    return o;
  }

  const Op& caller_of(const Op& op, const char* role) const {
    if (!op.parent) bad_node(op, fmt::format("its caller (ctrl_deps) is not in the trace; expected {}", role));
    return ops_[*op.parent];
  }

  ChakraProtoMsg::NodeType node_type(Op& op) const {
    if (op.kind == OpKind::kMetadata) return ChakraProtoMsg::METADATA_NODE;
    if (!op.gpu) return ChakraProtoMsg::COMP_NODE;
    if (contains(op.name, "ncclDevKernel_SendRecv")) {
      // Which point-to-point this is shows in the name of the op that called NCCL.
      const Op& parent = caller_of(op, "the op that launched this kernel");
      std::string keyword = parent.name;
      if (parent.name == "record_param_comms") {
        keyword = caller_of(parent, "the nccl: op that called it").name;
        if (!parent.pg_name.empty()) op.pg_name = parent.pg_name;
      }
      if (contains(keyword, "send")) return ChakraProtoMsg::COMM_SEND_NODE;
      if (contains(keyword, "recv")) return ChakraProtoMsg::COMM_RECV_NODE;
      if (contains(keyword, "nccl:all_to_all")) return ChakraProtoMsg::COMM_COLL_NODE;
    }
    if (contains(op.name, "ncclKernel") || contains(op.name, "ncclDevKernel")) return ChakraProtoMsg::COMM_COLL_NODE;
    return ChakraProtoMsg::COMP_NODE;
  }

  // The kernel gets the shape of the nearest op up its call chain that has one (linear calls
  // addmm, which launches the kernel), if no earlier kernel of that op took it: a product that
  // runs as several kernels is counted once.
  void add_shape(chakra::Node& kernel, std::size_t launcher) {
    std::optional<std::size_t> at = launcher;
    for (int depth = 0; at && depth < 4; ++depth, at = ops_[*at].parent) {
      const std::optional<chakra::OpShape> shape = pytorch::shape_of_op(ops_[*at]);
      if (!shape) continue;
      if (shaped_ops_.insert(*at).second) chakra::add_shape_attributes(kernel, *shape);
      return;
    }
  }

  std::int64_t collective_of(const Op& op) const {
    std::string key;
    for (char c : op.name) {
      if (c != '_' && c != '-') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    static const std::pair<const char*, ChakraProtoMsg::CollectiveCommType> kKinds[] =
        {{"allreduce", ChakraProtoMsg::ALL_REDUCE},
         {"alltoall", ChakraProtoMsg::ALL_TO_ALL},
         {"allgather", ChakraProtoMsg::ALL_GATHER},
         {"reducescatter", ChakraProtoMsg::REDUCE_SCATTER},
         {"broadcast", ChakraProtoMsg::BROADCAST}};
    for (const auto& [word, kind] : kKinds) {
      if (contains(key, word)) return kind;
    }
    if (contains(op.name, "ncclDevKernel_SendRecv")) return ChakraProtoMsg::ALL_TO_ALL;
    bad_node(op, "unknown NCCL kernel: cannot tell its collective; expected a name containing AllReduce, AllToAll, "
                 "AllGather, ReduceScatter, Broadcast or SendRecv");
  }

  // Bytes of the tensor inputs; a tensor is [id, storage id, offset, elements, bytes per
  // element, device], and a GenericList[Tensor...] input is a list of them.
  std::int64_t comm_size_of(const Op& op) const {
    const Json& values = (*op.json)["inputs"]["values"];
    const Json& types = (*op.json)["inputs"]["types"];
    if (!values.is_array() || !types.is_array())
      bad_node(op, "inputs.values or inputs.types is not a list; expected lists to size the message");
    std::int64_t bytes = 0;
    auto add = [&](const Json& tensor, std::size_t k) {
      const auto count = tensor.is_array() && tensor.size() >= 5 ? as_int64(tensor[3]) : std::nullopt;
      const auto width = count ? as_int64(tensor[4]) : std::nullopt;
      if (!width || *count < 0 || *width < 0 ||
          (*width > 0 && *count > (std::numeric_limits<std::int64_t>::max() - bytes) / *width)) {
        bad_node(op, fmt::format("inputs.values[{}] holds {}; expected a tensor [id, storage id, offset, elements, "
                                 "bytes per element, device]",
                                 k, json_excerpt(tensor)));
      }
      bytes += *count * *width;
    };
    for (std::size_t k = 0; k < std::min(values.size(), types.size()); ++k) {
      if (!types[k].is_string())
        bad_node(op, fmt::format("inputs.types[{}] is {}; expected a type name", k, json_excerpt(types[k])));
      const std::string& type = types[k].get_ref<const std::string&>();
      if (!contains(type, "Tensor")) continue;
      if (type.rfind("GenericList[Tensor", 0) != 0) {
        add(values[k], k);
        continue;
      }
      if (!values[k].is_array())
        bad_node(op, fmt::format("inputs.values[{}] is {}; expected a list of tensors", k, json_excerpt(values[k])));
      for (const Json& t : values[k]) add(t, k);
    }
    return bytes;
  }

  void add_comm_attrs(Out& o) {
    const Op& op = ops_[o.op];
    chakra::Node& n = o.node;
    const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
    const bool p2p = send || n.type() == ChakraProtoMsg::COMM_RECV_NODE;
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE && !p2p) return;
    if (!p2p) *n.add_attr() = chakra::make_int64("comm_type", collective_of(op));
    *n.add_attr() = chakra::make_int64("comm_size", comm_size_of(op));
    if (!op.pg_name.empty()) *n.add_attr() = chakra::make_string("pg_name", op.pg_name);
    if (!p2p || !options_.fix_defects) return;
    *n.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", peer_of(op, send));
    *n.add_attr() = chakra::make_int32("comm_tag", 0);
  }

  // The peer's global rank. PyTorch records a send or receive as record_param_comms(..., peer's
  // rank in the group (Int), "send" | "recv" (String), ...); the group's rank list makes it global.
  std::int32_t peer_of(const Op& kernel, bool send) const {
    const char* word = send ? "send" : "recv";
    auto rank_argument = [&](const Op& op) -> std::optional<std::int64_t> {
      const Json& values = (*op.json)["inputs"]["values"];
      const Json& types = (*op.json)["inputs"]["types"];
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
                                   "rank "
                                   "(Int) before \"{}\" (String); convert without --fix-defects to leave it out",
                                   send ? "send's" : "receive's", word));
    }
    std::int64_t global = *local;
    const auto group = process_groups().find(kernel.pg_name);
    if (group != process_groups().end() && !group->second.empty()) {
      if (static_cast<std::uint64_t>(*local) >= group->second.size()) {
        bad_node(kernel, fmt::format("peer rank {} is outside process group \"{}\" of {} ranks", *local, kernel.pg_name,
                                     group->second.size()));
      }
      global = group->second[static_cast<std::size_t>(*local)];
    }
    if (global > std::numeric_limits<std::int32_t>::max())
      bad_node(kernel, fmt::format("peer rank {} does not fit in an int32", global));
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
      const std::string& text = values[0].get_ref<const std::string&>();
      // Like a description that does not parse, one nested too deeply names no groups.
      const Json list = json_too_deep_at(text) ? Json() : Json::parse(text, nullptr, false);
      for (std::size_t k = 0; list.is_array() && k < list.size(); ++k) {
        const Json& pg = list[k];
        if (!pg.is_object() || !pg.contains("pg_name")) continue;
        std::vector<std::int64_t>& ranks = (*groups_)[pyrepr::python_str(pg["pg_name"])];
        for (std::size_t r = 0; pg.contains("ranks") && pg["ranks"].is_array() && r < pg["ranks"].size(); ++r) {
          if (const auto rank = as_int64(pg["ranks"][r])) ranks.push_back(*rank);
        }
      }
    }
    return *groups_;
  }

  // ---- dependencies -------------------------------------------------------------------------

  static void add_dep(std::vector<std::uint64_t>& deps, std::uint64_t id) {
    if (std::find(deps.begin(), deps.end(), id) == deps.end()) deps.push_back(id);
  }

  // The reference's call-tree walk from one root, callees in ascending id: a CPU op depends on
  // its inter-thread dependency and the CPU op walked before it; a kernel on the op walked
  // before it, except that sibling kernels of one CPU op all depend on that op.
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
        if (last_any) add_dep(o.data, id_of(*last_any));
        last_any = last_cpu;
      } else {
        if (op.inter_thread_dep != 0) add_dep(o.data, op.inter_thread_dep);
        if (last_cpu) add_dep(o.data, id_of(*last_cpu));
        last_cpu = last_any = n;
      }
      // Fixed: the reference compares start times it never sets, so it adds no sync dependency;
      // here one is added on a node of the output that started earlier (or when a time is unknown).
      for (std::uint64_t dep : op.sync_deps) {
        const auto found = by_id_.find(dep);
        if (found == by_id_.end()) continue;
        const Op& earlier = ops_[out_[found->second].op];
        if (!earlier.ts || !op.ts || *earlier.ts < *op.ts) add_dep(o.data, dep);
      }
      for (auto child = op.children.rbegin(); child != op.children.rend(); ++child) {
        const std::size_t c = out_of_op_[*child];
        if (c != kNone && visited_[c] != walk_) stack.push_back(c);
      }
    }
  }

  // Nodes with no data dependency that no node depends on go, as in the reference.
  void drop_dangling() {
    std::vector<bool> needed(out_.size(), false);
    for (Out& o : out_) {
      for (std::uint64_t d : o.data) {
        const auto found = by_id_.find(d);
        if (found == by_id_.end()) {
          bad_node(ops_[o.op], fmt::format("it depends on node {} (its inter_thread_dep), which is not in the output; "
                                           "expected the id of a CPU op of the trace",
                                           d));
        }
        needed[found->second] = true;
      }
    }
    for (std::size_t n = 0; n < out_.size(); ++n) out_[n].dropped = out_[n].data.empty() && !needed[n];
    // The reference writes a ctrl dependency on a dropped caller (trace_link's process node, id 0
    // and its own caller, is one: every thread node names it). A dependency on a node that is not
    // in the file can never be met, so it goes; the goldens hold no such reference.
    for (Out& o : out_) std::erase_if(o.ctrl, [&](std::uint64_t d) { return out_[by_id_.at(d)].dropped; });
  }

  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  const Json& root_;
  const std::string& source_;
  const PytorchOptions& options_;
  std::vector<Op> ops_;                                   // in file order
  std::vector<Out> out_;                                  // in the order converted
  std::vector<std::size_t> out_of_op_;                    // ops_ index -> out_ index, or kNone
  std::unordered_map<std::uint64_t, std::size_t> by_id_;  // id -> out_ index
  std::vector<std::uint32_t> visited_;                    // out_ index -> the last walk that saw it
  std::uint32_t walk_ = 0;
  std::set<std::size_t> shaped_ops_;  // ops whose shape a kernel took
  mutable std::optional<std::map<std::string, std::vector<std::int64_t>>> groups_;
};

}  // namespace

chakra::Trace convert_pytorch(std::string_view json_text, const std::string& source, const PytorchOptions& options) {
  const Json root = pytorch::parse_json(json_text, source);
  return Converter(root, source, options).run();
}

std::size_t convert_pytorch_file(const std::string& json_path, const std::string& et_path,
                                 const PytorchOptions& options) {
  const std::string text =
      read_file(json_path, "PyTorch execution trace", "a PyTorch ET or ET+ JSON file", kTraceFileMaxBytes);
  const chakra::Trace trace = convert_pytorch(text, json_path, options);
  chakra::write_trace(et_path, trace);
  return trace.nodes.size();
}

}  // namespace chakrasim::tools
