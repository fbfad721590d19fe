#include "generate/llm/llm_summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "generate/llm/llm_layer.h"
#include "generate/llm/llm_schedule.h"
#include "generate/llm/llm_trace.h"

namespace chakrasim::tools::llm {
namespace {

using chakrasim::chakra::CommType;

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

std::string si(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  std::size_t i = 0;
  while (v >= 1000 && i + 1 < std::size(prefixes)) {
    v /= 1000;
    ++i;
  }
  return fmt::format("{:.2f} {}{}", v, prefixes[i], unit);
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / 1073741824.0); }

}  // namespace

double sent_bytes(CommType type, double bytes, std::uint64_t members) {
  const auto n = static_cast<double>(members);
  switch (type) {
    case CommType::kAllReduce: return 2 * (n - 1) / n * bytes;
    case CommType::kAllGather: return (n - 1) * bytes;
    default: return (n - 1) / n * bytes;
  }
}

MemoryEstimate estimate_memory(const ModelSpec& model, const Layout& layout, std::uint64_t stage, std::uint64_t peak) {
  const ParallelSpec& par = layout.parallel();
  const StageParams p = stage_params(model, layout, stage);
  const auto dp = static_cast<double>(layout.group_size(GroupKind::kDp));
  const auto edp = static_cast<double>(layout.group_size(GroupKind::kExpertDp));
  const auto bytes = static_cast<double>(par.dtype_bytes);
  auto sliced = [&](bool slice) { return slice ? p.dense / dp + p.expert / edp : p.dense + p.expert; };
  MemoryEstimate m;
  m.weights = sliced(par.zero >= 3) * bytes;
  m.grads = sliced(par.zero >= 2) * bytes;
  // fp32 master weights and two moments; in fp32 training the weights are the master copy.
  m.optimizer = sliced(par.zero >= 1) * (par.dtype_bytes >= 4 ? 8.0 : 12.0);
  const Shard x = make_shard(model, par);
  const auto layers = static_cast<double>(layout.layers_per_chunk());
  m.activations = layer_activation_bytes(x, par.recompute) * layers * static_cast<double>(peak);
  // Full recomputation rebuilds one layer's activations at a time.
  if (par.recompute == Recompute::kFull) m.activations += layer_activation_bytes(x, Recompute::kNone);
  // The last stage keeps one microbatch's fp32 logits for the loss.
  if (stage + 1 == par.pp) m.activations += x.n * x.vocab / x.t * 4;
  return m;
}

Summary summarize(const ModelSpec& model, const Layout& layout, const GpuSpec& gpu,
                  const std::vector<StageTemplate>& stages) {
  const ParallelSpec& par = layout.parallel();
  Summary s;
  s.model = model;
  s.params = count_params(model);
  s.parallel = par;
  s.gpu = gpu;
  s.ranks = layout.ranks();
  s.microbatches = layout.microbatches();
  s.tokens = static_cast<double>(par.global_batch) * static_cast<double>(model.seq);
  s.closed_form = closed_form_flops(model, s.tokens, par.recompute);
  const auto ranks_per_stage = static_cast<double>(layout.ranks() / par.pp);
  for (const StageTemplate& t : stages) {
    StageSummary st;
    st.stage = t.stage;
    st.nodes = t.stats.size();
    for (const NodeStats& n : t.stats) {
      switch (n.role) {
        case NodeRole::kCompute:
          st.matmul_flops += n.matmul_flops;
          st.other_ops += n.other_ops;
          st.bytes += n.bytes;
          st.compute_us += static_cast<double>(n.duration_micros);
          for (std::size_t k = 0; k < kOpKinds; ++k) st.ns_by_kind[k] += n.ns_by_kind[k];
          break;
        case NodeRole::kCollective: {
          GroupVolume& v = st.volume[static_cast<std::size_t>(n.group)];
          ++v.operations;
          v.comm_size += static_cast<double>(n.comm_bytes);
          v.sent += sent_bytes(n.comm, static_cast<double>(n.comm_bytes), layout.group_size(n.group));
          break;
        }
        case NodeRole::kSend: {
          GroupVolume& v = st.volume[static_cast<std::size_t>(GroupKind::kPp)];
          ++v.operations;
          v.comm_size += static_cast<double>(n.comm_bytes);
          v.sent += static_cast<double>(n.comm_bytes);
          break;
        }
        case NodeRole::kRecv: break;
      }
    }
    st.memory = estimate_memory(model, layout, t.stage, t.peak_in_flight);
    s.trace_matmul_flops += st.matmul_flops * ranks_per_stage;
    s.trace_other_ops += st.other_ops * ranks_per_stage;
    s.stages.push_back(st);
  }
  return s;
}

std::string format_summary(const Summary& s) {
  const ParallelSpec& par = s.parallel;
  const ModelSpec& m = s.model;
  std::string out;
  out += fmt::format("{} on {} {} GPUs: TP {}, PP {}, DP {}, CP {}, EP {}, sequence parallel {}\n", m.name, s.ranks,
                     s.gpu.name, par.tp, par.pp, par.dp, par.cp, par.ep, par.sp ? "on" : "off");
  out += fmt::format("model: {} layers, hidden {}, ffn {}, {} heads ({} key/value), seq {}, vocab {}", m.layers,
                     m.hidden, m.ffn, m.heads, m.kv_heads, m.seq, m.vocab);
  out += m.moe() ? fmt::format(", {} experts (top {})\n", m.experts, m.top_k) : std::string(", dense\n");
  out += fmt::format("parameters: {} in all, {} active per token\n", si(static_cast<double>(s.params.total), ""),
                     si(static_cast<double>(s.params.active), ""));
  out += fmt::format("iteration: {} sequences of {} tokens ({} tokens); microbatch {}, {} microbatches per pipeline, "
                     "schedule {}{}, "
                     "ZeRO {}, recompute {}, {} bytes per element\n",
                     par.global_batch, m.seq, si(s.tokens, ""), par.microbatch, s.microbatches,
                     schedule_name(par.schedule),
                     par.schedule == Schedule::kInterleaved ? fmt::format(" (vpp {})", par.vpp) : std::string(),
                     par.zero, recompute_name(par.recompute), par.dtype_bytes);
  out += fmt::format("model FLOPs per iteration: {:.4e} (closed form 6 x active parameters x tokens + attention; "
                     "the traces hold {:.4e})\n",
                     s.closed_form.model, s.trace_matmul_flops);
  out += fmt::format("hardware FLOPs per iteration: {:.4e} (with recomputation; element-wise operations besides: "
                     "{:.4e})\n",
                     s.closed_form.model + s.closed_form.recompute, s.trace_other_ops);
  out +=
      fmt::format("peak per GPU: {} TFLOP/s, {} GB/s HBM; compute timed at {:.0f}% and {:.0f}% of them\n",
                  s.gpu.peak_tflops, s.gpu.hbm_gb_per_s, 100 * s.gpu.flops_efficiency, 100 * s.gpu.memory_efficiency);

  out += "per rank and iteration, by stage: matrix FLOPs, HBM bytes, compute time (GEMM / attention / "
         "element-wise / optimizer)\n";
  double busiest_us = 0;
  const std::size_t count = s.stages.size();
  for (std::size_t i = 0; i < count; ++i) {
    const StageSummary& st = s.stages[i];
    busiest_us = std::max(busiest_us, st.compute_us);
    if (count > 6 && i >= 2 && i + 2 < count) {
      if (i == 2) out += "  ...\n";
      continue;
    }
    out += fmt::format("  stage {}: {}, {}, {:.1f} ms ({:.1f} / {:.1f} / {:.1f} / {:.1f}), {} nodes\n", st.stage,
                       si(st.matmul_flops, "FLOP"), si(st.bytes, "B"), st.compute_us / 1e3, st.ns_by_kind[0] / 1e6,
                       st.ns_by_kind[1] / 1e6, st.ns_by_kind[2] / 1e6, st.ns_by_kind[3] / 1e6, st.nodes);
  }

  out += "communication per rank and iteration (the busiest stage for each group): operations, comm_size, "
         "bytes sent\n";
  for (std::size_t k = 0; k < kGroupKinds; ++k) {
    GroupVolume most;
    for (const StageSummary& st : s.stages) {
      if (st.volume[k].sent > most.sent) most = st.volume[k];
    }
    if (most.operations == 0) continue;
    const auto kind = static_cast<GroupKind>(k);
    out += fmt::format("  {:<3}: {} {}, {}, {}\n", group_kind_name(kind), most.operations,
                       kind == GroupKind::kPp ? "sends" : "collectives", si(most.comm_size, "B"), si(most.sent, "B"));
  }

  out += fmt::format("memory per rank (of {:.0f} GiB): weights, gradients, optimizer, activations = total\n",
                     s.gpu.hbm_gib);
  for (std::size_t i = 0; i < count; ++i) {
    if (count > 2 && i != 0 && i + 1 != count) continue;
    const MemoryEstimate& mem = s.stages[i].memory;
    const bool fits = mem.total() <= s.gpu.hbm_gib * 1073741824.0;
    out += fmt::format("  stage {}: {} + {} + {} + {} = {}{}\n", s.stages[i].stage, gib(mem.weights), gib(mem.grads),
                       gib(mem.optimizer), gib(mem.activations), gib(mem.total()), fits ? "" : "  (does not fit)");
  }
  const double peak = static_cast<double>(s.ranks) * s.gpu.peak_tflops * 1e12;
  out +=
      fmt::format("compute-only bound: the busiest rank computes for {:.1f} ms per iteration, so MFU is at most "
                  "{:.1f}% "
                  "(simulate for bubbles and exposed communication: MFU = model FLOPs / (iteration time x {} x {} "
                  "TFLOP/s))\n",
                  busiest_us / 1e3, 100 * s.closed_form.model / (busiest_us * 1e-6 * peak), s.ranks, s.gpu.peak_tflops);
  return out;
}

}  // namespace chakrasim::tools::llm
