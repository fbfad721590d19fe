// The ASTRA-sim 1.0 text kinds the Chakra converter rejects, converted as our extension. Their
// graphs follow the training loops of ASTRA-sim 1.0's Workload layer, one node per step the loop
// waits for; the collectives run over communicator groups instead of network dimensions.
//
// Groups. M = model_parallel_NPU_group (line 1, else --model-parallel-group, else for
// HYBRID_CUSTOMIZED all N NPUs); N must be a multiple of M. A model-parallel group is M ranks, a
// data-parallel group N/M. ASTRA-sim 1.0 puts model parallelism on the low network dimensions
// (HYBRID_TRANSFORMER*, HYBRID_DATA_MODEL: groups of M consecutive ranks, and data-parallel groups
// of the ranks with the same position in theirs), or on the high ones (HYBRID_MODEL_DATA:
// data-parallel groups of N/M consecutive ranks, model-parallel groups of ranks N/M apart). A
// collective whose group is every NPU gets no pg_name (the default, all-NPU communicator); one
// whose group is a single NPU is not written (ASTRA-sim 1.0 finishes a collective over no
// dimension at once). Group ids start at 1, a family of groups at a time (model-parallel, then
// data-parallel; for HYBRID_CUSTOMIZED those of its HYBRID_DATA_MODEL layers before those of its
// HYBRID_MODEL_DATA layers), each family in the order of its first rank; a family no collective
// uses is left out.
//
// Graph, per pass (FWD/IG/WG compute, *COMM their collectives; a NONE comm makes no node and
// whatever would wait on it waits on the compute that would have fed it, as in text_converter.cc):
//  - forward, layer 0..L-1: FWD(i) <- WGCOMM(i) of the last pass, FWDCOMM(i-1) (for i = 0: the
//    last pass's IGCOMM(0)); FWDCOMM(i) <- FWD(i) over the model-parallel group (the loop blocks
//    on it before the next layer);
//  - backward, layer L-1..0: IG(i) <- FWDCOMM(L-1) for the last layer, else WG(i+1) and
//    IGCOMM(i+1) (the loop blocks on the input-gradient comm of the layer above); IGCOMM(i) <- IG(i)
//    over the model-parallel group; WG(i) <- IG(i); WGCOMM(i) <- WG(i) over the data-parallel
//    group, not waited for until the layer's next forward.
// HYBRID_TRANSFORMER writes IGCOMM(0) too (its loop issues it); HYBRID_CUSTOMIZED does not (its
// loop, the HYBRID_DATA_MODEL one, skips it), and takes each layer's groups from field 13:
// DATA (WGCOMM over all NPUs, no forward or input-gradient comm), MODEL (FWDCOMM and IGCOMM over
// all NPUs, no WGCOMM), HYBRID_DATA_MODEL or HYBRID_MODEL_DATA (as above).
// HYBRID_TRANSFORMER_FWD_IN_BCKWD is HYBRID_TRANSFORMER plus recomputation: line 1 lists the
// checkpoint layers (whose inputs the forward pass keeps) and the layers that initiate a
// recomputation, each as `COUNT LAYER...` (0-based). Before IG(i) of an initiating layer i, the
// forward of layers c..i-1 runs again, c the nearest checkpoint below i: FWD_RECOMPUTE(c) waits on
// what IG(i) would have, each FWD_RECOMPUTE(j) is followed by its forward comm, and IG(i) waits on
// the last of them. (ASTRA-sim 1.0 starts the search at i itself and runs on to the next
// initiating layer; for a checkpoint at i, or two initiating layers above one checkpoint, that
// leaves the array or skips layers' backward, so here c < i, and the recomputation ends at i.)
//
// Node names: COMP_NODE_<layer>_<FWD|BWD_IG|BWD_WG|FWD_RECOMPUTE>, and
// COMM_COLL_NODE_<layer>_<phase>_<comm type> for their collectives.
#include <algorithm>

#include "chakra/attributes.h"
#include "chakra/trace_builder.h"
#include "core/error.h"
#include "tools/text/text_hybrid_plan.h"

namespace chakrasim::tools::text {
namespace {

using Id = std::uint64_t;
using Deps = std::vector<Id>;

// The nodes of one layer in the current pass; until they are made again they are the previous
// pass's, which is what the forward pass depends on.
struct LayerNodes {
  std::optional<Id> fwd, fwd_comm, ig, ig_comm, wg, wg_comm;
};

void add_dep(Deps& deps, std::optional<Id> id) {
  if (id) deps.push_back(*id);
}

// A comm's node, or where there is none, the compute that would have fed it.
std::optional<Id> comm_or(std::optional<Id> comm, std::optional<Id> compute) { return comm ? comm : compute; }

// Writes one rank's passes into a TraceBuilder.
class RankWriter {
 public:
  RankWriter(const Plan& plan, const std::vector<Layer>& layers, std::size_t rank, chakra::TraceBuilder& out)
      : plan_(plan), layers_(layers), rank_(rank), out_(out), nodes_(layers.size()) {}

  void pass() {
    forward();
    backward();
  }

 private:
  Id comp(const Layer& l, const char* phase, std::uint64_t micros, const Deps& deps) {
    chakra::Node& node = out_.add(chakra::NodeType::kComp, "COMP_NODE_" + l.name + "_" + phase);
    for (Id d : deps) node.add_data_deps(d);
    node.set_duration_micros(micros);
    return node.id();
  }

  std::optional<Id> comm(const Layer& l, const char* phase_name, const Phase& phase, const Span& span, Id after) {
    const std::optional<chakra::CommType> type = comm_type_of(phase.comm_type);
    if (!type || span.shape == Span::Shape::kNone) return std::nullopt;
    chakra::Node& node =
        out_.add(chakra::NodeType::kCommColl, "COMM_COLL_NODE_" + l.name + "_" + phase_name + "_" + phase.comm_type);
    node.add_data_deps(after);
    *node.add_attr() = chakra::make_int64("comm_type", static_cast<std::int64_t>(*type));
    *node.add_attr() = chakra::make_int64("comm_size", phase.comm_bytes);
    if (span.shape != Span::Shape::kAll) {
      *node.add_attr() = chakra::make_string("pg_name", pg_name_of(plan_.families, span, plan_.npus, rank_));
    }
    return node.id();
  }

  std::size_t size() const { return layers_.size(); }

  void forward() {
    for (std::size_t i = 0; i < size(); ++i) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      add_dep(deps, comm_or(n.wg_comm, n.wg));
      // The loop finishes a pass only when the first layer's input-gradient comm is done.
      add_dep(deps, i == 0 ? n.ig_comm : comm_or(nodes_[i - 1].fwd_comm, nodes_[i - 1].fwd));
      n.fwd = comp(layers_[i], "FWD", layers_[i].fwd.compute_micros, deps);
      n.fwd_comm = comm(layers_[i], "FWD", layers_[i].fwd, plan_.spans[i].fwd, *n.fwd);
    }
  }

  // The forward of layers `from`..`to`-1 again, after `deps`; returns what comes next waits on.
  Deps recompute(std::size_t from, std::size_t to, Deps deps) {
    for (std::size_t j = from; j < to; ++j) {
      const Id f = comp(layers_[j], "FWD_RECOMPUTE", layers_[j].fwd.compute_micros, deps);
      deps = {*comm_or(comm(layers_[j], "FWD_RECOMPUTE", layers_[j].fwd, plan_.spans[j].fwd, f), f)};
    }
    return deps;
  }

  void backward() {
    for (std::size_t i = size(); i-- > 0;) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      if (i + 1 == size()) {
        add_dep(deps, comm_or(n.fwd_comm, n.fwd));
      } else {
        add_dep(deps, nodes_[i + 1].wg);
        add_dep(deps, nodes_[i + 1].ig_comm);
      }
      if (plan_.recompute[i]) deps = recompute(*plan_.recompute[i], i, deps);
      n.ig = comp(layers_[i], "BWD_IG", layers_[i].ig.compute_micros, deps);
      n.ig_comm = i > 0 || plan_.first_layer_ig_comm
                      ? comm(layers_[i], "BWD_IG", layers_[i].ig, plan_.spans[i].ig, *n.ig)
                      : std::nullopt;
      n.wg = comp(layers_[i], "BWD_WG", layers_[i].wg.compute_micros, {*n.ig});
      n.wg_comm = comm(layers_[i], "BWD_WG", layers_[i].wg, plan_.spans[i].wg, *n.wg);
    }
  }

  const Plan& plan_;
  const std::vector<Layer>& layers_;
  std::size_t rank_;
  chakra::TraceBuilder& out_;
  std::vector<LayerNodes> nodes_;
};

}  // namespace

std::string convert_hybrid(const std::vector<std::string_view>& head, const std::vector<Layer>& layers,
                           const std::string& source, const TextOptions& options,
                           const chakra::GlobalMetadata& metadata, const TextRankSink& sink) {
  const Plan plan = plan_hybrid(head, layers, source, options);
  check_trace_size(options, layers.size(), plan.nodes_per_pass);

  Id next_id = 0;
  for (std::size_t rank = 0; rank < plan.npus; ++rank) {
    chakra::TraceBuilder builder("");
    builder.trace().metadata = metadata;
    builder.set_next_id(next_id);  // one id counter for all rank files, as the other modes
    RankWriter writer(plan, layers, rank, builder);
    for (std::int64_t p = 0; p < options.passes; ++p) writer.pass();
    next_id = builder.next_id();
    sink(rank, builder.trace());
  }
  return groups_json(plan.families, plan.npus);
}

}  // namespace chakrasim::tools::text
