// `chakra synthesize learn|generate` (tools/synthesize): models that hold nothing of the input but
// its structure and numbers, traces drawn from them that run like the originals on several
// systems, ranks that agree on every collective and message, jobs re-sized along their
// data-parallel axis, and bad models refused with the key that is wrong.
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "core/error.h"
#include "support/test_support.h"
#include "tools/synthesize/synthesis_generator.h"
#include "tools/synthesize/synthesis_learner.h"
#include "tools/synthesize/synthesis_model.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

// Three systems of different bandwidths, topologies and algorithms for `npus` ranks (a multiple
// of 4): the generated one, rings on a ring-and-switch network of about a quarter of its
// bandwidth, and direct algorithms with the roofline on.
std::vector<std::pair<std::string, std::string>> three_systems(const std::filesystem::path& dir, std::size_t npus) {
  nlohmann::json base = nlohmann::json::parse(file_bytes(dir / "s0.json"));
  nlohmann::json rings = base, direct = base;
  for (const char* key : {"all-reduce-implementation", "reduce-scatter-implementation", "all-gather-implementation"}) {
    rings[key] = {"ring", "ring"};
    direct[key] = {"direct"};
  }
  direct["roofline-enabled"] = 1;
  write_bytes(dir / "s1.json", rings.dump());
  write_bytes(dir / "s2.json", direct.dump());
  write_bytes(dir / "n1.yml", "topology: [ Ring, Switch ]\nnpus_count: [ 4, " + std::to_string(npus / 4) +
                                  " ]\nbandwidth: [ 100, 12 ]\nlatency: [ 500, 2000 ]\n");
  return {{"s0.json", "n0.yml"}, {"s1.json", "n1.yml"}, {"s2.json", "n0.yml"}};
}

struct RunFigures {
  double finish_ns = 0;
  std::map<std::string, double> bytes_by_type;
};

RunFigures run_figures(const std::filesystem::path& dir, const std::string& prefix, const std::string& system,
                       const std::string& network) {
  const std::string json = prefix + ".run.json";
  const CommandResult r =
      run_binary({"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json", "--network",
                  (dir / network).string(), "--system", (dir / system).string(), "--json", json});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(file_bytes(json));
  RunFigures f;
  for (const auto& npu : j["npus"]) f.finish_ns = std::max(f.finish_ns, npu["finish_ns"].get<double>());
  for (const auto& c : j["collectives"])
    f.bytes_by_type[c["kind"].get<std::string>()] += c["comm_size_bytes"].get<double>();
  return f;
}

// Every string value of a JSON document (keys apart).
void strings_of(const nlohmann::json& j, std::set<std::string>& out) {
  if (j.is_string()) out.insert(j.get<std::string>());
  if (j.is_array() || j.is_object()) {
    for (const auto& v : j) strings_of(v, out);
  }
}

// The bar: the synthesized traces of a generated LLM job (TP, PP, DP with ZeRO-1), learned with
// values pooled over every loop repetition (--resolution 0, the most statistical model), take
// the original's time within 5% on each of three systems (mean over 10 seeds), and every
// collective type moves the original's bytes within 1% (each slot's total is kept: exactly).
TEST(Synthesize, SynthesizedTracesRunLikeTheOriginalOnThreeSystems) {
  const auto dir = temp_dir("synthesize_llm");
  const std::string in = (dir / "g").string();
  ASSERT_EQ(run_binary(
                small_llm({"--dp", "2", "--tp", "2", "--pp", "2", "--global-batch", "8", "--zero", "1", "--out", in,
                           "--network-out", (dir / "n0.yml").string(), "--system-out", (dir / "s0.json").string()}))
                .exit_code,
            0);
  const std::string model = (dir / "m.json").string();
  const CommandResult l = run_binary({"chakra", "synthesize", "learn", in, "--model", model, "--resolution", "0"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_THAT(l.out, HasSubstr("learned 8 ranks"));
  for (int seed = 1; seed <= 10; ++seed) {
    const std::string out = (dir / ("s" + std::to_string(seed))).string();
    const CommandResult g =
        run_binary({"chakra", "synthesize", "generate", model, "--out", out, "--seed", std::to_string(seed)});
    ASSERT_EQ(g.exit_code, 0) << g.err;
  }
  bool any_differs = false;
  for (const auto& [system, network] : three_systems(dir, 8)) {
    const RunFigures original = run_figures(dir, in, system, network);
    double sum = 0;
    for (int seed = 1; seed <= 10; ++seed) {
      const RunFigures s = run_figures(dir, (dir / ("s" + std::to_string(seed))).string(), system, network);
      sum += s.finish_ns / original.finish_ns;
      any_differs |= s.finish_ns != original.finish_ns;
      ASSERT_EQ(s.bytes_by_type.size(), original.bytes_by_type.size());
      for (const auto& [type, bytes] : original.bytes_by_type) {
        EXPECT_NEAR(s.bytes_by_type.at(type) / bytes, 1.0, 0.01) << system << " " << type;
      }
    }
    EXPECT_NEAR(sum / 10, 1.0, 0.05) << system;
  }
  // Pooled values are drawn, not replayed: some seed runs differently.
  EXPECT_TRUE(any_differs);
  // The same seed draws the same traces; another seed others.
  ASSERT_EQ(run_binary({"chakra", "synthesize", "generate", model, "--out", (dir / "again").string(), "--seed", "1"})
                .exit_code,
            0);
  EXPECT_EQ(file_bytes(dir / "again.0.et"), file_bytes(dir / "s1.0.et"));
  EXPECT_NE(file_bytes(dir / "s2.0.et"), file_bytes(dir / "s1.0.et"));
  // With the default resolution the layers' sizes stay apart: this job runs exactly as learned.
  ASSERT_EQ(run_binary({"chakra", "synthesize", "learn", in, "--model", (dir / "m4.json").string()}).exit_code, 0);
  ASSERT_EQ(run_binary({"chakra", "synthesize", "generate", (dir / "m4.json").string(), "--out", (dir / "e").string()})
                .exit_code,
            0);
  EXPECT_EQ(run_figures(dir, (dir / "e").string(), "s0.json", "n0.yml").finish_ns,
            run_figures(dir, in, "s0.json", "n0.yml").finish_ns);
}

// The reference's text workloads (ResNet-50 data parallel; the MLP's hybrid data-model layout,
// whose collectives use involved_dim), learned at resolution 0 (ResNet-50's 54 layers become one
// loop of distributions): 3 seeds run within 5% of the original on a ring, and move its bytes.
TEST(Synthesize, TheReferencesTextWorkloads) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const auto dir = temp_dir("synthesize_text");
  write_bytes(dir / "n.yml", "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50, 12 ]\n"
                             "latency: [ 500, 2000 ]\n");
  write_bytes(dir / "s.json", R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "preferred-dataset-splits": 4,
    "active-chunks-per-dimension": 1, "all-reduce-implementation": ["ring", "ring"],
    "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
    "all-to-all-implementation": ["direct", "direct"], "collective-optimization": "localBWAware", "local-mem-bw": 50})");
  for (const char* workload : {"Resnet50_DataParallel.txt", "MLP_HybridParallel_Data_Model.txt"}) {
    const std::string in = (dir / workload).string();
    ASSERT_EQ(run_binary({"chakra", "convert", "text", (ref / "text-workloads" / workload).string(), "--npus", "8",
                          "--passes", "1", "--out", in})
                  .exit_code,
              0);
    if (!std::filesystem::exists(in + ".groups.json")) write_bytes(in + ".groups.json", "{}");
    const std::string model = in + ".model.json";
    ASSERT_EQ(run_binary({"chakra", "synthesize", "learn", in, "--model", model, "--resolution", "0"}).exit_code, 0);
    const RunFigures original = run_figures(dir, in, "s.json", "n.yml");
    for (const char* seed : {"1", "2", "3"}) {
      const std::string out = in + ".s" + seed;
      ASSERT_EQ(run_binary({"chakra", "synthesize", "generate", model, "--out", out, "--seed", seed}).exit_code, 0);
      if (!std::filesystem::exists(out + ".groups.json")) write_bytes(out + ".groups.json", "{}");
      const RunFigures s = run_figures(dir, out, "s.json", "n.yml");
      EXPECT_NEAR(s.finish_ns / original.finish_ns, 1.0, 0.05) << workload << " seed " << seed;
      for (const auto& [type, bytes] : original.bytes_by_type) {
        EXPECT_NEAR(s.bytes_by_type.at(type) / bytes, 1.0, 0.01) << workload << " " << type;
      }
    }
  }
}

// Ranks agree: every member of a group issues its k-th collective with one size, and the k-th
// message from one rank to another has one size and tag on both ends (inspect finds no problem).
TEST(Synthesize, RanksAgreeOnCollectivesAndMessages) {
  const auto dir = temp_dir("synthesize_agree");
  const std::string in = (dir / "g").string();
  ASSERT_EQ(run_binary(small_llm({"--dp", "2", "--tp", "2", "--pp", "2", "--global-batch", "8", "--out", in}))
                .exit_code,
            0);
  const std::string model = (dir / "m.json").string();
  ASSERT_EQ(run_binary({"chakra", "synthesize", "learn", in, "--model", model, "--resolution", "0"}).exit_code, 0);
  ASSERT_EQ(run_binary({"chakra", "synthesize", "generate", model, "--out", (dir / "s").string(), "--seed", "4"})
                .exit_code,
            0);
  const CommandResult inspect = run_binary({"chakra", "inspect", (dir / "s").string(), "--json"});
  EXPECT_EQ(inspect.exit_code, 0) << inspect.out;
  const nlohmann::json j = nlohmann::json::parse(inspect.out);
  EXPECT_TRUE(j["problems"].empty()) << j["problems"].dump();
  EXPECT_EQ(j["totals"]["sends"]["count"], j["totals"]["recvs"]["count"]);
  EXPECT_GT(j["totals"]["sends"]["count"].get<int>(), 0);
  // Two ranks of different classes (rank 1 computes first), whose all-reduces and messages vary
  // in size over a loop: each class draws its own order, and the first rank's draw is taken.
  const std::string hand = (dir / "h").string();
  for (int rank = 0; rank < 2; ++rank) {
    chakra::TraceBuilder b;
    if (rank == 1) b.comp("warm-up", 3);
    for (int layer = 0; layer < 8; ++layer) {
      chakra::Node& c = b.comp("c", static_cast<std::uint64_t>(5 + layer));
      if (!b.trace().nodes.empty() && b.trace().nodes.size() > 1) c.add_data_deps(b.trace().nodes.size() - 2);
      b.collective("ar", chakra::CommType::kAllReduce, static_cast<std::uint64_t>(1024) << layer,
                   {b.trace().nodes.size() - 1});
      auto m = rank == 0 ? b.send("s", 1, layer, static_cast<std::uint64_t>(512) << (7 - layer))
                         : b.recv("r", 0, layer, static_cast<std::uint64_t>(512) << (7 - layer));
      m.data_deps({b.trace().nodes.size() - 2});
    }
    chakra::write_trace(chakra::rank_path(hand, static_cast<std::size_t>(rank)), b.trace());
  }
  ASSERT_EQ(run_binary(
                {"chakra", "synthesize", "learn", hand, "--model", (dir / "h.json").string(), "--resolution", "0"})
                .exit_code,
            0);
  for (const char* seed : {"1", "2", "3"}) {
    ASSERT_EQ(run_binary({"chakra", "synthesize", "generate", (dir / "h.json").string(), "--out", (dir / "hs").string(),
                          "--seed", seed})
                  .exit_code,
              0);
    const CommandResult hi = run_binary({"chakra", "inspect", (dir / "hs").string(), "--json"});
    EXPECT_EQ(hi.exit_code, 0) << hi.out;
    EXPECT_TRUE(nlohmann::json::parse(hi.out)["problems"].empty()) << hi.out;
  }
}

// Nothing of the input's names reaches the model or the traces, and the model's only strings
// are its own words and the collective types.
TEST(Synthesize, TheModelHoldsNoStringOfTheInput) {
  const auto dir = temp_dir("synthesize_safe");
  const std::string in = (dir / "t").string();
  for (int rank = 0; rank < 2; ++rank) {
    chakra::TraceBuilder b;
    b.global_attr(chakra::make_string("input_file", "secret_model_v3"));
    for (int layer = 0; layer < 6; ++layer) {
      const std::string name = "secret_block" + std::to_string(layer) + ".attention";
      b.node(chakra::NodeType::kComp, name)
          .duration_micros(static_cast<std::uint64_t>(10 + 7 * layer))
          .attr(chakra::make_uint64("num_ops", static_cast<std::uint64_t>(1000 * (layer + 1))))
          .attr(chakra::make_int64_list("gemm", {512, 1024 + layer, 4096}))
          .attr(chakra::make_string("op_schema", "secret::op(Tensor x) -> Tensor"))
          .inputs({"[[1, 2]]", "[[512, 1024]]", "['secret_dtype']"});
      if (layer > 0) b.at(b.trace().nodes.size() - 1).data_deps({b.trace().nodes.size() - 2});
      b.collective("secret_grad_sync" + std::to_string(layer), chakra::CommType::kAllReduce,
                   static_cast<std::uint64_t>(4096 << layer), {b.trace().nodes.size() - 1});
    }
    chakra::write_trace(chakra::rank_path(in, static_cast<std::size_t>(rank)), b.trace());
  }
  const std::string model = (dir / "m.json").string();
  const CommandResult l = run_binary({"chakra", "synthesize", "learn", in, "--model", model, "--resolution", "0"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  std::set<std::string> strings;
  strings_of(nlohmann::json::parse(file_bytes(model)), strings);
  const std::set<std::string> allowed =
      {"compute",     "cpu_compute",
       "memory_load", "memory_store",
       "collective",  "send",
       "recv",        "metadata",
       "ALL_REDUCE",  nlohmann::json::parse(file_bytes(model))["about"].get<std::string>()};
  for (const std::string& s : strings) EXPECT_TRUE(allowed.count(s)) << s;
  ASSERT_EQ(run_binary({"chakra", "synthesize", "generate", model, "--out", (dir / "s").string()}).exit_code, 0);
  for (const char* file : {"m.json", "s.0.et", "s.1.et"}) {
    const std::string bytes = file_bytes(dir / file);
    for (const char* secret : {"secret", "attention", "op_schema", "gemm", "1025", "input_file"}) {
      EXPECT_EQ(bytes.find(secret), std::string::npos) << file << " holds " << secret;
    }
  }
}

// --npus: a DP-replicated job learned on 16 ranks and generated for 32 runs exactly as the job
// generated directly for 32 (the data-parallel groups widened, pipeline messages moved with their
// replica); --iterations repeats the step, each after the one before.
TEST(Synthesize, JobsResizeAlongTheirDataParallelAxis) {
  const auto dir = temp_dir("synthesize_npus");
  const std::string in = (dir / "g").string(), big = (dir / "big").string();
  ASSERT_EQ(run_binary(small_llm({"--dp", "4", "--tp", "2", "--pp", "2", "--global-batch", "16", "--out", in}))
                .exit_code,
            0);
  ASSERT_EQ(run_binary(
                small_llm({"--dp", "8", "--tp", "2", "--pp", "2", "--global-batch", "32", "--out", big, "--network-out",
                           (dir / "n0.yml").string(), "--system-out", (dir / "s0.json").string()}))
                .exit_code,
            0);
  const std::string model = (dir / "m.json").string();
  ASSERT_EQ(run_binary({"chakra", "synthesize", "learn", in, "--model", model}).exit_code, 0);
  const CommandResult g =
      run_binary({"chakra", "synthesize", "generate", model, "--out", (dir / "s").string(), "--npus", "32"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_THAT(g.out, HasSubstr("re-sized from 16 to 32 NPUs along an axis of 4 replicas (now 8)"));
  EXPECT_EQ(run_figures(dir, (dir / "s").string(), "s0.json", "n0.yml").finish_ns,
            run_figures(dir, big, "s0.json", "n0.yml").finish_ns);
  // Replicas hold 4 ranks (TP 2 x PP 2): 18 ranks are no whole number of them.
  const CommandResult bad =
      run_binary({"chakra", "synthesize", "generate", model, "--out", (dir / "x").string(), "--npus", "18"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("--npus 18"));
  // Three steps: three times the nodes, about three times the time.
  const std::string mb = (dir / "mb.json").string();
  ASSERT_EQ(run_binary({"chakra", "synthesize", "learn", big, "--model", mb}).exit_code, 0);
  ASSERT_EQ(run_binary({"chakra", "synthesize", "generate", mb, "--out", (dir / "i").string(), "--iterations", "3"})
                .exit_code,
            0);
  ASSERT_EQ(run_binary({"chakra", "synthesize", "generate", mb, "--out", (dir / "one").string()}).exit_code, 0);
  const double one = run_figures(dir, (dir / "one").string(), "s0.json", "n0.yml").finish_ns;
  const double three = run_figures(dir, (dir / "i").string(), "s0.json", "n0.yml").finish_ns;
  EXPECT_GT(three, 2.9 * one);
  EXPECT_LE(three, 3.0 * one);
  EXPECT_EQ(chakra::read_trace((dir / "i.0.et").string()).nodes.size(),
            3 * chakra::read_trace((dir / "one.0.et").string()).nodes.size());
}

// A model written and read back is the same model.
TEST(Synthesize, ModelsRoundTrip) {
  const auto dir = temp_dir("synthesize_roundtrip");
  const std::string in = (dir / "g").string();
  ASSERT_EQ(run_binary(small_llm({"--dp", "2", "--tp", "2", "--pp", "2", "--global-batch", "8", "--out", in}))
                .exit_code,
            0);
  tools::LearnReport report;
  const tools::SynthesisModel m = tools::learn_model(in, "", 0, report);
  EXPECT_EQ(report.ranks, 8u);
  EXPECT_GT(report.loops, 0u);
  const std::string text = tools::model_json(m);
  EXPECT_EQ(tools::model_json(tools::parse_model(text, "m.json")), text);
}

std::string error_of_model(const std::string& text, const tools::GenerateOptions& options = {}) {
  try {
    const tools::SynthesisModel m = tools::parse_model(text, "m.json");
    tools::generate(m, "m.json", options, [](std::uint64_t, const chakra::Trace&) {});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string model_with(const std::string& program, const std::string& more = "") {
  return R"({"chakrasim_synthesis_model": 1, "npus": 2, "groups": [[0, 1]], "group_shapes": [[0, 1]],)" + more +
         R"( "classes": [{"ranks": [0, 1], "program": [)" + program + "]}]}";
}

TEST(Synthesize, BadModelsAreRefusedWithTheKey) {
  EXPECT_EQ(error_of_model(model_with(R"({"node": "compute", "duration_us": 5})")), "");
  EXPECT_THAT(error_of_model(R"({"chakrasim_synthesis_model": 2})"), HasSubstr("chakrasim_synthesis_model: 2 is not"));
  EXPECT_THAT(error_of_model("{"), HasSubstr("m.json: invalid JSON"));
  EXPECT_THAT(error_of_model(model_with(R"({"node": "gpu"})")), HasSubstr("classes[0].program[0].node: \"gpu\""));
  EXPECT_THAT(error_of_model(model_with(R"({"node": "compute", "size": 5})")), HasSubstr("key \"size\" does not belong "
                                                                                         "to a compute node"));
  EXPECT_THAT(error_of_model(model_with(R"({"node": "compute", "duration_us": {"mean": 2, "quantiles": [3, 1]}})")),
              HasSubstr("duration_us.quantiles[1]"));
  EXPECT_THAT(error_of_model(model_with(R"({"node": "compute", "duration_us": {"mean": 9, "quantiles": [1, 3]}})")),
              HasSubstr("outside the quantiles' range"));
  EXPECT_THAT(error_of_model(model_with(R"({"node": "send", "peer": 0, "size": 8})")), HasSubstr("peer: 0 is invalid"));
  EXPECT_THAT(error_of_model(model_with(R"({"node": "recv", "peer": 1, "size": 8})")), HasSubstr("rank 1 sends to or "
                                                                                                 "receives from 1 "
                                                                                                 "ranks away"));
  EXPECT_THAT(error_of_model(model_with(R"({"node": "compute", "deps": [1]})")), HasSubstr("depends on the node 1 "
                                                                                           "before it, before the "
                                                                                           "step's start"));
  EXPECT_THAT(error_of_model(
                  model_with(R"({"node": "collective", "collective": "ALL_REDUCE", "group": 1, "size": 8})")),
              HasSubstr("group: 1 is invalid"));
  EXPECT_THAT(error_of_model(model_with(R"({"node": "collective", "collective": "ALL_SUM", "size": 8})")),
              HasSubstr("collective: \"ALL_SUM\" is invalid"));
  EXPECT_THAT(error_of_model(model_with(R"({"repeat": 0, "body": [{"node": "compute"}]})")), HasSubstr("repeat: 0 is "
                                                                                                       "invalid"));
  EXPECT_THAT(error_of_model(model_with(R"({"repeat": 2, "body": []})")), HasSubstr("body: is empty"));
  EXPECT_THAT(
      error_of_model(model_with(
          R"({"repeat": 2, "correlation": [[1]], "body": [{"node": "compute", "duration_us": {"mean": 2, "quantiles": [1, 3]}}]})")),
      HasSubstr("correlation: has 1 rows; expected 2"));
  // A rank in no class; a group rank outside the job.
  EXPECT_THAT(error_of_model(R"({"chakrasim_synthesis_model": 1, "npus": 2, "groups": [], "group_shapes": [],
                                 "classes": [{"ranks": [0], "program": []}]})"),
              HasSubstr("rank 1 is in no class"));
  EXPECT_THAT(error_of_model(R"({"chakrasim_synthesis_model": 1, "npus": 2, "groups": [[0, 2]], "group_shapes": [],
                                 "classes": []})"),
              HasSubstr("groups[0]: 2 is invalid"));
  // A collective on a shape the rank has no group of.
  EXPECT_THAT(error_of_model(
                  R"({"chakrasim_synthesis_model": 1, "npus": 3, "groups": [[0, 1]], "group_shapes": [[0, 1]],
                                 "classes": [{"ranks": [0, 1, 2], "program": [
                                   {"node": "collective", "collective": "ALL_REDUCE", "group": 0, "size": 8}]}]})"),
              HasSubstr("rank 2 is in no group of group_shapes[0]"));
  // Blow-ups are refused before anything is generated.
  EXPECT_THAT(error_of_model(model_with(R"({"repeat": 4000000000, "body": [{"repeat": 4000000000, "body": [
                                             {"node": "compute"}]}]})")),
              HasSubstr("more than 50000000 nodes per rank"));
  tools::GenerateOptions few;
  few.max_total_nodes = 3;
  EXPECT_THAT(error_of_model(model_with(R"({"node": "compute"}, {"node": "compute"})"), few), HasSubstr("expand to "
                                                                                                        "more than 3 "
                                                                                                        "nodes in "
                                                                                                        "all"));
  tools::GenerateOptions none;
  none.iterations = 0;
  EXPECT_THAT(error_of_model(model_with(R"({"node": "compute"})"), none), HasSubstr("--iterations 0"));
}

TEST(Synthesize, BadTracesAreRefusedWithTheFileAndNode) {
  const auto dir = temp_dir("synthesize_bad");
  tools::LearnReport report;
  EXPECT_THAT(error_of([&] { tools::learn_model((dir / "none").string(), "", 4, report); }), HasSubstr("expected the "
                                                                                                       "PREFIX of "
                                                                                                       "PREFIX.0.et"));
  chakra::TraceBuilder b;
  *b.collective("ar", chakra::CommType::kAllReduce, 8).add_attr() = chakra::make_string("pg_name", "7");
  chakra::write_trace(chakra::rank_path((dir / "t").string(), 0), b.trace());
  EXPECT_THAT(error_of([&] { tools::learn_model((dir / "t").string(), "", 4, report); }), HasSubstr("node 0: pg_name "
                                                                                                    "\"7\" is no "
                                                                                                    "group"));
  EXPECT_THAT(error_of([&] { tools::learn_model((dir / "t").string(), "", 0.5, report); }), HasSubstr("--resolution "
                                                                                                      "0.5"));
  const CommandResult r =
      run_binary({"chakra", "synthesize", "generate", (dir / "missing.json").string(), "--out", (dir / "o").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("missing.json"));
}

}  // namespace
}  // namespace chakrasim::test
