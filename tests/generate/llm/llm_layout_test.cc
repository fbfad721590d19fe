// The LLM generator's rank layout, communicator groups, pipeline schedules and the checks on
// parallel sizes.
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "generate/llm/llm_generator.h"
#include "generate/llm/llm_layout.h"
#include "generate/llm/llm_schedule.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace tools::llm;

ParallelSpec sizes(std::uint64_t dp, std::uint64_t tp, std::uint64_t pp, std::uint64_t cp = 1, std::uint64_t ep = 1) {
  ParallelSpec p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.cp = cp;
  p.ep = ep;
  return p;
}

// rank = t + T (c + C (d + D p)): T = 2, C = 2, D = 2, P = 2, 16 ranks. Rank 13 = 1 + 2 (0 + 2
// (1 + 2 x 1)): t 1, c 0, d 1, p 1.
TEST(LlmLayout, RanksAndGroups) {
  ModelSpec m = model_preset("llama3-8b");
  const Layout layout(m, sizes(2, 2, 2, 2));
  ASSERT_EQ(layout.ranks(), 16u);
  const Coord c = layout.coord(13);
  EXPECT_EQ(c.t, 1u);
  EXPECT_EQ(c.c, 0u);
  EXPECT_EQ(c.d, 1u);
  EXPECT_EQ(c.p, 1u);
  EXPECT_EQ(layout.rank(c), 13u);
  EXPECT_THAT(layout.members(GroupKind::kTp, 13), ElementsAre(12, 13));
  EXPECT_THAT(layout.members(GroupKind::kCp, 13), ElementsAre(13, 15));
  EXPECT_THAT(layout.members(GroupKind::kDp, 13), ElementsAre(9, 11, 13, 15));  // data x context
  EXPECT_THAT(layout.members(GroupKind::kPp, 13), ElementsAre(5, 13));
  EXPECT_EQ(layout.peer(13, -1), 5u);
  EXPECT_FALSE(layout.active(GroupKind::kEp));
  EXPECT_FALSE(layout.active(GroupKind::kEmbedding));  // LLaMA does not tie its embeddings
}

// Every rank is in exactly one group of each active kind, ids are distinct across kinds and
// the JSON lists each group once with its members ascending.
TEST(LlmLayout, GroupFileCoversEveryRankOncePerKind) {
  ModelSpec m = model_preset("gpt3-175b");  // tied: an embedding group between stages 0 and 3
  const Layout layout(m, sizes(4, 2, 4));
  const nlohmann::json groups = nlohmann::json::parse(layout.groups_json());
  std::set<std::uint32_t> ids;
  for (std::size_t k = 0; k < kGroupKinds; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    if (!layout.active(kind)) continue;
    for (std::uint64_t r = 0; r < layout.ranks(); ++r) {
      const std::uint32_t id = layout.group_id(kind, r);
      if (kind == GroupKind::kEmbedding && layout.coord(r).p != 0 && layout.coord(r).p != 3) {
        EXPECT_EQ(id, 0u) << "middle stages hold no embedding";
        continue;
      }
      ASSERT_TRUE(groups.contains(std::to_string(id))) << group_kind_name(kind) << " rank " << r;
      const auto members = groups[std::to_string(id)].get<std::vector<std::uint64_t>>();
      EXPECT_EQ(members, layout.members(kind, r));
      EXPECT_EQ(members.size(), layout.group_size(kind));
      ids.insert(id);
    }
  }
  EXPECT_EQ(ids.size(), groups.size());
  // TP 16 groups of 2, DP 8 of 4, PP 8 of 4, EMB 8 pairs.
  EXPECT_EQ(groups.size(), 16u + 8u + 8u + 8u);
  EXPECT_EQ(groups[std::to_string(layout.group_id(GroupKind::kEmbedding, 1))], nlohmann::json({1, 25}));
}

// Tensor-parallel groups sit in one 8-GPU domain (ids vary fastest in network dimension 0);
// data-parallel neighbours are a domain apart.
TEST(LlmLayout, TensorParallelGroupsStayInsideOneNode) {
  const Layout layout(model_preset("gpt3-175b"), sizes(16, 8, 8));
  for (std::uint64_t r = 0; r < layout.ranks(); r += 37) {
    const auto tp = layout.members(GroupKind::kTp, r);
    EXPECT_EQ(tp.front() / 8, tp.back() / 8) << r;
    const auto dp = layout.members(GroupKind::kDp, r);
    EXPECT_EQ(dp[1] - dp[0], 8u);
  }
}

// Expert parallelism: runs of E data-parallel ranks; expert weights' gradients are summed over
// the ranks that hold the same experts (every t and c, every E-th d).
TEST(LlmLayout, ExpertGroups) {
  ParallelSpec p = sizes(4, 2, 1, 1, 2);
  p.sp = true;
  const Layout layout(model_preset("mixtral-8x7b"), p);
  EXPECT_THAT(layout.members(GroupKind::kEp, 5), ElementsAre(5, 7));  // t 1, d 2 and 3
  EXPECT_THAT(layout.members(GroupKind::kExpertDp, 5), ElementsAre(0, 1, 4, 5));
  EXPECT_EQ(layout.group_size(GroupKind::kExpertDp), 4u);
}

TEST(LlmLayout, MicrobatchesAndDefaults) {
  ParallelSpec p = sizes(4, 1, 2);
  p.microbatch = 2;
  p.global_batch = 64;
  EXPECT_EQ(Layout(model_preset("llama3-8b"), p).microbatches(), 8u);
  p.global_batch = 0;  // one microbatch per data-parallel rank
  EXPECT_EQ(Layout(model_preset("llama3-8b"), p).microbatches(), 1u);
}

// Every inconsistent size is an error naming the flag.
TEST(LlmLayout, BadParallelSizesNameTheFlag) {
  auto bad = [](const std::string& model, ParallelSpec p) { return error_of([&] { Layout(model_preset(model), p); }); };
  ParallelSpec p = sizes(1, 1, 1);
  p.dp = 0;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("--dp: expected a positive number, got 0"));
  const std::vector<std::pair<std::string, std::uint64_t ParallelSpec::*>> fields =
      {{"--tp", &ParallelSpec::tp},
       {"--pp", &ParallelSpec::pp},
       {"--cp", &ParallelSpec::cp},
       {"--ep", &ParallelSpec::ep},
       {"--vpp", &ParallelSpec::vpp},
       {"--microbatch", &ParallelSpec::microbatch},
       {"--grad-bucket", &ParallelSpec::grad_bucket_params}};
  for (const auto& [flag, field] : fields) {
    p = sizes(1, 1, 1);
    p.*field = 0;
    EXPECT_THAT(bad("llama3-8b", p), HasSubstr(flag + ": expected a positive number, got 0"));
  }
  p = sizes(1, 1, 1);
  p.vpp = 33;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("--vpp 33: expected at most --layers 32"));
  p = sizes(1, 1, 1);
  p.microbatch = 1ull << 20;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("--microbatch 1048576 x --seq 8192: expected at most 268435456 tokens"));
  EXPECT_THAT(bad("llama3-8b", sizes(1, 3, 1)), HasSubstr("--tp 3 does not divide --heads 32"));
  EXPECT_THAT(bad("llama3-8b", sizes(1, 16, 1)), HasSubstr("--tp 16 does not divide --kv-heads 8"));
  EXPECT_THAT(bad("llama3-8b", sizes(1, 1, 5)), HasSubstr("--layers 32 is not a multiple of --pp 5"));
  EXPECT_THAT(bad("llama3-8b", sizes(1, 1, 1, 3)), HasSubstr("--cp 3 does not divide --seq 8192"));
  EXPECT_THAT(bad("llama3-8b", sizes(2, 1, 1, 1, 2)), HasSubstr("--ep 2: expected a mixture-of-experts model"));
  EXPECT_THAT(bad("mixtral-8x7b", sizes(6, 1, 1, 1, 3)), HasSubstr("--ep 3 does not divide --experts 8"));
  EXPECT_THAT(bad("mixtral-8x7b", sizes(2, 1, 1, 1, 4)), HasSubstr("--ep 4 does not divide --dp 2"));
  EXPECT_THAT(bad("mixtral-8x7b", sizes(2, 2, 1)), HasSubstr("needs --sp"));
  EXPECT_THAT(bad("llama3-8b", sizes(1ull << 11, 1ull << 10, 1)), HasSubstr("expected at most 1048576"));
  p = sizes(4, 1, 1);
  p.global_batch = 6;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("--global-batch 6 is not a multiple of --microbatch 1 x --dp 4"));
  p = sizes(1, 1, 2);
  p.schedule = Schedule::kInterleaved;
  p.vpp = 2;
  p.global_batch = 3;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("not a multiple of --pp 2"));
  p.vpp = 1;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("--schedule interleaved: expected --vpp of at least 2"));
  p = sizes(1, 1, 2);
  p.vpp = 2;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("--vpp 2: expected --schedule interleaved"));
  p = sizes(2, 1, 2);
  p.zero = 2;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("--zero 2 with --pp 2"));
  p.zero = 4;
  EXPECT_THAT(bad("llama3-8b", p), HasSubstr("--zero 4: expected a ZeRO stage"));
  p = sizes(2, 1, 1);
  p.zero = 3;
  EXPECT_THAT(bad("mixtral-8x7b", p), HasSubstr("--zero 3 with a mixture of experts"));
  p = sizes(1, 2, 1);
  p.sp = true;
  ModelSpec odd = model_preset("llama3-8b");
  odd.seq = 4095;
  EXPECT_THAT(error_of([&] { Layout(odd, p); }), HasSubstr("--sp: --tp 2 does not divide the 4095 tokens"));
}

std::string order(const std::vector<Task>& tasks) {
  std::string s;
  for (const Task& t : tasks) {
    s += fmt::format("{}{}", t.backward ? 'B' : 'F', t.microbatch);
    if (t.chunk > 0) s += fmt::format("c{}", t.chunk);
    s += ' ';
  }
  return s;
}

// 1F1B on 4 stages, 6 microbatches: stage s warms up with 3 - s forwards.
TEST(LlmSchedule, OneForwardOneBackward) {
  EXPECT_EQ(order(stage_tasks(Schedule::kOneFOneB, 4, 0, 6, 1)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  EXPECT_EQ(order(stage_tasks(Schedule::kOneFOneB, 4, 3, 6, 1)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
  EXPECT_EQ(peak_in_flight(stage_tasks(Schedule::kOneFOneB, 4, 0, 6, 1)), 4u);
  EXPECT_EQ(peak_in_flight(stage_tasks(Schedule::kOneFOneB, 4, 3, 6, 1)), 1u);
  // Fewer microbatches than stages: the warm-up is cut at m.
  EXPECT_EQ(order(stage_tasks(Schedule::kOneFOneB, 4, 0, 2, 1)), "F0 F1 B0 B1 ");
}

TEST(LlmSchedule, Gpipe) {
  EXPECT_EQ(order(stage_tasks(Schedule::kGpipe, 2, 1, 3, 1)), "F0 F1 F2 B0 B1 B2 ");
  EXPECT_EQ(peak_in_flight(stage_tasks(Schedule::kGpipe, 2, 1, 3, 1)), 3u);
}

// Megatron-LM's interleaved order, 2 stages x 2 chunks, 4 microbatches. Stage 0 warms up with
// (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4 forwards: microbatches 0, 1 on chunk 0, then on chunk 1.
TEST(LlmSchedule, Interleaved) {
  EXPECT_EQ(order(stage_tasks(Schedule::kInterleaved, 2, 0, 4, 2)), "F0 F1 F0c1 F1c1 F2 B0c1 F3 B1c1 F2c1 B0 F3c1 B1 "
                                                                    "B2c1 B3c1 B2 B3 ");
  EXPECT_EQ(order(stage_tasks(Schedule::kInterleaved, 2, 1, 4, 2)), "F0 F1 F0c1 B0c1 F1c1 B1c1 F2 B0 F3 B1 F2c1 B2c1 "
                                                                    "F3c1 B3c1 B2 B3 ");
}

// TP and EP groups that leave the 8-GPU domain are named; groups inside it are not. Ranks go
// t fastest, then c, then d: TP 16 takes ranks 0-15 (two domains); EP 2 over TP 8 takes ranks 0
// and 8 (two domains); EP 4 over TP 2 takes 0, 2, 4, 6 (one).
TEST(LlmLayout, WarnsWhenTpOrEpLeavesTheScaleUpDomain) {
  const GpuSpec h100 = gpu_preset("H100");
  const ModelSpec mixtral = model_preset("mixtral-8x7b");
  auto sp = [](ParallelSpec p) {  // a mixture of experts under TP needs sequence parallelism
    p.sp = true;
    return p;
  };
  EXPECT_TRUE(domain_warnings(Layout(mixtral, sp(sizes(2, 8, 1))), h100).empty());
  EXPECT_TRUE(domain_warnings(Layout(mixtral, sp(sizes(4, 2, 1, 1, 4))), h100).empty());
  const auto tp = domain_warnings(Layout(model_preset("gpt3-175b"), sizes(1, 16, 1)), h100);
  ASSERT_EQ(tp.size(), 1u);
  EXPECT_THAT(tp[0], HasSubstr("--tp 16: each TP group spans 2 scale-up domains of 8 GPUs (the first: ranks 0, 1, 2, "
                               "3, ...), so its collectives cross the scale-out network"));
  const auto ep = domain_warnings(Layout(mixtral, sp(sizes(2, 8, 1, 1, 2))), h100);
  ASSERT_EQ(ep.size(), 1u);
  EXPECT_THAT(ep[0], HasSubstr("--ep 2 (with --tp 8 --cp 1): each EP group spans 2 scale-up domains of 8 GPUs (the "
                               "first: ranks 0, 8)"));
  GpuSpec big_domain = h100;
  big_domain.gpus_per_node = 16;
  EXPECT_TRUE(domain_warnings(Layout(model_preset("gpt3-175b"), sizes(1, 16, 1)), big_domain).empty());
}

}  // namespace
}  // namespace chakrasim::test
