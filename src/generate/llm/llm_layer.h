// One microbatch through the pieces of a transformer on one rank, as Megatron-LM runs them under
// tensor (and sequence), context and expert parallelism: the kernels with their FLOPs and bytes,
// and the collectives between them.
//
// Per layer, forward (t = tensor-parallel size):
//   ln1 -> [AG] -> qkv -> [CP: AG of K,V] -> attention -> proj -> AR (RS with --sp)
//   ln2 -> [AG] -> fc1 -> act -> fc2 -> AR (RS with --sp) -> residual
// With experts the MLP is: router -> permute -> [EP: A2A] -> experts -> [EP: A2A] -> unpermute.
// Backward runs the reverse: each column-parallel GEMM's input gradient is all-reduced (or
// reduce-scattered) while its weight gradient is computed, and with --sp the GEMM's input is
// all-gathered again for that weight gradient (Megatron keeps only its slice). Attention is a
// fused (FlashAttention-style) kernel: no seq x seq scores in memory or HBM traffic.
#pragma once

#include <cstdint>

#include "generate/llm/llm_layout.h"
#include "generate/llm/llm_model.h"
#include "generate/llm/llm_stage.h"

namespace chakrasim::tools::llm {

// Sizes of one microbatch on one rank, as doubles for the cost formulas.
struct Shard {
  double micro = 0;  // sequences per microbatch
  double seq = 0;    // tokens per sequence (the keys a query attends to)
  double n = 0;      // tokens through this rank's GEMMs: micro x seq / cp
  double n_sp = 0;   // tokens through its element-wise ops: n / t with sequence parallelism
  double t = 1;
  double h = 0, ffn = 0, kv = 0;  // hidden, MLP inner size, width of K (and of V)
  double heads = 0;
  double vocab = 0, experts = 0, top_k = 0, mlp_inputs = 1;  // mlp_inputs: GEMMs before the activation (1 or 2)
  double bytes = 2;                                          // per element
  bool split_seq = false;                                    // sequence parallelism in effect (--sp and t > 1)
  bool moe = false;
  bool cp = false;  // context parallelism in effect
  bool ep = false;  // expert parallelism in effect
};
Shard make_shard(const ModelSpec& model, const ParallelSpec& parallel);

// Weights one rank holds, by the group their gradients are reduced over.
struct LocalParams {
  double dense = 0;   // reduced over the DP group
  double expert = 0;  // reduced over the expert-DP group
};
// A layer's weights on one rank: attention and dense-MLP matrices split t ways, experts whole
// (E / ep of them), norms, biases and the router copied on every tensor-parallel rank.
LocalParams layer_params(const ModelSpec& model, const ParallelSpec& parallel);
// Weights copied on every tensor-parallel rank of a layer (norms, biases, router): with
// sequence parallelism each rank's gradient of them covers its token slice only.
double layer_replicated_params(const ModelSpec& model);
// The input embedding (vocabulary-parallel) and learned positions, on a first-stage rank.
double embedding_params(const ModelSpec& model, const ParallelSpec& parallel);
// The output layer and final norm, on a last-stage rank (a copy of the embedding when tied and
// the pipeline has several stages, as Megatron-LM keeps one).
double output_params(const ModelSpec& model, const ParallelSpec& parallel);

// Bytes of activations one layer keeps for its backward, per microbatch on one rank
// (Korthikanti et al. 2022, generalised to grouped-query attention, SwiGLU and experts; no
// seq x seq terms, attention being fused). Full recomputation keeps the layer's input only.
double layer_activation_bytes(const Shard& shard, Recompute recompute);

class LayerEmitter {
 public:
  using Ref = StageBuilder::Ref;
  LayerEmitter(StageBuilder& builder, const Shard& shard, Recompute recompute)
      : b_(builder), x_(shard), recompute_(recompute) {}

  // Each pass ends with a compute op: what follows waits on the builder's last compute.
  // `input` is what the first op also waits for (a receive, a parameter gather, or kNone).
  void embedding_forward(Ref input);
  void embedding_backward(Ref input);
  void layer_forward(Ref input);
  void layer_backward(Ref grad);
  void output_forward(Ref input);
  void output_backward(Ref input);

 private:
  Ref tp_reduce(const char* part);  // the all-reduce (reduce-scatter with --sp) of n x h
  // The all-gather of the n_sp x h slice (--sp only), after the compute so far if
  // `after_compute`, and after `also`.
  Ref tp_gather(const char* part, bool after_compute, Ref also = StageBuilder::kNone);
  void mlp_forward();
  void moe_forward();
  void mlp_backward(Ref grad);
  void moe_backward(Ref grad);

  StageBuilder& b_;
  const Shard& x_;
  Recompute recompute_;
};

}  // namespace chakrasim::tools::llm
