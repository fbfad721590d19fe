// The LLM generator's models and GPUs: preset parameter counts against the published sizes,
// the closed-form FLOPs against Megatron-LM's formula, bad model sizes and unknown presets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "generate/llm/llm_gpu.h"
#include "generate/llm/llm_model.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;
using namespace tools::llm;

// GPT-3 175B: Megatron-LM's count 12 l h^2 + 13 l h + (V + s) h (Narayanan et al. 2021), plus
// the final LayerNorm's 2h: 96 layers, h 12288, V 51200, s 2048.
TEST(LlmModel, Gpt3ParametersFollowMegatronsCount) {
  const ModelSpec m = model_preset("gpt3-175b");
  const std::uint64_t l = 96, h = 12288, V = 51200, s = 2048;
  const ParamCounts p = count_params(m);
  EXPECT_EQ(p.total, 12 * l * h * h + 13 * l * h + (V + s) * h + 2 * h);
  EXPECT_EQ(p.total, 174'615'846'912u);
  EXPECT_EQ(p.active, p.total);
}

// LLaMA and Mixtral: the sizes their model cards give (8.03 B, 68.98 B, 405.85 B; Mixtral
// 46.70 B in all and 12.88 B active), from hidden, ffn, 8 KV heads, untied embeddings.
TEST(LlmModel, LlamaAndMixtralParameters) {
  EXPECT_EQ(count_params(model_preset("llama3-8b")).total, 8'030'261'248u);
  EXPECT_EQ(count_params(model_preset("llama2-70b")).total, 68'976'648'192u);
  EXPECT_EQ(count_params(model_preset("llama3-405b")).total, 405'853'388'800u);
  const ParamCounts mixtral = count_params(model_preset("mixtral-8x7b"));
  EXPECT_EQ(mixtral.total, 46'702'792'704u);
  EXPECT_EQ(mixtral.active, 12'879'925'248u);
  // GPT-3 13B in Megatron-LM's shape: 40 layers of 5120.
  const ParamCounts gpt13 = count_params(model_preset("gpt3-13b"));
  EXPECT_NEAR(static_cast<double>(gpt13.total), 12.85e9, 0.01e9);
}

// Megatron-LM's FLOPs per iteration (Narayanan et al. 2021, eq. 3), B sequences of s tokens:
// without recomputation 72 B s l h^2 (1 + s/6h + V/12lh); with full recomputation
// 96 B s l h^2 (1 + s/6h + V/16lh).
TEST(LlmModel, ClosedFormFlopsAreMegatronsFormula) {
  const ModelSpec m = model_preset("gpt3-175b");
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  const IterationFlops none = closed_form_flops(m, B * s, Recompute::kNone);
  EXPECT_DOUBLE_EQ(none.model, 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)));
  EXPECT_EQ(none.recompute, 0);
  const IterationFlops full = closed_form_flops(m, B * s, Recompute::kFull);
  EXPECT_DOUBLE_EQ(full.model + full.recompute, 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)));
  // Selective recomputation re-runs the attention core's forward: 4 B s^2 h per layer.
  const IterationFlops selective = closed_form_flops(m, B * s, Recompute::kSelective);
  EXPECT_DOUBLE_EQ(selective.recompute, 4 * B * s * s * h * l);
  // And "6 x parameters x tokens, plus attention" holds within 1% for GPT-3 (its embedding is
  // also its output layer, so every parameter but positions and vectors multiplies).
  const double six_pt = 6 * static_cast<double>(count_params(m).total) * B * s + 12 * l * B * s * s * h;
  EXPECT_NEAR(none.model / six_pt, 1.0, 0.01);
}

// Grouped-query attention, SwiGLU and experts: the weights one token passes through.
TEST(LlmModel, ClosedFormFlopsForMixtureOfExperts) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  const double T = 1000, h = 4096, kv = 1024, f = 14336, l = 32, s = 4096, V = 32000, E = 8, k = 2;
  const double weights = l * (h * (h + 2 * kv) + h * h + k * 3 * h * f + h * E) + h * V;
  EXPECT_DOUBLE_EQ(closed_form_flops(m, T, Recompute::kNone).model, 6 * T * weights + 12 * l * T * s * h);
}

TEST(LlmModel, UnknownPresetNamesTheValidOnes) {
  const std::string e = error_of([] { model_preset("gpt5"); });
  EXPECT_THAT(e, HasSubstr("--model"));
  EXPECT_THAT(e, HasSubstr("gpt3-175b"));
  EXPECT_THAT(e, HasSubstr("mixtral-8x7b"));
}

TEST(LlmModel, BadSizesNameTheFlag) {
  auto bad = [](auto change) {
    ModelSpec m = model_preset("llama3-8b");
    change(m);
    return error_of([&] { check_model(m); });
  };
  EXPECT_THAT(bad([](ModelSpec& m) { m.layers = 0; }), HasSubstr("--layers: expected a positive number"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.hidden = 0; }), HasSubstr("--hidden"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.ffn = 0; }), HasSubstr("--ffn"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.seq = 0; }), HasSubstr("--seq"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.vocab = 0; }), HasSubstr("--vocab"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.experts = 0; }), HasSubstr("--experts"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.heads = 0; }), HasSubstr("--heads: expected a positive number"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.kv_heads = 0; }), HasSubstr("--kv-heads: expected a positive number"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.top_k = 0; }), HasSubstr("--top-k: expected a positive number"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.hidden = 4097; }), HasSubstr("--hidden 4097 is not a multiple of --heads 32"));
  // Sizes beyond any model are refused before a count could overflow.
  EXPECT_THAT(bad([](ModelSpec& m) { m.seq = 1ull << 40; }), HasSubstr("--seq 1099511627776: expected at most "
                                                                       "16777216"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.layers = 1ull << 60; }), HasSubstr("--layers"));
  EXPECT_THAT(bad([](ModelSpec& m) {
                m.layers = 100'000;
                m.hidden = 1u << 20;
                m.heads = 1u << 10;
              }),
              HasSubstr("parameters; expected at most 1e15"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.kv_heads = 5; }), HasSubstr("--kv-heads 5 does not divide --heads 32"));
  EXPECT_THAT(bad([](ModelSpec& m) { m.top_k = 2; }), HasSubstr("--top-k 2 is more than --experts 1"));
}

// Roofline times: a GEMM-like op is compute-bound, a copy-like op memory-bound, each derated.
TEST(LlmGpu, OpTimeIsTheDeratedRoofline) {
  const GpuSpec h100 = gpu_preset("h100");  // case does not matter
  EXPECT_EQ(h100.name, "H100");
  // 989 TFLOP/s x 0.70: 1e12 FLOPs take 1e12 / 692.3e12 s = 1444.46 us.
  EXPECT_NEAR(op_time_ns(h100, 1e12, 1e6), 1e12 / (989e12 * 0.70) * 1e9, 1e-6);
  // 3350 GB/s x 0.80: 1 GB takes 1e9 / 2680e9 s = 373.13 us.
  EXPECT_NEAR(op_time_ns(h100, 1e6, 1e9), 1e9 / 2680.0, 1e-6);
  EXPECT_THAT(error_of([] { gpu_preset("V100"); }), HasSubstr("--gpu: unknown GPU \"V100\"; expected one of A100, "
                                                              "H100"));
}

// The network file: 8-GPU NVLink domains, then the scale-out network; bandwidth in 2^30 B/s.
TEST(LlmGpu, NetworkYamlHasTheScaleUpDomainFirst) {
  const GpuSpec h100 = gpu_preset("H100");
  const std::string yaml = network_yaml(h100, 64);
  EXPECT_THAT(yaml, HasSubstr("topology: [ Switch, Switch ]\nnpus_count: [ 8, 8 ]\nbandwidth: [ 419.095, 46.566 ]"));
  EXPECT_THAT(network_yaml(h100, 4), HasSubstr("npus_count: [ 4 ]"));
  EXPECT_THAT(error_of([&] { network_yaml(h100, 12); }), HasSubstr("--network-out: 12 ranks do not fill whole 8-GPU "
                                                                   "H100 nodes"));
  EXPECT_THAT(network_yaml(h100, 1), HasSubstr("npus_count: [ 1 ]"));  // a single-GPU baseline
}

// The system file: halving-doubling when every group is a power of two, one token for group
// collectives, a ring per dimension when a group spans every rank.
TEST(LlmGpu, SystemJsonPicksTheAlgorithms) {
  const GpuSpec h100 = gpu_preset("H100");
  EXPECT_THAT(system_json(h100, 64, {8, 8}), HasSubstr("\"all-reduce-implementation\": [\"halvingDoubling\"]"));
  EXPECT_THAT(system_json(h100, 64, {8, 8}), HasSubstr("\"all-to-all-implementation\": [\"direct\"]"));
  EXPECT_THAT(system_json(h100, 48, {6, 8}), HasSubstr("\"all-reduce-implementation\": [\"ring\"]"));
  EXPECT_THAT(system_json(h100, 64, {64}), HasSubstr("\"all-reduce-implementation\": [\"ring\", \"ring\"]"));
  EXPECT_THAT(system_json(h100, 64, {8}), HasSubstr("\"peak-perf\": 692.3"));
}

}  // namespace
}  // namespace chakrasim::test
