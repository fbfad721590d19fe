// A decoder-only transformer as `chakrasim generate llm` sees it: its shape (named presets or
// explicit sizes), its parameter counts, and the FLOPs of one training iteration in closed form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace chakrasim::tools::llm {

// GPT's MLP has two matrices (h x f and f x h) with a GeLU between; LLaMA's SwiGLU has three
// (gate and up, h x f each, then down, f x h).
enum class MlpKind { kGelu, kSwiGlu };

struct ModelSpec {
  std::string name = "custom";
  std::uint64_t layers = 0;
  std::uint64_t hidden = 0;
  std::uint64_t ffn = 0;       // the MLP's inner size (per expert for MoE)
  std::uint64_t heads = 0;     // query heads
  std::uint64_t kv_heads = 0;  // key/value heads (grouped-query attention when < heads)
  std::uint64_t seq = 0;       // sequence length in tokens
  std::uint64_t vocab = 0;
  std::uint64_t experts = 1;  // 1: a dense MLP; more: every layer's MLP is a mixture of experts
  std::uint64_t top_k = 1;    // experts each token goes to
  MlpKind mlp = MlpKind::kSwiGlu;
  bool tied_embeddings = false;    // the output layer reuses the input embedding (GPT)
  bool learned_positions = false;  // a learned position-embedding table (GPT); else rotary
  bool biases = false;             // linear layers and norms carry biases (GPT)

  std::uint64_t head_dim() const { return hidden / heads; }
  std::uint64_t kv_dim() const { return kv_heads * head_dim(); }  // width of K (and of V)
  std::uint64_t mlp_matrices() const { return mlp == MlpKind::kSwiGlu ? 3 : 2; }
  bool moe() const { return experts > 1; }
};

// The presets, by name: gpt3-175b, gpt3-13b, llama2-70b, llama3-8b, llama3-405b, mixtral-8x7b.
std::vector<std::string> model_names();
// Throws Error naming --model and the valid names when `name` is not a preset.
ModelSpec model_preset(const std::string& name);

// Throws Error naming the flag when a size is zero or the sizes do not fit together (hidden
// not a multiple of heads, heads not a multiple of kv-heads, top-k above experts, ...).
void check_model(const ModelSpec& model);
// Fails naming `flag` when `value` is 0.
void require_positive(std::uint64_t value, const char* flag);

// Parameters, by where they live. Matrices count their weights; `norms_and_biases` holds the
// vectors (norm scales, biases). Expert weights count every expert.
struct ParamCounts {
  std::uint64_t embedding = 0;      // the input token embedding, vocab x hidden
  std::uint64_t positions = 0;      // learned position embedding, seq x hidden
  std::uint64_t output = 0;         // the output layer's own matrix (0 when tied)
  std::uint64_t attention = 0;      // per layer: Q, K, V and output projection
  std::uint64_t mlp = 0;            // per layer: the dense MLP (0 for MoE)
  std::uint64_t expert = 0;         // one expert's MLP
  std::uint64_t router = 0;         // per layer: the MoE router, hidden x experts
  std::uint64_t layer_vectors = 0;  // per layer: norms and biases
  std::uint64_t final_norm = 0;

  std::uint64_t total = 0;   // everything
  std::uint64_t active = 0;  // what one token uses (top-k experts instead of all)
};
ParamCounts count_params(const ModelSpec& model);

// FLOPs of one training iteration over `tokens` tokens in sequences of model.seq, counting only
// matrix products (2 per multiply-add), the convention of Megatron-LM's MFU (Narayanan et al.
// 2021, eq. 3): forward 2 x (weights each token passes through) + attention 4 x seq x hidden per
// token and layer + the logits 2 x hidden x vocab; backward twice the forward. Recomputation adds
// what it re-runs: `full` the layers' forward again, `selective` the attention core's.
struct IterationFlops {
  double model = 0;      // 3 x forward: what MFU counts
  double recompute = 0;  // extra forward work of activation recomputation (HFU counts it too)
};
enum class Recompute { kNone, kSelective, kFull };
IterationFlops closed_form_flops(const ModelSpec& model, double tokens, Recompute recompute);

}  // namespace chakrasim::tools::llm
