#include "generate/llm/llm_layer.h"

namespace chakrasim::tools::llm {
namespace {

using chakrasim::chakra::CommType;
constexpr StageBuilder::Ref kNone = StageBuilder::kNone;
using Pass = chakra::OpShape::Pass;

// C (M x N) = A (M x K) . B (K x N): 2 M K N FLOPs, each operand read or written once. `pass`
// says which of its layer's GEMMs it is (the shape attribute gives the forward layer).
Op gemm(const char* part, double m, double k, double n, double bytes, Pass pass = Pass::kForward) {
  return {part, OpKind::kGemm, 2 * m * k * n, 0, (m * k + k * n + m * n) * bytes, {m, n, k}, pass};
}

// `ops` per element over `elements`, touching `tensors` tensors of that size in HBM.
Op elementwise(const char* part, double elements, double ops, double tensors, double bytes) {
  return {part, OpKind::kElementwise, 0, elements * ops, elements * tensors * bytes};
}

// Fused attention over this rank's heads (h / t wide): Q K^T and A V, 2 x 2 n seq (h / t) FLOPs;
// softmax about 3 operations per score; it reads Q, K, V and writes the output. The backward
// (factor 2) does twice the matrix work (the MFU convention) and moves twice the bytes.
Op attention(const char* part, const Shard& x, double factor) {
  const double qo = 2 * x.n * x.h / x.t;
  const double kv = 2 * x.micro * x.seq * x.kv / x.t;
  return {part, OpKind::kAttention, factor * 4 * x.n * x.seq * x.h / x.t, factor * 3 * x.n * x.seq * x.heads / x.t,
          factor * (qo + kv) * x.bytes};
}

}  // namespace

Shard make_shard(const ModelSpec& m, const ParallelSpec& par) {
  Shard x;
  x.micro = static_cast<double>(par.microbatch);
  x.seq = static_cast<double>(m.seq);
  x.n = x.micro * x.seq / static_cast<double>(par.cp);
  x.t = static_cast<double>(par.tp);
  x.split_seq = par.sp && par.tp > 1;
  x.n_sp = x.split_seq ? x.n / x.t : x.n;
  x.h = static_cast<double>(m.hidden);
  x.ffn = static_cast<double>(m.ffn);
  x.kv = static_cast<double>(m.kv_dim());
  x.heads = static_cast<double>(m.heads);
  x.vocab = static_cast<double>(m.vocab);
  x.moe = m.moe();
  x.experts = static_cast<double>(m.experts);
  x.top_k = static_cast<double>(m.top_k);
  x.mlp_inputs = static_cast<double>(m.mlp_matrices() - 1);
  x.bytes = static_cast<double>(par.dtype_bytes);
  x.cp = par.cp > 1;
  x.ep = par.ep > 1;
  return x;
}

LocalParams layer_params(const ModelSpec& m, const ParallelSpec& par) {
  const ParamCounts p = count_params(m);
  const auto t = static_cast<double>(par.tp);
  LocalParams local;
  local.dense = static_cast<double>(p.attention + p.mlp) / t + layer_replicated_params(m);
  local.expert = static_cast<double>(m.experts / par.ep) * static_cast<double>(p.expert);
  return local;
}

double layer_replicated_params(const ModelSpec& m) {
  const ParamCounts p = count_params(m);
  return static_cast<double>(p.layer_vectors + p.router);
}

double embedding_params(const ModelSpec& m, const ParallelSpec& par) {
  const ParamCounts p = count_params(m);
  return static_cast<double>(p.embedding) / static_cast<double>(par.tp) + static_cast<double>(p.positions);
}

double output_params(const ModelSpec& m, const ParallelSpec& par) {
  const ParamCounts p = count_params(m);
  double matrix = static_cast<double>(p.output);
  if (m.tied_embeddings && par.pp > 1) matrix = static_cast<double>(p.embedding);
  return matrix / static_cast<double>(par.tp) + static_cast<double>(p.final_norm);
}

double layer_activation_bytes(const Shard& x, Recompute recompute) {
  const double split = x.split_seq ? x.t : 1;  // what sequence parallelism divides
  if (recompute == Recompute::kFull) return x.n * x.h * x.bytes / split;
  const double mask = 1;  // dropout masks: one byte per element
  // Attention block: norm input, QKV input (both n x h, split by --sp), Q, K and V, the
  // projection's input (split by t), the dropout mask.
  double elements = 2 * x.n * x.h / split + x.n * (x.h + 2 * x.kv) / x.t + x.n * x.h / x.t;
  double bytes = elements * x.bytes + mask * x.n * x.h / split;
  if (x.moe) {
    // Norm and router input, then each routed token copy: the experts' input, their activation
    // inputs and the second GEMM's input.
    const double routed = x.n_sp * x.top_k;
    elements = 2 * x.n_sp * x.h + routed * (x.h + x.mlp_inputs * x.ffn + x.ffn);
    bytes += elements * x.bytes + mask * x.n_sp * x.h;
  } else {
    // Norm input and fc1 input (split by --sp), the activation's inputs and fc2's input (split
    // by t), the dropout mask.
    elements = 2 * x.n * x.h / split + x.n * (x.mlp_inputs * x.ffn + x.ffn) / x.t;
    bytes += elements * x.bytes + mask * x.n * x.h / split;
  }
  return bytes;
}

LayerEmitter::Ref LayerEmitter::tp_reduce(const char* part) {
  if (x_.t <= 1) return kNone;
  const auto bytes = static_cast<std::uint64_t>(x_.n * x_.h * x_.bytes);
  return b_.collective(GroupKind::kTp, x_.split_seq ? CommType::kReduceScatter : CommType::kAllReduce, bytes, part,
                       {b_.last_compute()});
}

LayerEmitter::Ref LayerEmitter::tp_gather(const char* part, bool after_compute, Ref also) {
  if (!x_.split_seq) return kNone;
  const auto bytes = static_cast<std::uint64_t>(x_.n_sp * x_.h * x_.bytes);
  // Only now, when there is a gather, may the compute so far become a node of its own.
  return b_.collective(GroupKind::kTp, CommType::kAllGather, bytes, part,
                       {after_compute ? b_.last_compute() : kNone, also});
}

void LayerEmitter::embedding_forward(Ref input) {
  // Each rank looks its vocabulary slice up for every token; the slices are summed over the
  // tensor-parallel group, then dropout runs on this rank's tokens.
  b_.compute(elementwise("emb", x_.n * x_.h, 2, 3, x_.bytes), {input});
  const Ref reduced = tp_reduce(x_.split_seq ? "emb.rs" : "emb.ar");
  b_.compute(elementwise("emb.drop", x_.n_sp * x_.h, 2, 2, x_.bytes), {reduced});
}

void LayerEmitter::embedding_backward(Ref input) {
  const Ref grad = tp_gather("emb.ag", true, input);
  b_.compute(elementwise("emb.bw", x_.n * x_.h, 1, 3, x_.bytes), {input, grad});
}

void LayerEmitter::layer_forward(Ref input) {
  const Shard& x = x_;
  b_.compute(elementwise("ln1", x.n_sp * x.h, 8, 3, x.bytes), {input});
  const Ref gathered = tp_gather("ag1", true);
  b_.compute(gemm("qkv", x.n, x.h, (x.h + 2 * x.kv) / x.t, x.bytes), {gathered});
  Ref kv = kNone;
  if (x.cp) {
    // Context parallelism: every rank needs the keys and values of the whole sequence.
    const auto bytes = static_cast<std::uint64_t>(2 * x.n * x.kv / x.t * x.bytes);
    kv = b_.collective(GroupKind::kCp, CommType::kAllGather, bytes, "kv.ag", {b_.last_compute()});
  }
  b_.compute(attention("attn", x, 1), {kv});
  b_.compute(gemm("proj", x.n, x.h / x.t, x.h, x.bytes));
  const Ref reduced = tp_reduce(x.split_seq ? "rs1" : "ar1");
  b_.compute(elementwise("ln2", x.n_sp * x.h, 8, 3, x.bytes), {reduced});
  if (x.moe) {
    moe_forward();
  } else {
    mlp_forward();
  }
}

void LayerEmitter::mlp_forward() {
  const Shard& x = x_;
  const Ref gathered = tp_gather("ag2", true);
  b_.compute(gemm("fc1", x.n, x.h, x.mlp_inputs * x.ffn / x.t, x.bytes), {gathered});
  // GeLU: about 8 operations on one input; SwiGLU: about 6 on two inputs (gate and up).
  const double act_elems = x.n * x.ffn / x.t;
  b_.compute(elementwise("act", act_elems, x.mlp_inputs > 1 ? 6 : 8, x.mlp_inputs + 1, x.bytes));
  b_.compute(gemm("fc2", x.n, x.ffn / x.t, x.h, x.bytes));
  const Ref reduced = tp_reduce(x.split_seq ? "rs2" : "ar2");
  b_.compute(elementwise("res", x.n_sp * x.h, 1, 3, x.bytes), {reduced});
}

void LayerEmitter::moe_forward() {
  // This rank routes its own tokens (n_sp of them); with balanced routing it gets back as many
  // token copies (n_sp x top-k) for its experts as it sends out.
  const Shard& x = x_;
  const double routed = x.n_sp * x.top_k;
  b_.compute(gemm("router", x.n_sp, x.h, x.experts, x.bytes));
  b_.compute(elementwise("topk", x.n_sp * x.experts, 10, 2, x.bytes));
  b_.compute(elementwise("perm", routed * x.h, 1, 2, x.bytes));
  Ref dispatched = kNone;
  if (x.ep) {
    dispatched = b_.collective(GroupKind::kEp, CommType::kAllToAll, static_cast<std::uint64_t>(routed * x.h * x.bytes),
                               "a2a1", {b_.last_compute()});
  }
  b_.compute(gemm("x.fc1", routed, x.h, x.mlp_inputs * x.ffn, x.bytes), {dispatched});
  b_.compute(elementwise("x.act", routed * x.ffn, x.mlp_inputs > 1 ? 6 : 8, x.mlp_inputs + 1, x.bytes));
  b_.compute(gemm("x.fc2", routed, x.ffn, x.h, x.bytes));
  Ref combined = kNone;
  if (x.ep) {
    combined = b_.collective(GroupKind::kEp, CommType::kAllToAll, static_cast<std::uint64_t>(routed * x.h * x.bytes),
                             "a2a2", {b_.last_compute()});
  }
  b_.compute(elementwise("unperm", routed * x.h, 2, 2, x.bytes), {combined});
}

void LayerEmitter::layer_backward(Ref grad) {
  const Shard& x = x_;
  if (x.moe) {
    moe_backward(grad);
  } else {
    mlp_backward(grad);
  }
  const Ref grad_out = tp_gather("ag.g1", true);
  b_.compute(gemm("proj.dg", x.n, x.h, x.h / x.t, x.bytes, Pass::kInputGradient), {grad_out});
  b_.compute(gemm("proj.wg", x.h / x.t, x.n, x.h, x.bytes, Pass::kWeightGradient));
  if (recompute_ == Recompute::kSelective) b_.compute(attention("attn.re", x, 1));
  b_.compute(attention("attn.bw", x, 2));
  Ref kv = kNone;
  if (x.cp) {
    // The key and value gradients of the whole sequence, summed back to their owners' slices.
    const auto bytes = static_cast<std::uint64_t>(2 * x.micro * x.seq * x.kv / x.t * x.bytes);
    kv = b_.collective(GroupKind::kCp, CommType::kReduceScatter, bytes, "kv.rs", {b_.last_compute()});
  }
  const Ref input = tp_gather("ag.in1", false);
  b_.compute(gemm("qkv.dg", x.n, (x.h + 2 * x.kv) / x.t, x.h, x.bytes, Pass::kInputGradient), {kv});
  const Ref reduced = tp_reduce(x.split_seq ? "rs.g1" : "ar.g1");
  b_.compute(gemm("qkv.wg", x.h, x.n, (x.h + 2 * x.kv) / x.t, x.bytes, Pass::kWeightGradient), {input});
  b_.compute(elementwise("ln1.bw", x.n_sp * x.h, 12, 4, x.bytes), {reduced});
}

void LayerEmitter::mlp_backward(Ref grad) {
  const Shard& x = x_;
  // Dropout's backward on this rank's tokens, then (--sp) the gradient of every token for fc2.
  b_.compute(elementwise("res.bw", x.n_sp * x.h, 1, 2, x.bytes), {grad});
  const Ref grad_out = tp_gather("ag.g2", true);
  b_.compute(gemm("fc2.dg", x.n, x.h, x.ffn / x.t, x.bytes, Pass::kInputGradient), {grad_out});
  b_.compute(gemm("fc2.wg", x.ffn / x.t, x.n, x.h, x.bytes, Pass::kWeightGradient));
  b_.compute(elementwise("act.bw", x.n * x.ffn / x.t, x.mlp_inputs > 1 ? 10 : 12, 2 * x.mlp_inputs + 1, x.bytes));
  const Ref input = tp_gather("ag.in2", false);
  b_.compute(gemm("fc1.dg", x.n, x.mlp_inputs * x.ffn / x.t, x.h, x.bytes, Pass::kInputGradient));
  const Ref reduced = tp_reduce(x.split_seq ? "rs.g2" : "ar.g2");
  b_.compute(gemm("fc1.wg", x.h, x.n, x.mlp_inputs * x.ffn / x.t, x.bytes, Pass::kWeightGradient), {input});
  b_.compute(elementwise("ln2.bw", x.n_sp * x.h, 12, 4, x.bytes), {reduced});
}

void LayerEmitter::moe_backward(Ref grad) {
  const Shard& x = x_;
  const double routed = x.n_sp * x.top_k;
  b_.compute(elementwise("unperm.bw", routed * x.h, 2, 2, x.bytes), {grad});
  Ref back = kNone;
  if (x.ep) {
    back = b_.collective(GroupKind::kEp, CommType::kAllToAll, static_cast<std::uint64_t>(routed * x.h * x.bytes),
                         "a2a3", {b_.last_compute()});
  }
  b_.compute(gemm("x.fc2.dg", routed, x.h, x.ffn, x.bytes, Pass::kInputGradient), {back});
  b_.compute(gemm("x.fc2.wg", x.ffn, routed, x.h, x.bytes, Pass::kWeightGradient));
  b_.compute(elementwise("x.act.bw", routed * x.ffn, x.mlp_inputs > 1 ? 10 : 12, 2 * x.mlp_inputs + 1, x.bytes));
  b_.compute(gemm("x.fc1.dg", routed, x.mlp_inputs * x.ffn, x.h, x.bytes, Pass::kInputGradient));
  Ref returned = kNone;
  if (x.ep) {
    returned = b_.collective(GroupKind::kEp, CommType::kAllToAll, static_cast<std::uint64_t>(routed * x.h * x.bytes),
                             "a2a4", {b_.last_compute()});
  }
  b_.compute(gemm("x.fc1.wg", x.h, routed, x.mlp_inputs * x.ffn, x.bytes, Pass::kWeightGradient));
  b_.compute(elementwise("perm.bw", routed * x.h, 1, 2, x.bytes), {returned});
  b_.compute(gemm("router.dg", x.n_sp, x.experts, x.h, x.bytes, Pass::kInputGradient));
  b_.compute(gemm("router.wg", x.h, x.n_sp, x.experts, x.bytes, Pass::kWeightGradient));
  b_.compute(elementwise("ln2.bw", x.n_sp * x.h, 12, 4, x.bytes));
}

void LayerEmitter::output_forward(Ref input) {
  const Shard& x = x_;
  b_.compute(elementwise("lnf", x.n_sp * x.h, 8, 3, x.bytes), {input});
  const Ref gathered = tp_gather("lnf.ag", true);
  b_.compute(gemm("logits", x.n, x.h, x.vocab / x.t, x.bytes), {gathered});
  b_.compute(elementwise("ce", x.n * x.vocab / x.t, 5, 2, x.bytes));
  Ref reduced = kNone;
  if (x_.t > 1) {
    // Vocabulary-parallel cross-entropy: the maximum logit, the target's logit and the sum of
    // exponentials of every token, summed over the group (three fp32 values per token).
    reduced = b_.collective(GroupKind::kTp, CommType::kAllReduce, static_cast<std::uint64_t>(3 * x.n * 4), "ce.ar",
                            {b_.last_compute()});
  }
  b_.compute(elementwise("loss", x.n, 4, 3, 4), {reduced});
}

void LayerEmitter::output_backward(Ref input) {
  const Shard& x = x_;
  b_.compute(elementwise("ce.bw", x.n * x.vocab / x.t, 3, 2, x.bytes), {input});
  const Ref gathered = tp_gather("lnf.ag.in", false);
  b_.compute(gemm("logits.dg", x.n, x.vocab / x.t, x.h, x.bytes, Pass::kInputGradient));
  const Ref reduced = tp_reduce(x.split_seq ? "lnf.rs" : "lnf.ar");
  b_.compute(gemm("logits.wg", x.h, x.n, x.vocab / x.t, x.bytes, Pass::kWeightGradient), {gathered});
  b_.compute(elementwise("lnf.bw", x.n_sp * x.h, 12, 4, x.bytes), {reduced});
}

}  // namespace chakrasim::tools::llm
