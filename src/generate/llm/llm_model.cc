#include "generate/llm/llm_model.h"

#include <string_view>

#include "core/error.h"

namespace chakrasim::tools::llm {
namespace {

struct Preset {
  std::string_view name;
  ModelSpec spec;
};

ModelSpec gpt(std::string_view name, std::uint64_t layers, std::uint64_t hidden, std::uint64_t heads) {
  ModelSpec m;
  m.name = std::string(name);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = 4 * hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.seq = 2048;
  // GPT-2's 50257 tokens, padded as Megatron-LM pads them (a multiple of 128 x 8), so that
  // tensor-parallel sizes up to 8 divide the vocabulary.
  m.vocab = 51200;
  m.mlp = MlpKind::kGelu;
  m.tied_embeddings = true;
  m.learned_positions = true;
  m.biases = true;
  return m;
}

ModelSpec llama(std::string_view name, std::uint64_t layers, std::uint64_t hidden, std::uint64_t ffn,
                std::uint64_t heads, std::uint64_t seq, std::uint64_t vocab) {
  ModelSpec m;
  m.name = std::string(name);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = ffn;
  m.heads = heads;
  m.kv_heads = 8;  // every LLaMA-2/3 and Mixtral preset here uses 8 key/value heads
  m.seq = seq;
  m.vocab = vocab;
  return m;
}

// Shapes from the models' papers and released configurations. GPT-3 13B is listed there with
// d_model 5140 but 40 heads of 128; Megatron-LM and most reproductions use 5120, as here.
// Mixtral's context reaches 32768 tokens; its preset trains on 4096-token sequences.
std::vector<Preset> presets() {
  ModelSpec mixtral = llama("mixtral-8x7b", 32, 4096, 14336, 32, 4096, 32000);
  mixtral.experts = 8;
  mixtral.top_k = 2;
  return {
      {"gpt3-175b", gpt("gpt3-175b", 96, 12288, 96)},
      {"gpt3-13b", gpt("gpt3-13b", 40, 5120, 40)},
      {"llama2-70b", llama("llama2-70b", 80, 8192, 28672, 64, 4096, 32000)},
      {"llama3-8b", llama("llama3-8b", 32, 4096, 14336, 32, 8192, 128256)},
      {"llama3-405b", llama("llama3-405b", 126, 16384, 53248, 128, 8192, 128256)},
      {"mixtral-8x7b", mixtral},
  };
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const Preset& p : presets()) names.emplace_back(p.name);
  return names;
}

ModelSpec model_preset(const std::string& name) {
  std::string valid;
  for (const Preset& p : presets()) {
    if (p.name == name) return p.spec;
    valid += (valid.empty() ? "" : ", ") + std::string(p.name);
  }
  fail("--model: unknown model \"{}\"; expected one of {} (or no --model and explicit --layers, "
       "--hidden, --heads, --seq, --vocab)",
       name, valid);
}

void require_positive(std::uint64_t value, const char* flag) {
  if (value == 0) fail("{}: expected a positive number, got 0", flag);
}

void check_model(const ModelSpec& m) {
  require_positive(m.layers, "--layers");
  require_positive(m.hidden, "--hidden");
  require_positive(m.ffn, "--ffn");
  require_positive(m.heads, "--heads");
  require_positive(m.kv_heads, "--kv-heads");
  require_positive(m.seq, "--seq");
  require_positive(m.vocab, "--vocab");
  require_positive(m.experts, "--experts");
  require_positive(m.top_k, "--top-k");
  // Bounds far above any real model, so that no count below can overflow.
  auto at_most = [](std::uint64_t v, std::uint64_t limit, const char* flag) {
    if (v > limit) fail("{} {}: expected at most {}", flag, v, limit);
  };
  at_most(m.layers, 100'000, "--layers");
  at_most(m.hidden, 1u << 20, "--hidden");
  at_most(m.ffn, 1u << 24, "--ffn");
  at_most(m.seq, 1u << 24, "--seq");
  at_most(m.vocab, 1u << 24, "--vocab");
  at_most(m.experts, 1u << 16, "--experts");
  const double h = static_cast<double>(m.hidden);
  const double per_layer = 4 * h * h + 3 * h * static_cast<double>(m.ffn) * static_cast<double>(m.experts);
  const double total = static_cast<double>(m.layers) * per_layer + 2 * h * static_cast<double>(m.vocab + m.seq);
  if (total > 1e15) {
    fail("--layers {}, --hidden {}, --ffn {}, --experts {}: about {:.3g} parameters; expected at most 1e15", m.layers,
         m.hidden, m.ffn, m.experts, total);
  }
  if (m.hidden % m.heads != 0) {
    fail("--hidden {} is not a multiple of --heads {}; expected heads of equal width", m.hidden, m.heads);
  }
  if (m.heads % m.kv_heads != 0) {
    fail("--kv-heads {} does not divide --heads {}; expected query heads in equal groups per key/value head",
         m.kv_heads, m.heads);
  }
  if (m.top_k > m.experts) {
    fail("--top-k {} is more than --experts {}; expected each token to go to at most every expert", m.top_k, m.experts);
  }
}

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts p;
  const std::uint64_t h = m.hidden;
  p.embedding = m.vocab * h;
  p.positions = m.learned_positions ? m.seq * h : 0;
  p.output = m.tied_embeddings ? 0 : m.vocab * h;
  const std::uint64_t qkv_width = h + 2 * m.kv_dim();
  p.attention = h * qkv_width + h * h;
  const std::uint64_t mlp_weights = m.mlp_matrices() * h * m.ffn;
  // Biases: Q, K, V and the projection; the MLP's inner (f, twice for gate and up) and outer (h).
  const std::uint64_t mlp_biases = m.biases ? (m.mlp_matrices() - 1) * m.ffn + h : 0;
  if (m.moe()) {
    p.expert = mlp_weights + mlp_biases;
    p.router = h * m.experts;
  } else {
    p.mlp = mlp_weights;
  }
  const std::uint64_t norm = m.biases ? 2 * h : h;  // LayerNorm has a bias, RMSNorm none
  p.layer_vectors = 2 * norm + (m.biases ? qkv_width + h : 0) + (m.moe() ? 0 : mlp_biases);
  p.final_norm = norm;
  const std::uint64_t shared = p.embedding + p.positions + p.output + p.final_norm;
  const std::uint64_t layer = p.attention + p.mlp + p.router + p.layer_vectors;
  p.total = shared + m.layers * (layer + m.experts * p.expert);
  p.active = shared + m.layers * (layer + (m.moe() ? m.top_k : 0) * p.expert);
  return p;
}

IterationFlops closed_form_flops(const ModelSpec& m, double tokens, Recompute recompute) {
  const double h = static_cast<double>(m.hidden);
  const double l = static_cast<double>(m.layers);
  const double s = static_cast<double>(m.seq);
  // Matrix weights one token passes through in one layer.
  double layer_weights = h * static_cast<double>(m.hidden + 2 * m.kv_dim()) + h * h;
  const double mlp = static_cast<double>(m.mlp_matrices()) * h * static_cast<double>(m.ffn);
  layer_weights += m.moe() ? static_cast<double>(m.top_k) * mlp + h * static_cast<double>(m.experts) : mlp;
  const double layers_forward = 2 * tokens * l * layer_weights + 4 * tokens * l * s * h;
  const double logits_forward = 2 * tokens * h * static_cast<double>(m.vocab);
  IterationFlops f;
  f.model = 3 * (layers_forward + logits_forward);
  if (recompute == Recompute::kFull) f.recompute = layers_forward;
  if (recompute == Recompute::kSelective) f.recompute = 4 * tokens * l * s * h;
  return f;
}

}  // namespace chakrasim::tools::llm
