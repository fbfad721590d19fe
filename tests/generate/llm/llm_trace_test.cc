// The LLM generator's traces: FLOPs per iteration against the closed forms, communication per
// rank against Megatron-LM's and ZeRO's formulas, the dependency rules, pipeline messages that
// pair up, and the fast per-rank writer against plain serialisation.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "generate/llm/llm_generator.h"
#include "generate/llm/llm_layer.h"
#include "generate/llm/llm_trace.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using namespace tools::llm;
using chakra::CommType;

// A small GPT (tied embeddings, GeLU, biases): 8 layers of 256, 8 heads, 128 tokens.
ModelSpec small_gpt() {
  ModelSpec m = model_preset("gpt3-13b");
  m.name = "small-gpt";
  m.layers = 8;
  m.hidden = 256;
  m.ffn = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.seq = 128;
  m.vocab = 1024;
  return m;
}

// A small LLaMA-style mixture of experts: grouped-query attention, SwiGLU, 4 experts, top 2.
ModelSpec small_moe() {
  ModelSpec m = model_preset("mixtral-8x7b");
  m.name = "small-moe";
  m.layers = 4;
  m.hidden = 256;
  m.ffn = 512;
  m.heads = 8;
  m.kv_heads = 4;
  m.seq = 128;
  m.vocab = 1024;
  m.experts = 4;
  m.top_k = 2;
  return m;
}

GenerateOptions options(const ModelSpec& m, std::uint64_t dp, std::uint64_t tp, std::uint64_t pp,
                        std::uint64_t global_batch) {
  GenerateOptions o;
  o.model = m;
  o.parallel.dp = dp;
  o.parallel.tp = tp;
  o.parallel.pp = pp;
  o.parallel.global_batch = global_batch;
  return o;
}

Summary summary_of(const GenerateOptions& o) {
  const Generated g = build_iteration(o);
  return summarize(g.model, g.layout, g.gpu, g.stages);
}

// The bar: the matrix FLOPs in every rank's trace, summed over all ranks, equal the closed form
// (which equals Megatron-LM's formula, llm_model_test.cc) for every kind of parallelism,
// recomputation and schedule: each GEMM and attention op is split exactly, never lost or doubled.
TEST(LlmTrace, FlopsEqualTheClosedForm) {
  struct Case {
    const char* what;
    GenerateOptions o;
  };
  std::vector<Case> cases;
  cases.push_back({"tp2 pp2 dp2", options(small_gpt(), 2, 2, 2, 8)});
  GenerateOptions sp = options(small_gpt(), 2, 4, 2, 8);
  sp.parallel.sp = true;
  sp.parallel.recompute = Recompute::kFull;
  cases.push_back({"sp + full recompute", sp});
  GenerateOptions cp = options(small_gpt(), 2, 2, 1, 4);
  cp.parallel.cp = 2;
  cp.parallel.recompute = Recompute::kSelective;
  cases.push_back({"cp + selective", cp});
  GenerateOptions inter = options(small_gpt(), 1, 1, 2, 4);
  inter.parallel.schedule = Schedule::kInterleaved;
  inter.parallel.vpp = 2;
  cases.push_back({"interleaved", inter});
  GenerateOptions moe = options(small_moe(), 4, 2, 2, 8);
  moe.parallel.ep = 2;
  moe.parallel.sp = true;
  cases.push_back({"moe ep2", moe});
  GenerateOptions zero3 = options(small_gpt(), 4, 1, 1, 8);
  zero3.parallel.zero = 3;
  cases.push_back({"zero3", zero3});
  for (const Case& c : cases) {
    const Summary s = summary_of(c.o);
    const double expected = s.closed_form.model + s.closed_form.recompute;
    EXPECT_NEAR(s.trace_matmul_flops / expected, 1.0, 1e-12) << c.what;
    // The iteration's tokens: global batch x seq.
    EXPECT_EQ(s.tokens, static_cast<double>(c.o.parallel.global_batch * c.o.model.seq)) << c.what;
  }
}

// The bar's wording for GPT-3 175B itself: the traces' FLOPs are 6 x parameters x tokens plus
// the attention terms (12 l s h per token), plus recomputation, within 1%.
TEST(LlmTrace, Gpt3FlopsAreSixNTPlusAttention) {
  GenerateOptions o = options(model_preset("gpt3-175b"), 2, 8, 8, 16);
  o.parallel.recompute = Recompute::kFull;
  const Summary s = summary_of(o);
  const double T = 16 * 2048.0, l = 96, h = 12288, sq = 2048;
  const double six_nt = 6 * static_cast<double>(s.params.total) * T + 12 * l * T * sq * h;
  const double recompute = 2 * T * l * 12 * h * h + 4 * l * T * sq * h;  // the layers' forward again
  EXPECT_NEAR(s.trace_matmul_flops / (six_nt + recompute), 1.0, 0.01);
}

// Summed volumes of one stage's rank.
const GroupVolume& volume(const Summary& s, std::uint64_t stage, GroupKind kind) {
  return s.stages.at(stage).volume[static_cast<std::size_t>(kind)];
}

// Tensor parallelism without --sp (Megatron-LM, Narayanan et al. 2021): per layer and
// microbatch two all-reduces of b s h forward and two backward, 2 (t-1)/t of it sent each.
// Stage 0 adds the embedding's all-reduce per microbatch; the last stage the output layer's
// input-gradient all-reduce and the cross-entropy's 3 fp32 values per token.
TEST(LlmTrace, TensorParallelVolumeIsMegatrons) {
  const GenerateOptions o = options(small_gpt(), 2, 4, 2, 16);  // 8 microbatches, 4 layers per stage
  const Summary s = summary_of(o);
  const double m = 8, layers = 4, t = 4, act = 1 * 128 * 256 * 2;  // b s h x 2 bytes
  const GroupVolume& first = volume(s, 0, GroupKind::kTp);
  EXPECT_EQ(first.operations, static_cast<std::uint64_t>(m * (4 * layers + 1)));
  EXPECT_DOUBLE_EQ(first.comm_size, m * (4 * layers + 1) * act);
  EXPECT_DOUBLE_EQ(first.sent, 2 * (t - 1) / t * first.comm_size);
  const GroupVolume& last = volume(s, 1, GroupKind::kTp);
  EXPECT_DOUBLE_EQ(last.comm_size, m * ((4 * layers + 1) * act + 3 * 128 * 4));
}

// With --sp each all-reduce becomes an all-gather of the b s h / t slice and a reduce-scatter
// of b s h: forward the same bytes as the two all-reduces (Korthikanti et al. 2022); backward
// also re-gathers the two column-parallel inputs for their weight gradients, so 10 (t-1)/t b s h
// sent per layer instead of 8 (t-1)/t b s h.
TEST(LlmTrace, SequenceParallelVolume) {
  GenerateOptions o = options(small_gpt(), 1, 4, 1, 2);
  const Summary plain = summary_of(o);
  o.parallel.sp = true;
  const Summary sp = summary_of(o);
  const double m = 2, layers = 8, t = 4, act = 128 * 256 * 2;
  // Layers, plus the embedding and output layer (each an all-gather and a reduce-scatter with
  // --sp, one all-reduce without, plus an extra input gather for the output layer's weights),
  // the cross-entropy all-reduce and the final all-reduce of norm gradients over the group.
  const double ce = 3 * 128 * 4 * 2 * (t - 1) / t;
  const double plain_expected = m * (layers * 8 + 2 * 2) * (t - 1) / t * act + m * ce;
  EXPECT_DOUBLE_EQ(volume(plain, 0, GroupKind::kTp).sent, plain_expected);
  const double vectors = static_cast<double>(count_params(o.model).layer_vectors) * layers +
                         static_cast<double>(count_params(o.model).final_norm);
  const double sp_expected = m * (layers * 10 + 2 + 3) * (t - 1) / t * act + m * ce + 2 * (t - 1) / t * vectors * 2;
  EXPECT_DOUBLE_EQ(volume(sp, 0, GroupKind::kTp).sent, sp_expected);
}

// Pipeline: each forward sends b s h, each backward the gradient back; inner stages both ways,
// the first stage only forward, the last only backward. Interleaving: every chunk boundary.
TEST(LlmTrace, PipelineVolume) {
  const double act = 128 * 256 * 2;
  const Summary s = summary_of(options(small_gpt(), 1, 1, 4, 6));
  EXPECT_EQ(volume(s, 0, GroupKind::kPp).operations, 6u);
  EXPECT_EQ(volume(s, 1, GroupKind::kPp).operations, 12u);
  EXPECT_EQ(volume(s, 3, GroupKind::kPp).operations, 6u);
  EXPECT_DOUBLE_EQ(volume(s, 1, GroupKind::kPp).sent, 12 * act);
  GenerateOptions inter = options(small_gpt(), 1, 1, 2, 4);
  inter.parallel.schedule = Schedule::kInterleaved;
  inter.parallel.vpp = 2;
  const Summary si = summary_of(inter);
  // 2 chunks x 4 microbatches x 2 directions, less the model's two ends.
  EXPECT_EQ(volume(si, 0, GroupKind::kPp).operations, 12u);
  EXPECT_EQ(volume(si, 1, GroupKind::kPp).operations, 12u);
  // With --sp the message is the b s h / t slice.
  GenerateOptions sp = options(small_gpt(), 1, 2, 2, 2);
  sp.parallel.sp = true;
  EXPECT_DOUBLE_EQ(volume(summary_of(sp), 0, GroupKind::kPp).sent, 2 * act / 2);
}

// Data parallelism: ZeRO 0 all-reduces every gradient once, 2 (d-1)/d Psi sent; ZeRO 1 reduce-
// scatters and all-gathers the same (ZeRO's equal volume); ZeRO 2 reduce-scatters every
// microbatch; ZeRO 3 also all-gathers the weights before each forward and backward: 3 (d-1)/d
// Psi per microbatch. Psi: the weights on the rank, 2 bytes each; slices padded to whole weights.
TEST(LlmTrace, DataParallelVolumeIsZeros) {
  const double d = 4, m = 3;
  auto dp_sent = [&](std::uint64_t zero) {
    GenerateOptions o = options(small_gpt(), 4, 1, 1, 12);
    o.parallel.zero = zero;
    o.parallel.grad_bucket_params = 200'000;  // several buckets
    return volume(summary_of(o), 0, GroupKind::kDp).sent;
  };
  const ModelSpec model = small_gpt();
  const double psi = static_cast<double>(count_params(model).total) * 2;
  EXPECT_DOUBLE_EQ(dp_sent(0), 2 * (d - 1) / d * psi);
  // Padding: at most d - 1 weights per bucket or layer.
  EXPECT_NEAR(dp_sent(1) / (2 * (d - 1) / d * psi), 1.0, 1e-4);
  EXPECT_NEAR(dp_sent(2) / ((m + 1) * (d - 1) / d * psi), 1.0, 1e-4);
  EXPECT_NEAR(dp_sent(3) / (3 * m * (d - 1) / d * psi), 1.0, 1e-4);
}

// Expert parallelism: per MoE layer and microbatch, two all-to-alls forward (dispatch,
// combine) and two backward, each of the rank's tokens x top-k x h, (e-1)/e of it sent.
// Expert weights' gradients go over the expert-DP group, the rest over the DP group.
TEST(LlmTrace, ExpertParallelVolume) {
  GenerateOptions o = options(small_moe(), 4, 2, 1, 8);
  o.parallel.ep = 2;
  o.parallel.sp = true;
  const Summary s = summary_of(o);
  const double m = 2, layers = 4, e = 2, tokens = 128.0 / 2, k = 2, h = 256;
  const GroupVolume& ep = volume(s, 0, GroupKind::kEp);
  EXPECT_EQ(ep.operations, static_cast<std::uint64_t>(4 * layers * m));
  EXPECT_DOUBLE_EQ(ep.comm_size, 4 * layers * m * tokens * k * h * 2);
  EXPECT_DOUBLE_EQ(ep.sent, (e - 1) / e * ep.comm_size);
  // Expert weights: 2 of the 4 experts per rank, 3 h f each, whole (not split by TP).
  const double expert_bytes = layers * 2 * 3 * 256 * 512 * 2;
  const double edp = 4;  // tp 2 x dp 4 / ep 2
  EXPECT_DOUBLE_EQ(volume(s, 0, GroupKind::kExpertDp).sent, 2 * (edp - 1) / edp * expert_bytes);
}

// Context parallelism: keys and values of the whole sequence are gathered before attention
// and their gradients reduce-scattered after, per layer and microbatch.
TEST(LlmTrace, ContextParallelVolume) {
  GenerateOptions o = options(small_moe(), 1, 1, 1, 2);
  o.model.experts = 1;
  o.model.top_k = 1;
  o.parallel.cp = 2;
  o.parallel.dp = 1;
  const Summary s = summary_of(o);
  const double kv_slice = 2 * (128.0 / 2) * 128 * 2;  // K and V: tokens/cp x kv width (4 x 32) x 2 B
  const GroupVolume& cp = volume(s, 0, GroupKind::kCp);
  EXPECT_EQ(cp.operations, 2u * 4u * 2u);
  EXPECT_DOUBLE_EQ(cp.sent, 2 * 4 * 2 * kv_slice);  // (cp-1) x slice each way
}

// Activations per layer (Korthikanti et al. 2022) without the seq^2 terms a fused attention
// never stores: s b h (10 + 24/t) for GPT shapes, 34 s b h / t with --sp, 2 s b h (/ t) when
// every layer is recomputed.
TEST(LlmTrace, ActivationMemoryIsKorthikantis) {
  ParallelSpec p;
  p.tp = 4;
  const ModelSpec m = small_gpt();
  const double sbh = 128 * 256;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(make_shard(m, p), Recompute::kNone), sbh * (10 + 24.0 / 4));
  p.sp = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(make_shard(m, p), Recompute::kNone), sbh * 34 / 4);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(make_shard(m, p), Recompute::kFull), 2 * sbh / 4);
}

// ZeRO slices optimizer state (1), gradients (2) and weights (3) over the data-parallel group.
TEST(LlmTrace, MemoryEstimateByZeroStage) {
  auto mem = [](std::uint64_t zero) {
    GenerateOptions o = options(small_gpt(), 4, 1, 1, 4);
    o.parallel.zero = zero;
    const Generated g = build_iteration(o);
    return estimate_memory(g.model, g.layout, 0, 1);
  };
  const double psi = static_cast<double>(count_params(small_gpt()).total);
  EXPECT_DOUBLE_EQ(mem(0).weights, 2 * psi);
  EXPECT_DOUBLE_EQ(mem(0).grads, 2 * psi);
  EXPECT_DOUBLE_EQ(mem(0).optimizer, 12 * psi);
  EXPECT_DOUBLE_EQ(mem(1).optimizer, 12 * psi / 4);
  EXPECT_DOUBLE_EQ(mem(2).grads, 2 * psi / 4);
  EXPECT_DOUBLE_EQ(mem(3).weights, 2 * psi / 4);
  EXPECT_DOUBLE_EQ(mem(3).activations, mem(0).activations);
}

// The rules every stage trace keeps: ids unique and dependencies earlier nodes of the same
// file; each compute node depends on the compute node before it; each collective on the one
// before of its group kind; every late attribute where it belongs.
TEST(LlmTrace, DependencyRules) {
  GenerateOptions o = options(small_moe(), 4, 2, 2, 8);
  o.parallel.ep = 2;
  o.parallel.sp = true;
  o.parallel.cp = 1;
  o.parallel.zero = 1;
  const Generated g = build_iteration(o);
  for (const StageTemplate& st : g.stages) {
    const auto& nodes = st.trace.nodes;
    std::uint64_t last_compute = UINT64_MAX;
    std::map<GroupKind, std::uint64_t> last_coll;
    std::map<std::uint64_t, std::size_t> index;
    for (std::size_t i = 0; i < nodes.size(); ++i) index[nodes[i].id()] = i;
    ASSERT_EQ(index.size(), nodes.size());
    // Nodes are stored in id order, so "before" means a smaller id.
    std::vector<std::size_t> order(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return nodes[a].id() < nodes[b].id(); });
    for (std::size_t i : order) {
      const chakra::Node& n = nodes[i];
      for (std::uint64_t d : n.data_deps()) {
        ASSERT_TRUE(index.count(d)) << n.name();
        EXPECT_LT(d, n.id()) << n.name();
      }
      auto depends_on = [&](std::uint64_t id) {
        return std::find(n.data_deps().begin(), n.data_deps().end(), id) != n.data_deps().end();
      };
      const NodeStats& s = st.stats[i];
      if (s.role == NodeRole::kCompute) {
        if (last_compute != UINT64_MAX) {
          EXPECT_TRUE(depends_on(last_compute)) << n.name();
        }
        last_compute = n.id();
        EXPECT_GT(chakra::attr_uint(n, "num_ops").value_or(0), 0u) << n.name();
        EXPECT_GT(chakra::attr_uint(n, "tensor_size").value_or(0), 0u) << n.name();
        EXPECT_GE(n.duration_micros(), 1u);
        EXPECT_TRUE(st.late[i].empty());
      } else if (s.role == NodeRole::kCollective) {
        if (last_coll.count(s.group)) {
          EXPECT_TRUE(depends_on(last_coll[s.group])) << n.name();
        }
        last_coll[s.group] = n.id();
        ASSERT_EQ(st.late[i].size(), 1u) << n.name();
        EXPECT_EQ(st.late[i][0].field, LateField::kPgName);
        EXPECT_EQ(st.late[i][0].code, static_cast<std::int32_t>(s.group));
      } else {
        EXPECT_EQ(st.late[i].size(), 2u) << n.name();
      }
    }
  }
}

// Every send has its receive on the peer rank, with the same tag and size (the simulator
// pairs the k-th send and receive of each (tag, src, dst, size)); and every member of a group
// runs that group's collectives in the same order with the same sizes, so none can hang.
TEST(LlmTrace, MessagesPairAndGroupsAgree) {
  GenerateOptions o = options(small_gpt(), 2, 2, 4, 16);
  o.parallel.schedule = Schedule::kInterleaved;
  o.parallel.vpp = 2;
  o.parallel.zero = 1;
  const Generated g = build_iteration(o);
  using Msg = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;  // src dst tag size
  std::multiset<Msg> sends, recvs;
  std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> per_group;  // pg -> (type, size)
  std::map<std::string, std::set<std::uint64_t>> members;
  for (std::uint64_t r = 0; r < g.layout.ranks(); ++r) {
    const chakra::Trace t = materialize(g.stages[g.layout.coord(r).p], g.layout, r);
    std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> mine;
    std::vector<const chakra::Node*> sorted;
    for (const chakra::Node& n : t.nodes) sorted.push_back(&n);
    std::sort(sorted.begin(), sorted.end(), [](auto a, auto b) { return a->id() < b->id(); });
    for (const chakra::Node* n : sorted) {
      const auto size = chakra::attr_int(*n, "comm_size").value_or(-1);
      if (n->type() == ChakraProtoMsg::COMM_SEND_NODE || n->type() == ChakraProtoMsg::COMM_RECV_NODE) {
        Msg msg{*chakra::attr_int(*n, "comm_src"), *chakra::attr_int(*n, "comm_dst"), *chakra::attr_int(*n, "comm_tag"),
                size};
        (n->type() == ChakraProtoMsg::COMM_SEND_NODE ? sends : recvs).insert(msg);
        EXPECT_EQ(n->type() == ChakraProtoMsg::COMM_SEND_NODE ? std::get<0>(msg) : std::get<1>(msg),
                  static_cast<std::int64_t>(r));
      }
      if (n->type() == ChakraProtoMsg::COMM_COLL_NODE) {
        const std::string pg = chakra::attr_string(*n, "pg_name").value_or("");
        mine[pg].emplace_back(*chakra::attr_int(*n, "comm_type"), size);
        members[pg].insert(r);
      }
    }
    for (auto& [pg, list] : mine) {
      auto [it, fresh] = per_group.emplace(pg, list);
      if (!fresh) {
        EXPECT_EQ(it->second, list) << "group " << pg << " rank " << r;
      }
    }
  }
  EXPECT_EQ(sends, recvs);
  EXPECT_EQ(sends.size(), 2u * 2u * 2u * (16 / 2) * (4 * 2 - 1));  // tp x dp x 2 ways x m x boundaries
  // A group's collectives run on exactly its members.
  const nlohmann::json groups = nlohmann::json::parse(g.layout.groups_json());
  for (const auto& [pg, ranks] : members) {
    ASSERT_TRUE(groups.contains(pg)) << pg;
    const auto listed = groups[pg].get<std::set<std::uint64_t>>();
    EXPECT_EQ(listed, ranks) << pg;
  }
}

// The fast writer gives exactly the bytes of serialising each rank's full trace.
TEST(LlmTrace, FastWriterMatchesSerialisation) {
  GenerateOptions o = options(small_moe(), 4, 2, 2, 8);
  o.parallel.ep = 2;
  o.parallel.sp = true;
  const Generated g = build_iteration(o);
  for (std::uint64_t r : {0u, 5u, 10u, 15u}) {
    const StageTemplate& st = g.stages[g.layout.coord(r).p];
    EXPECT_EQ(StageBytes(st).rank_file(g.layout, r), chakra::serialize_trace(materialize(st, g.layout, r))) << r;
  }
}

// Fusion changes how many nodes there are, not the work or its time (up to the rounding of
// each node to whole microseconds).
TEST(LlmTrace, FusionKeepsTheWork) {
  GenerateOptions o = options(small_gpt(), 1, 2, 2, 4);
  o.model.hidden = 2048;
  o.model.ffn = 8192;
  o.model.seq = 2048;
  const Summary fused = summary_of(o);
  o.per_op_nodes = true;
  const Summary single = summary_of(o);
  EXPECT_LT(fused.stages[0].nodes, single.stages[0].nodes);
  EXPECT_DOUBLE_EQ(fused.trace_matmul_flops, single.trace_matmul_flops);
  EXPECT_NEAR(fused.stages[0].compute_us / single.stages[0].compute_us, 1.0, 0.02);
  for (std::size_t k = 0; k < kOpKinds; ++k) {
    EXPECT_NEAR(fused.stages[0].ns_by_kind[k], single.stages[0].ns_by_kind[k], 1e-3);
  }
}

// --gpus-per-node changes the scale-up domain of the network file.
TEST(LlmTrace, GpusPerNodeOverride) {
  GenerateOptions o = options(small_gpt(), 4, 2, 2, 4);
  o.gpus_per_node = 4;
  const Generated g = build_iteration(o);
  EXPECT_EQ(g.gpu.gpus_per_node, 4u);
  EXPECT_THAT(network_yaml(g.gpu, g.layout.ranks()), ::testing::HasSubstr("npus_count: [ 4, 4 ]"));
}

// A node's duration is the sum of its ops' derated rooflines: one GEMM alone (per-op nodes),
// the QKV projection of a layer with h = 4096, 2048 tokens, t = 1: 2 x 2048 x 4096 x 12288
// FLOPs at 989 x 0.70 TFLOP/s = 298 us.
TEST(LlmTrace, GemmDuration) {
  GenerateOptions o = options(small_gpt(), 2, 1, 1, 2);
  o.model.hidden = 4096;
  o.model.ffn = 16384;
  o.model.heads = 32;
  o.model.kv_heads = 32;
  o.model.seq = 2048;
  o.per_op_nodes = true;
  const Generated g = build_iteration(o);
  bool found = false;
  for (const chakra::Node& n : g.stages[0].trace.nodes) {
    if (n.name() != "F0.L0.qkv") continue;
    found = true;
    const double flops = 2.0 * 2048 * 4096 * 12288;
    EXPECT_EQ(chakra::attr_int(n, "num_ops"), static_cast<std::int64_t>(flops));
    EXPECT_EQ(n.duration_micros(), static_cast<std::uint64_t>(std::llround(flops / (989e12 * 0.7) * 1e6)));
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace chakrasim::test

namespace chakrasim::test {
namespace {

// --op-shapes: every GEMM is a compute node of its own whose gemm attribute (the forward layer)
// and pass give back the node's FLOPs: 2 x M x N x K, for the forward and both gradients, in
// every kind of parallelism; no other kind of op shares its node, and the iteration's FLOPs are
// the same as without shapes.
TEST(LlmTrace, OpShapesGiveEveryGemmItsOwnNodeAndItsFlops) {
  std::vector<GenerateOptions> cases = {options(small_gpt(), 2, 2, 2, 8), options(small_moe(), 4, 2, 2, 8)};
  cases[1].parallel.ep = 2;
  cases[1].parallel.sp = true;
  for (GenerateOptions o : cases) {
    const double plain_flops = summary_of(o).trace_matmul_flops;
    o.op_shapes = true;
    const Generated g = build_iteration(o);
    EXPECT_EQ(summarize(g.model, g.layout, g.gpu, g.stages).trace_matmul_flops, plain_flops) << o.model.name;
    std::size_t shaped = 0, matched = 0;
    std::map<std::string, std::vector<std::int64_t>> forward_dims;
    for (const StageTemplate& st : g.stages) {
      for (std::size_t i = 0; i < st.trace.nodes.size(); ++i) {
        const chakra::Node& node = st.trace.nodes[i];
        const NodeStats& s = st.stats[i];
        const chakra::Attribute* gemm = chakra::find_attribute(node, "gemm");
        const bool has_gemm_op = s.role == NodeRole::kCompute && s.ns_by_kind[0] > 0;
        ASSERT_EQ(gemm != nullptr, has_gemm_op) << node.name();
        if (gemm == nullptr) continue;
        ++shaped;
        for (std::size_t k = 1; k < kOpKinds; ++k) EXPECT_EQ(s.ns_by_kind[k], 0.0) << node.name();
        const auto dims = chakra::attr_int_list(node, gemm).value();
        ASSERT_EQ(dims.size(), 3u);
        EXPECT_NEAR(s.matmul_flops, 2.0 * static_cast<double>(dims[0] * dims[1] * dims[2]), 1e-9 * s.matmul_flops)
            << node.name();
        const std::string pass = chakra::attr_string(node, "pass").value_or("forward");
        const std::string name = node.name();
        const std::string expected = name.ends_with(".dg")   ? "input_gradient"
                                     : name.ends_with(".wg") ? "weight_gradient"
                                                             : "forward";
        EXPECT_EQ(pass, expected) << name;
        // The forward and both gradients of one layer's GEMM name the same forward shape
        // ("F0.L3.fc1", "B1.L3.fc1.dg" and "B1.L3.fc1.wg" are layer L3's fc1).
        std::string layer = name.substr(name.find('.') + 1);
        if (expected != "forward") layer.resize(layer.size() - 3);
        const auto [at, added] = forward_dims.try_emplace(layer, dims);
        EXPECT_EQ(at->second, dims) << name;
        matched += added ? 0 : 1;
      }
    }
    EXPECT_GT(shaped, 0u);
    EXPECT_GT(matched, shaped / 2);
  }
  // Without the option nothing carries a shape.
  const Generated plain = build_iteration(options(small_gpt(), 2, 2, 2, 8));
  for (const StageTemplate& st : plain.stages) {
    for (const chakra::Node& node : st.trace.nodes) EXPECT_EQ(chakra::find_attribute(node, "gemm"), nullptr);
  }
}

}  // namespace
}  // namespace chakrasim::test
