// The reference converter's graphs (docs/chakra-format.md §3), rebuilt here pass by pass. Where
// it fails or writes a wrong graph, this one differs, and each difference is named at its line:
//  - blank lines (a trailing newline too many, a gap between layers) are skipped, not fatal;
//  - CRLF files parse the same as LF ones (the reference did this too, through Python's
//    universal newlines, which also turn the copied `input_file` text into LF; kept);
//  - a NONE comm makes no node, and the nodes that would have waited on it wait on the compute
//    that would have fed it; the reference writes a 0-byte ALL_REDUCE named ..._NONE. DATA keeps
//    the reference's node, because golden datanone pins it;
//  - an unknown comm type is an error; the reference silently writes ALL_REDUCE;
//  - the layer count on line 2 must match the layer lines; the reference uses it only to find
//    the first layer in MODEL and the HYBRID modes, and crashes or adds a stray comm otherwise;
//  - HYBRID_DLRM's last bottom layer must be a layer from 1 to L-1 (0 and -1 crash the
//    reference), and a first layer whose forward comm is not ALLTOALL gives no forward
//    all-to-all to wait for (the reference crashes);
//  - negative times and sizes and values beyond int64 are errors (the reference crashes on a
//    negative time and writes a negative size), as are lines that are not UTF-8 (a trace with
//    such a string is one protobuf cannot read back).
// The kinds the reference rejects are converted in text_hybrid.cc.
#include "tools/text/text_converter.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "chakra/trace_builder.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/parse_number.h"
#include "core/read_file.h"
#include "core/resources.h"
#include "tools/common/text_format.h"
#include "tools/text/text_workload.h"

namespace chakrasim::tools {
namespace {

using text::Layer;
using text::Parallelism;
using text::parse_count;
using text::parse_workload;
using text::Phase;
using text::with_universal_newlines;
using text::Workload;
using Id = std::uint64_t;
using Deps = std::vector<Id>;

struct CommName {
  const char* keyword;
  chakra::CommType type;
};
// NONE maps to ALL_REDUCE only for DATA, which writes it (see the top of this file).
constexpr std::array<CommName, 5> kCommTypes{{{"ALLREDUCE", chakra::CommType::kAllReduce},
                                              {"ALLTOALL", chakra::CommType::kAllToAll},
                                              {"ALLGATHER", chakra::CommType::kAllGather},
                                              {"REDUCESCATTER", chakra::CommType::kReduceScatter},
                                              {"NONE", chakra::CommType::kAllReduce}}};

// The nodes of one layer in the current pass; until they are made again they are the previous
// pass's, which is what the forward pass depends on.
struct LayerNodes {
  std::optional<Id> fwd, fwd_comm, ig, ig_comm, wg, wg_comm;
};

void add_dep(Deps& deps, std::optional<Id> id) {
  if (id) deps.push_back(*id);
}

// Writes one rank's passes into a TraceBuilder, in the reference's node order.
class RankWriter {
 public:
  RankWriter(const Workload& w, chakra::TraceBuilder& out) : w_(w), out_(out), nodes_(w.layers.size()) {}

  void pass() {
    switch (w_.kind) {
      case Parallelism::kMicro: return micro();
      case Parallelism::kData: return data();
      case Parallelism::kModel: return model();
      case Parallelism::kHybridDataModel: return hybrid("_IG_COMM_");
      case Parallelism::kHybridModelData: return hybrid("");
      case Parallelism::kHybridDlrm: return dlrm();
      case Parallelism::kHybrid: return;  // text::convert_hybrid writes these; never here
    }
  }

 private:
  Id comp(const Layer& l, const char* phase, std::uint64_t micros, const Deps& deps) {
    chakra::Node& node = out_.add(chakra::NodeType::kComp, "COMP_NODE_" + l.name + "_" + phase);
    for (Id d : deps) node.add_data_deps(d);
    node.set_duration_micros(micros);
    return node.id();
  }

  // A collective named after `label`, or nothing for NONE (outside DATA: see the file's top).
  std::optional<Id> comm(const std::string& label, const Phase& phase, const Deps& deps) {
    if (phase.comm_type == "NONE" && w_.kind != Parallelism::kData) return std::nullopt;
    const chakra::CommType type = text::comm_type_of(phase.comm_type).value_or(chakra::CommType::kAllReduce);
    chakra::Node& node = out_.add(chakra::NodeType::kCommColl, "COMM_COLL_NODE_" + label + "_" + phase.comm_type);
    for (Id d : deps) node.add_data_deps(d);
    *node.add_attr() = chakra::make_int64("comm_type", static_cast<std::int64_t>(type));
    *node.add_attr() = chakra::make_int64("comm_size", phase.comm_bytes);
    return node.id();
  }

  std::size_t size() const { return w_.layers.size(); }
  const Layer& layer(std::size_t i) const { return w_.layers[i]; }
  // A comm's node, or where it was NONE, the compute that would have fed it.
  static std::optional<Id> comm_or(std::optional<Id> comm, std::optional<Id> compute) { return comm ? comm : compute; }

  void micro() {
    for (const Layer& l : w_.layers) comm(l.name, l.wg, {});
  }

  // FWD(i) <- FWD(i-1), WGCOMM(i) of the last pass; backward from the last layer:
  // WG(i) <- last FWD or IG(i+1); WGCOMM(i) <- WG(i); IG(i) <- WG(i) for i > 0.
  void data() {
    for (std::size_t i = 0; i < size(); ++i) {
      Deps deps;
      if (i > 0) add_dep(deps, nodes_[i - 1].fwd);
      add_dep(deps, nodes_[i].wg_comm);
      nodes_[i].fwd = comp(layer(i), "FWD", layer(i).fwd.compute_micros, deps);
    }
    for (std::size_t i = size(); i-- > 0;) {
      LayerNodes& n = nodes_[i];
      n.wg = comp(layer(i), "BWD_WG", layer(i).wg.compute_micros, {*(i + 1 == size() ? n.fwd : nodes_[i + 1].ig)});
      n.wg_comm = comm(layer(i).name, layer(i).wg, {*n.wg});
      if (i > 0) n.ig = comp(layer(i), "BWD_IG", layer(i).ig.compute_micros, {*n.wg});
    }
  }

  // The backward pass MODEL and the HYBRID modes share: IG(i) <- FWDCOMM of the last layer, or
  // WG(i+1) and IGCOMM(i+1); IGCOMM(i) <- IG(i) for i > 0; WG(i) <- IG(i); then, with
  // `wg_comm`, WGCOMM(i) <- WG(i).
  void model_backward(const std::string& ig_comm_suffix, bool wg_comm) {
    for (std::size_t i = size(); i-- > 0;) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      if (i + 1 == size()) {
        add_dep(deps, comm_or(n.fwd_comm, n.fwd));
      } else {
        add_dep(deps, nodes_[i + 1].wg);
        add_dep(deps, nodes_[i + 1].ig_comm);
      }
      n.ig = comp(layer(i), "BWD_IG", layer(i).ig.compute_micros, deps);
      // The reference skips the first layer's IGCOMM by testing against line 2's count, which
      // must here equal the layer lines.
      n.ig_comm = i > 0 ? comm(layer(i).name + ig_comm_suffix, layer(i).ig, {*n.ig}) : std::nullopt;
      n.wg = comp(layer(i), "BWD_WG", layer(i).wg.compute_micros, {*n.ig});
      if (wg_comm) n.wg_comm = comm(layer(i).name, layer(i).wg, {*n.wg});
    }
  }

  // FWD(i) <- FWDCOMM(i-1), WG(i) of the last pass; FWDCOMM(i) <- FWD(i).
  void model() {
    for (std::size_t i = 0; i < size(); ++i) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      if (i > 0) add_dep(deps, comm_or(nodes_[i - 1].fwd_comm, nodes_[i - 1].fwd));
      add_dep(deps, n.wg);
      n.fwd = comp(layer(i), "FWD", layer(i).fwd.compute_micros, deps);
      n.fwd_comm = comm(layer(i).name, layer(i).fwd, {*n.fwd});
    }
    model_backward("", false);
  }

  // As MODEL, but FWD(i) waits on WGCOMM(i) of the last pass first, and WG comms are made.
  void hybrid(const std::string& ig_comm_suffix) {
    for (std::size_t i = 0; i < size(); ++i) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      add_dep(deps, comm_or(n.wg_comm, n.wg));
      if (i > 0) add_dep(deps, comm_or(nodes_[i - 1].fwd_comm, nodes_[i - 1].fwd));
      n.fwd = comp(layer(i), "FWD", layer(i).fwd.compute_micros, deps);
      n.fwd_comm = comm(layer(i).name, layer(i).fwd, {*n.fwd});
    }
    model_backward(ig_comm_suffix, true);
  }

  // B = last bottom layer. FWD(i) <- WGCOMM(i) (else WG(i)) of the last pass, FWD(i-1), and for
  // i == B the first layer's forward all-to-all; only ALLTOALL forward comms are made.
  // Backward: WG(i) <- last FWD, or IG(i+1) and the IGCOMM stored on layer i; WGCOMM(i) <- WG(i);
  // IG(i) <- WG(i) for i > 0; at i == B+1 the first layer's backward all-to-all <- IG(i).
  void dlrm() {
    const std::size_t bottom = w_.last_bottom_layer;
    for (std::size_t i = 0; i < size(); ++i) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      add_dep(deps, comm_or(n.wg_comm, n.wg));
      if (i > 0) add_dep(deps, nodes_[i - 1].fwd);
      // Fix: the reference crashes here when the first layer made no all-to-all.
      if (i == bottom) add_dep(deps, nodes_[0].fwd_comm);
      n.fwd = comp(layer(i), "FWD", layer(i).fwd.compute_micros, deps);
      if (layer(i).fwd.comm_type == "ALLTOALL") n.fwd_comm = comm(layer(i).name, layer(i).fwd, {*n.fwd});
    }
    for (std::size_t i = size(); i-- > 0;) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      if (i + 1 == size()) {
        add_dep(deps, n.fwd);
      } else {
        add_dep(deps, nodes_[i + 1].ig);
        add_dep(deps, n.ig_comm);
      }
      n.wg = comp(layer(i), "BWD_WG", layer(i).wg.compute_micros, deps);
      n.wg_comm = comm(layer(i).name, layer(i).wg, {*n.wg});
      if (i > 0) n.ig = comp(layer(i), "BWD_IG", layer(i).ig.compute_micros, {*n.wg});
      if (i == bottom + 1) nodes_[0].ig_comm = comm(layer(0).name, layer(0).ig, {*n.ig});
    }
  }

  const Workload& w_;
  chakra::TraceBuilder& out_;
  std::vector<LayerNodes> nodes_;
};

void check_counts(const TextOptions& options) {
  if (options.npus < 1) fail("--npus is {}; expected at least 1 NPU", options.npus);
  if (options.passes < 1) fail("--passes is {}; expected at least 1 pass", options.passes);
}

}  // namespace

namespace text {

std::optional<std::uint64_t> parse_count(std::string_view word) {
  if (!word.empty() && word.front() == '+') word.remove_prefix(1);  // as Python's int() allows
  return parse_number<std::uint64_t>(word);
}

std::optional<chakra::CommType> comm_type_of(std::string_view keyword) {
  if (keyword == "NONE") return std::nullopt;
  for (const CommName& c : kCommTypes) {
    if (keyword == c.keyword) return c.type;
  }
  return std::nullopt;
}

void check_comm_type(const std::string& source, const Layer& layer, const Phase& phase, int field, const char* what) {
  for (const CommName& c : kCommTypes) {
    if (phase.comm_type == c.keyword) return;
  }
  // Fix: the reference writes any unknown type as ALL_REDUCE.
  fail("{}: line {}: layer \"{}\": field {} ({} comm type) is \"{}\"; expected ALLREDUCE, ALLGATHER, "
       "REDUCESCATTER, ALLTOALL or NONE",
       source, layer.line, layer.name, field, what, phase.comm_type);
}

// Refuses runs whose traces would not fit in memory, or whose ids would not fit in 64 bits.
void check_trace_size(const TextOptions& options, std::size_t layers, std::uint64_t nodes_per_pass) {
  // A protobuf node with its name and dependencies takes about this much memory.
  constexpr std::uint64_t kBytesPerNode = 256;
  const std::uint64_t available = available_memory_bytes();
  const auto passes = static_cast<std::uint64_t>(options.passes);
  if (passes > available / kBytesPerNode / nodes_per_pass) {
    fail("--passes {}: one rank's trace ({} layers x {} passes) would need more than the {} of memory "
         "available; expected at most {} passes",
         options.passes, layers, options.passes, format_bytes(available), available / kBytesPerNode / nodes_per_pass);
  }
  const auto npus = static_cast<std::uint64_t>(options.npus);
  if (npus > std::numeric_limits<std::uint64_t>::max() / (passes * nodes_per_pass)) {
    fail("--npus {} x --passes {}: the node ids, which run on across rank files, would not fit in 64 bits",
         options.npus, options.passes);
  }
}

}  // namespace text

std::string convert_text_each(const std::string& raw_text, const std::string& source, const TextOptions& options,
                              const TextRankSink& sink) {
  check_counts(options);
  const std::string text = with_universal_newlines(raw_text);
  const Workload workload = parse_workload(text, source);
  const TextRankSink out = options.layer_shapes.empty()
                               ? sink
                               : text::with_layer_shapes(workload.layers, options.layer_shapes, source, sink);

  chakra::GlobalMetadata metadata;
  *metadata.add_attr() = chakra::make_string("schema", kTextSchema);
  *metadata.add_attr() = chakra::make_string("input_file", text);
  if (workload.kind == Parallelism::kHybrid) {
    return text::convert_hybrid(workload.head, workload.layers, source, options, metadata, out);
  }
  if (options.model_parallel_group != 0) {
    fail("{}: --model-parallel-group {} applies to {} only; {} has no model-parallel groups", source,
         options.model_parallel_group, text::kHybridList, workload.head[0]);
  }
  // At most a compute and a comm per phase.
  text::check_trace_size(options, workload.layers.size(), 6 * std::uint64_t{workload.layers.size()});
  Id next_id = 0;
  for (std::size_t rank = 0; rank < static_cast<std::size_t>(options.npus); ++rank) {
    chakra::TraceBuilder builder("");
    builder.trace().metadata = metadata;
    builder.set_next_id(next_id);  // the reference keeps one id counter for all rank files
    RankWriter writer(workload, builder);
    for (std::int64_t p = 0; p < options.passes; ++p) writer.pass();
    next_id = builder.next_id();
    out(rank, builder.trace());
  }
  return {};
}

std::vector<chakra::Trace> convert_text(const std::string& text, const std::string& source,
                                        const TextOptions& options) {
  std::vector<chakra::Trace> traces;
  convert_text_each(text, source, options, [&](std::size_t, const chakra::Trace& t) { traces.push_back(t); });
  return traces;
}

std::string text_groups_path(const std::string& prefix) { return prefix + ".groups.json"; }

TextFiles convert_text_file(const std::string& text_path, const std::string& prefix, const TextOptions& options) {
  check_counts(options);
  const std::string text =
      read_file(text_path, "text workload", "an ASTRA-sim 1.0 text workload file", kDescriptionFileMaxBytes);
  TextFiles files;
  const std::string groups =
      convert_text_each(text, text_path, options, [&](std::size_t rank, const chakra::Trace& trace) {
        if (rank == 0) {  // the ranks' traces are alike: rank 0's size x --npus is the output's
          const auto npus = static_cast<std::uint64_t>(options.npus);
          require_output_space(std::filesystem::path(prefix).parent_path().string(), npus + 1,
                               static_cast<double>(chakra::serialized_size(trace)) * static_cast<double>(npus),
                               fmt::format("--npus {}: one trace file per NPU", options.npus));
        }
        chakra::write_trace(chakra::rank_path(prefix, rank), trace);
        ++files.ranks;
      });
  if (!groups.empty()) {
    files.groups_path = text_groups_path(prefix);
    write_file_atomically(files.groups_path, groups, "the communicator-group file");
  }
  return files;
}

}  // namespace chakrasim::tools
