// `chakra rescale --tp M` (rescaler.h): the compute re-split over another tensor-parallel size.
// What Megatron divides by TP, and so what scales by old TP / new TP, as generate llm sizes it
// (src/generate/llm/llm_layer.cc, llm_trace.cc):
//  - the GEMMs and attention of every layer, and with sequence parallelism the norms, dropout
//    and residuals too (they run on the rank's 1 / TP of the tokens): every compute node;
//  - a TP all-gather (sequence parallelism gathers the 1 / TP slices of the activations), while
//    a TP all-reduce or reduce-scatter takes the whole activation on every rank and keeps its
//    size;
//  - the gradients of a rank's weights (DP and the tied embedding's EMB all-reduce) and the keys
//    and values context parallelism gathers (CP);
//  - with sequence parallelism, pipeline messages and expert all-to-alls, which carry the rank's
//    slice of the tokens; without it they carry every token and keep their size.
// Expert weights are not split by TP: an EDP reduction keeps its size, but an EDP group holds
// every t, so with ZeRO each rank's slice (its all-gather part, its optimizer share) shrinks.
// Sequence parallelism is on in a trace that has a TP all-gather or reduce-scatter.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "chakra/op_shape.h"
#include "core/error.h"
#include "tools/rescale/rescale_step.h"

namespace chakrasim::tools::rescale {
namespace {

struct TpCounts {
  std::uint64_t compute = 0, resized = 0, kept = 0, dropped = 0, messages = 0, buckets_merged = 0;
};

// How a collective on a group of `kind` changes with TP.
enum class TpRule { kKeep, kScale, kScaleWithSp, kTp };

TpRule rule_for(const std::string& kind, std::uint32_t group, const std::string& names_source) {
  if (kind == "TP") return TpRule::kTp;
  if (kind == "DP" || kind == "EMB" || kind == "CP") return TpRule::kScale;
  if (kind == "EP") return TpRule::kScaleWithSp;
  if (kind == "EDP" || kind == "PP") return TpRule::kKeep;
  fail("{}: group {} is labelled \"{}\"; expected TP, CP, DP, EP, EDP, PP or EMB, to know how --tp resizes its "
       "collectives",
       names_source, group, kind);
}

}  // namespace

Step rescale_tp(TraceSetPtr in, std::uint64_t new_tp) {
  const std::vector<std::uint32_t> tp_groups = groups_named(*in, "TP");
  if (tp_groups.empty()) {
    fail("{}: no group is named \"TP\"; expected the tensor-parallel groups labelled TP (without tensor parallelism "
         "the traces hold no TP collectives for --tp to resize)",
         in->names_source);
  }
  const std::uint64_t old_tp = in->groups.at(tp_groups.front()).size();
  std::set<NpuId> covered;
  for (const std::uint32_t id : tp_groups) {
    std::vector<NpuId> members = in->groups.at(id);
    std::sort(members.begin(), members.end());
    bool ok = old_tp >= 2 && members.size() == old_tp && members.front() % old_tp == 0;
    for (std::uint64_t j = 0; ok && j < members.size(); ++j) {
      ok = members[j] == members.front() + j && covered.insert(members[j]).second;
    }
    if (!ok) {
      fail("{}: TP group {} is not {} consecutive ranks from a multiple of {}; expected the tensor-parallel index "
           "innermost (rank = t + TP x rest)",
           in->groups_source, id, old_tp, old_tp);
    }
  }
  if (covered.size() != in->ranks) {
    fail("{}: the TP groups cover {} of the {} ranks; expected one TP group per {} consecutive ranks",
         in->groups_source, covered.size(), in->ranks, old_tp);
  }

  auto out = std::make_shared<TraceSet>();
  out->ranks = in->ranks / old_tp * new_tp;
  out->groups_source = in->groups_source;
  out->names_source = in->names_source;
  auto groups = std::make_shared<NewGroups>(*in);
  auto spans_tp = std::make_shared<std::set<std::uint32_t>>();  // groups of every t: one new group each
  for (const auto& [id, members] : in->groups) {
    std::set<std::uint64_t> ts, rests;
    for (const NpuId m : members) {
      ts.insert(m % old_tp);
      rests.insert(m / old_tp);
    }
    const auto name = in->names.find(id);
    const bool tp = name != in->names.end() && name->second == "TP";
    if (tp || (ts.size() == old_tp && members.size() == ts.size() * rests.size())) {
      std::vector<NpuId> every_t;
      for (const std::uint64_t rest : rests) {
        for (std::uint64_t t = 0; t < new_tp; ++t) every_t.push_back(static_cast<NpuId>(t + new_tp * rest));
      }
      groups->add(id, 0, std::move(every_t));
      spans_tp->insert(id);
    } else if (ts.size() == 1) {
      // New index t runs old index t mod TP's traces: only those name this group.
      for (std::uint64_t t = *ts.begin(); t < new_tp; t += old_tp) {
        std::vector<NpuId> copy;
        for (const NpuId m : members) copy.push_back(static_cast<NpuId>(t + new_tp * (m / old_tp)));
        groups->add(id, t, std::move(copy));
      }
    } else {
      fail("{}: group {} ({}) holds {} of the {} tensor-parallel indices; expected a group of one index or of every "
           "index",
           in->groups_source, id, name != in->names.end() ? name->second : "no name", ts.size(), old_tp);
    }
  }
  groups->finish(*out);

  const double factor = static_cast<double>(old_tp) / static_cast<double>(new_tp);
  auto counts = std::make_shared<TpCounts>();
  auto source_rank = [old_tp, new_tp](std::uint64_t r) { return r % new_tp % old_tp + old_tp * (r / new_tp); };
  out->source = [in, source_rank](std::uint64_t r) { return in->source(source_rank(r)); };
  out->trace = [in, groups, spans_tp, old_tp, new_tp, factor, counts, source_rank](std::uint64_t r) {
    const std::uint64_t t = r % new_tp;
    const std::uint64_t from = source_rank(r);
    const std::string source = in->source(from);
    chakra::Trace trace = in->trace(from);
    auto kind_of = [&](const chakra::Node& node, std::uint32_t id) {
      const auto name = in->names.find(id);
      if (name == in->names.end()) {
        fail("{}: node {} uses group {}, which has no kind in {}; expected every group's kind (TP, DP, ...)", source,
             node.id(), id, in->names_source);
      }
      return name->second;
    };
    bool sp = false;
    // The optimizer updates the rank's weights: the dense ones split by TP, the experts' whole
    // (but with ZeRO their slice of an EDP group that grows with TP). Their shares are those of
    // the gradients reduced over DP and EDP (each rank's slice of a reduce-scatter, with ZeRO); a
    // compute node waiting on a gradient reduction is the optimizer.
    double dense_bytes = 0, expert_bytes = 0, expert_sliced_bytes = 0;
    std::unordered_set<std::uint64_t> reductions;
    for (const chakra::Node& node : trace.nodes) {
      const std::optional<std::uint32_t> id = group_of(node, *in, source);
      if (node.type() != ChakraProtoMsg::COMM_COLL_NODE || !id) continue;
      const std::string kind = kind_of(node, *id);
      const auto type = chakra::attr_int(node, "comm_type");
      const bool scatter = type == static_cast<int>(chakra::CommType::kReduceScatter);
      sp = sp || (kind == "TP" && (scatter || type == static_cast<int>(chakra::CommType::kAllGather)));
      if ((kind == "DP" || kind == "EDP") && (scatter || type == static_cast<int>(chakra::CommType::kAllReduce))) {
        const auto bytes = static_cast<double>(chakra::attr_uint(node, "comm_size").value_or(0)) /
                           static_cast<double>(scatter ? in->groups.at(*id).size() : 1);
        (kind == "DP" ? dense_bytes : scatter ? expert_sliced_bytes : expert_bytes) += bytes;
        reductions.insert(node.id());
      }
    }
    const double weights = dense_bytes + expert_sliced_bytes + expert_bytes;
    const double optimizer_factor =
        expert_bytes > 0 ? ((dense_bytes + expert_sliced_bytes) * factor + expert_bytes) / weights : factor;
    // The bucket limit is a number of weights, the same bytes at any TP: read it before resizing.
    const BucketLimits old_limits = bucket_limits(trace);
    BucketLimits limits;
    std::unordered_set<std::uint64_t> dropped;
    for (chakra::Node& node : trace.nodes) {
      if (node.type() == ChakraProtoMsg::COMP_NODE) {
        if (chakra::find_attribute(node, std::string(chakra::kGemmAttr)) ||
            chakra::find_attribute(node, std::string(chakra::kConvAttr))) {
          fail("{}: node {} has a GEMM or convolution shape; expected none (which of its dimensions tensor "
               "parallelism splits is not in the trace)",
               source, node.id());
        }
        bool optimizer = false;
        for (const std::uint64_t d : node.data_deps()) optimizer = optimizer || reductions.contains(d);
        scale_compute(node, optimizer ? optimizer_factor : factor);
        ++counts->compute;
        continue;
      }
      if (node.type() == ChakraProtoMsg::COMM_SEND_NODE || node.type() == ChakraProtoMsg::COMM_RECV_NODE) {
        if (sp) scale_attr(node, "comm_size", factor);
        ++counts->messages;
        for (const char* field : {"comm_src", "comm_dst"}) {
          const auto peer = chakra::attr_int(node, field);
          if (!peer) continue;
          if (*peer < 0 || static_cast<std::uint64_t>(*peer) >= in->ranks ||
              static_cast<std::uint64_t>(*peer) % old_tp != from % old_tp) {
            fail("{}: node {} has {} {}, at another tensor-parallel index; expected point-to-point messages between "
                 "ranks of one index",
                 source, node.id(), field, *peer);
          }
          set_int_attr(node, field,
                       static_cast<std::int64_t>(t + new_tp * (static_cast<std::uint64_t>(*peer) / old_tp)));
        }
        continue;
      }
      if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
      const std::optional<std::uint32_t> id = group_of(node, *in, source);
      if (!id) {
        fail("{}: node {} is a collective of every rank (no pg_name); expected a group id, as --tp changes which "
             "ranks every rank is",
             source, node.id());
      }
      const std::string kind = kind_of(node, *id);
      const TpRule rule = rule_for(kind, *id, in->names_source);
      if (rule == TpRule::kTp && new_tp == 1) {
        dropped.insert(node.id());
        ++counts->dropped;
        continue;
      }
      // An all-gather's part is the rank's slice: of the activation over TP, of the expert
      // weights over an EDP group (every t: it grows with TP).
      const bool gather = chakra::attr_int(node, "comm_type") == static_cast<int>(chakra::CommType::kAllGather);
      if (rule == TpRule::kScale || (rule == TpRule::kScaleWithSp && sp) ||
          (gather && (rule == TpRule::kTp || spans_tp->contains(*id)))) {
        scale_attr(node, "comm_size", factor);
        ++counts->resized;
      } else {
        ++counts->kept;
      }
      const std::optional<std::uint32_t> new_id = groups->id(*id, spans_tp->contains(*id) ? 0 : t);
      if (!new_id) {
        fail("{}: node {} uses group {} ({}), which --tp {} leaves with one member; expected a larger --tp", source,
             node.id(), *id, kind, new_tp);
      }
      const auto limit = old_limits.find(std::to_string(*id));
      if (limit != old_limits.end()) limits[std::to_string(*new_id)] = limit->second;
      set_group(node, *new_id);
    }
    drop_nodes(trace, dropped);
    counts->buckets_merged += merge_buckets(trace, limits);
    return trace;
  };
  Step step;
  step.out = out;
  step.changes = [in, out, old_tp, new_tp, counts]() {
    std::vector<std::string> lines = {fmt::format("rescaled {} ranks (TP {}) to {} ranks (TP {})", in->ranks, old_tp,
                                                  out->ranks, new_tp),
                                      fmt::format("  {} compute nodes and {} collectives (TP all-gathers, DP, EMB and "
                                                  "CP; EP with sequence "
                                                  "parallelism) scaled by {} / {}; {} collectives kept their size",
                                                  counts->compute, counts->resized, old_tp, new_tp, counts->kept),
                                      fmt::format("  {} pipeline messages (scaled by {} / {} with sequence "
                                                  "parallelism, else kept)",
                                                  counts->messages, old_tp, new_tp)};
    if (counts->buckets_merged > 0) {
      lines.push_back(fmt::format("  {} gradient buckets (and their ZeRO parameter gathers) merged into the next, as "
                                  "the "
                                  "smaller buckets fill up to the traces' bucket size",
                                  counts->buckets_merged));
    }
    if (counts->dropped > 0) {
      lines.push_back(
          fmt::format("  {} TP collectives dropped (TP 1: their groups would have one member)", counts->dropped));
    }
    return lines;
  };
  step.caveats = {
      "--tp: every compute node scales by old TP / new TP: the traces do not tell a tensor-parallel GEMM from the "
      "work Megatron does not split (norms, dropout and residuals without sequence parallelism, the embedding "
      "look-up, the loss), which is scaled too",
      "--tp: DP gradient buckets scale; at a larger TP neighbouring buckets merge while smaller than the traces' "
      "smallest full bucket (Megatron's --grad-bucket limit is somewhat smaller: it closes a bucket at the layer "
      "that fills it), at a smaller TP they are not split (fewer, larger buckets than Megatron's); weights every TP "
      "rank holds whole (norms, biases) scale with the rest",
      "--tp: a trace set without TP groups cannot be given tensor parallelism (there are no TP collectives to "
      "resize); activation memory and GEMM shapes are not re-split",
      "--tp: ranks keep rank = t + TP x rest; TP groups larger than a scale-up domain run at scale-out speed",
  };
  return step;
}

}  // namespace chakrasim::tools::rescale
