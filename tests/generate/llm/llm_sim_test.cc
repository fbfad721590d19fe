// Generated LLM iterations run in the simulator: every kind of parallelism and schedule
// finishes on every rank (no deadlock), the simulated time is at least the compute, and the
// schedules compare as pipeline theory says.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "chakra/workload_files.h"
#include "config/network_config.h"
#include "config/other_configs.h"
#include "config/system_config.h"
#include "core/read_file.h"
#include "generate/llm/llm_generator.h"
#include "support/test_support.h"
#include "workload/executor.h"

namespace chakrasim::test {
namespace {

using namespace tools::llm;

ModelSpec tiny(bool moe) {
  ModelSpec m = model_preset(moe ? "mixtral-8x7b" : "gpt3-13b");
  m.layers = 8;
  m.hidden = 512;
  m.ffn = 1024;
  m.heads = 8;
  m.kv_heads = moe ? 4 : 8;
  m.seq = 256;
  m.vocab = 2048;
  if (moe) m.experts = 4;
  return m;
}

struct SimRun {
  sim::Result result;
  Summary summary;
  WrittenFiles files;
};

// When NPU 0 starts and ends its nodes, by name.
class Timeline final : public workload::NodeObserver {
 public:
  explicit Timeline(const chakra::Graph& graph) : graph_(graph) {}
  void on_node_start(NpuId npu, std::uint32_t node, Tick now) override {
    if (npu == 0) starts.emplace_back(graph_.name(node), now);
  }
  void on_node_end(NpuId npu, std::uint32_t node, Tick now) override {
    if (npu == 0) ends.emplace_back(graph_.name(node), now);
  }
  std::vector<std::pair<std::string, Tick>> starts, ends;

 private:
  const chakra::Graph& graph_;
};

// Generates into a fresh directory with the matching network and system files and simulates.
// With `timeline`, every NPU is simulated and NPU 0's node times are recorded there.
// Generates into a fresh directory with the matching network and system files: the inputs of a run.
sim::Inputs generated_inputs(const std::string& name, const GenerateOptions& base, GenerateResult& g) {
  const auto dir = temp_dir("llm_sim_" + name);
  GenerateOptions o = base;
  o.out_prefix = (dir / "t").string();
  o.network_out = (dir / "network.yml").string();
  o.system_out = (dir / "system.json").string();
  g = generate_llm(o);
  sim::Inputs in;
  in.network = config::load_network(o.network_out);
  const config::SystemConfig system = config::load_system(o.system_out, {});
  in.system = system.system;
  in.compute = system.compute;
  const std::uint64_t ranks = g.summary.ranks;
  in.groups = config::load_comm_groups(g.groups_path, static_cast<NpuId>(ranks));
  in.graphs = chakra::load_workload(o.out_prefix, ranks);
  return in;
}

// Generates and simulates. With `timeline`, every NPU is simulated and NPU 0's node times are
// recorded there.
SimRun simulate(const std::string& name, const GenerateOptions& base, std::unique_ptr<Timeline>* timeline = nullptr) {
  GenerateResult g;
  sim::Inputs in = generated_inputs(name, base, g);
  if (timeline != nullptr) {
    *timeline = std::make_unique<Timeline>(*in.graphs[0]);
    in.allow_symmetry = false;
    return {sim::simulate(in, timeline->get()), g.summary, g.files};
  }
  return {run(in), g.summary, g.files};
}

GenerateOptions options(bool moe, std::uint64_t dp, std::uint64_t tp, std::uint64_t pp, std::uint64_t batch) {
  GenerateOptions o;
  o.model = tiny(moe);
  o.parallel.dp = dp;
  o.parallel.tp = tp;
  o.parallel.pp = pp;
  o.parallel.global_batch = batch;
  return o;
}

void expect_finished(const SimRun& r, const std::string& what) {
  ASSERT_TRUE(r.result.all_finished()) << what;
  ASSERT_EQ(r.result.npus.size(), r.summary.ranks) << what;
  double busiest_us = 0;
  for (const StageSummary& s : r.summary.stages) busiest_us = std::max(busiest_us, s.compute_us);
  EXPECT_GE(static_cast<double>(r.result.max_finish_ns()), busiest_us * 1000) << what;
}

TEST(LlmSim, EveryParallelismFinishes) {
  struct Case {
    std::string name;
    GenerateOptions o;
  };
  std::vector<Case> cases;
  cases.push_back({"dp_tp_pp", options(false, 2, 2, 2, 8)});
  GenerateOptions sp = options(false, 2, 4, 2, 8);
  sp.parallel.sp = true;
  sp.parallel.zero = 1;
  sp.parallel.recompute = Recompute::kFull;
  cases.push_back({"sp_zero1_full", sp});
  GenerateOptions gpipe = options(false, 1, 2, 4, 8);
  gpipe.parallel.schedule = Schedule::kGpipe;
  cases.push_back({"gpipe", gpipe});
  GenerateOptions inter = options(false, 2, 2, 2, 8);
  inter.parallel.schedule = Schedule::kInterleaved;
  inter.parallel.vpp = 2;
  cases.push_back({"interleaved", inter});
  GenerateOptions cp = options(false, 2, 2, 1, 4);
  cp.parallel.cp = 2;
  cp.parallel.zero = 2;
  cases.push_back({"cp_zero2", cp});
  GenerateOptions zero3 = options(false, 4, 2, 1, 8);
  zero3.parallel.zero = 3;
  zero3.parallel.recompute = Recompute::kSelective;
  cases.push_back({"zero3", zero3});
  GenerateOptions moe = options(true, 4, 2, 2, 8);
  moe.parallel.ep = 4;
  moe.parallel.sp = true;
  moe.parallel.zero = 1;
  cases.push_back({"moe", moe});
  GenerateOptions world = options(false, 8, 1, 1, 16);  // the DP group is every rank
  cases.push_back({"pure_dp", world});
  for (const Case& c : cases) expect_finished(simulate(c.name, c.o), c.name);
}

// Ranks of one stage differ only in peers and groups: the run folds them into classes
// (sim/rank_classes.h) and gives every rank the full run's figures. The generator's layouts
// put tp in network dimension 0 and dp, pp in dimension 1, both switches; its system runs
// halving-doubling, so the moves are flips.
TEST(LlmSim, RanksFoldIntoClassesAsInTheFullRun) {
  struct Case {
    std::string name;
    GenerateOptions o;
    std::uint32_t classes;
  };
  std::vector<Case> cases;
  cases.push_back({"fold_dp_tp_pp", options(false, 2, 2, 2, 8), 2});  // one per stage
  GenerateOptions sp = options(false, 4, 4, 2, 8);
  sp.parallel.sp = true;
  sp.parallel.zero = 1;
  cases.push_back({"fold_sp_zero1", sp, 2});
  GenerateOptions inter = options(false, 2, 2, 4, 8);
  inter.parallel.schedule = Schedule::kInterleaved;
  inter.parallel.vpp = 2;
  cases.push_back({"fold_interleaved", inter, 4});
  GenerateOptions moe = options(true, 4, 2, 2, 8);
  moe.parallel.ep = 4;
  moe.parallel.sp = true;
  cases.push_back({"fold_moe", moe, 4});  // EP all-to-alls run direct, which flips do not keep
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GenerateResult g;
    sim::Inputs in = generated_inputs(c.name, c.o, g);
    const sim::Result folded = run(in);
    in.allow_symmetry = false;
    const sim::Result full = run(in);
    if (c.classes > 0) {
      EXPECT_EQ(folded.classes_simulated, c.classes);
    }
    ASSERT_TRUE(full.all_finished());
    ASSERT_EQ(folded.npus.size(), full.npus.size());
    for (std::size_t r = 0; r < full.npus.size(); ++r) {
      EXPECT_EQ(folded.npus[r].finish_ns, full.npus[r].finish_ns) << "NPU " << r;
      EXPECT_EQ(folded.npus[r].exposed_comm_ns, full.npus[r].exposed_comm_ns) << "NPU " << r;
      EXPECT_EQ(folded.npus[r].split.by_group_kind_ns, full.npus[r].split.by_group_kind_ns) << "NPU " << r;
    }
    std::printf("%s: %u classes of %zu ranks\n", c.name.c_str(), folded.classes_simulated, full.npus.size());
  }
}

// Data parallelism alone: every rank's trace is the same (no pg_name, no pipeline), so the
// files are hard links of one and the simulator runs NPU 0 alone.
TEST(LlmSim, PureDataParallelRanksShareOneFile) {
  const SimRun r = simulate("shared", options(false, 8, 1, 1, 8));
  EXPECT_EQ(r.files.files, 8u);
  EXPECT_EQ(r.files.distinct, 1u);
  EXPECT_TRUE(r.result.symmetric);
  // Any other layout has rank-specific groups and peers: every file is its own.
  EXPECT_EQ(simulate("distinct", options(false, 4, 2, 1, 8)).files.distinct, 8u);
}

// Megatron's overlapped gradient reduction: the first bucket's all-reduce starts while the
// last microbatch's backward still runs (buckets of one layer, 8 layers).
TEST(LlmSim, GradientBucketsOverlapTheBackward) {
  GenerateOptions o = options(false, 2, 1, 1, 2);
  o.model.hidden = 2048;
  o.model.ffn = 8192;
  o.model.heads = 16;
  o.model.kv_heads = 16;
  o.model.seq = 2048;
  o.parallel.grad_bucket_params = 1;  // a bucket per layer
  std::unique_ptr<Timeline> timeline;
  const SimRun r = simulate("overlap", o, &timeline);
  ASSERT_TRUE(r.result.all_finished());
  Tick first_reduce = 0, last_backward = 0;
  std::size_t reduces = 0;
  for (const auto& [name, t] : timeline->starts) {
    if (name == "step.grad.ar" && reduces++ == 0) first_reduce = t;
  }
  for (const auto& [name, t] : timeline->ends) {
    if (name.rfind("B0", 0) == 0) last_backward = std::max(last_backward, t);
  }
  EXPECT_EQ(reduces, 8u + 2u);  // a bucket per layer, the embedding's and the final norm's
  EXPECT_GT(first_reduce, 0u);
  EXPECT_LT(first_reduce, last_backward);
}

// The pipeline bubble: on 4 stages with 4 microbatches, interleaving 2 chunks per stage
// shortens the iteration against 1F1B.
TEST(LlmSim, InterleavingShrinksTheBubble) {
  GenerateOptions o = options(false, 1, 1, 4, 4);
  o.model.hidden = 4096;  // layers of about a millisecond, so that the bubble dominates
  o.model.ffn = 16384;
  o.model.heads = 32;
  o.model.kv_heads = 32;
  o.model.seq = 2048;
  const SimRun one = simulate("bubble_1f1b", o);
  o.parallel.schedule = Schedule::kInterleaved;
  o.parallel.vpp = 2;
  const SimRun inter = simulate("bubble_interleaved", o);
  ASSERT_TRUE(one.result.all_finished());
  ASSERT_TRUE(inter.result.all_finished());
  EXPECT_LT(inter.result.max_finish_ns(), one.result.max_finish_ns());
}

}  // namespace
}  // namespace chakrasim::test
