// `chakrasim generate llm` through the binary: the files it writes run with `chakrasim run`,
// the summary names the figures, and bad flags exit non-zero with a message naming the flag.
#include <algorithm>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

// LLaMA-3 8B cut to 4 layers and 1024 tokens, 16 ranks: TP 2, PP 2, DP 4 with ZeRO 1.
std::vector<std::string> small(const std::string& prefix) {
  return {"generate", "llm",  "--model", "llama3-8b", "--layers", "4", "--seq",          "1024", "--dp",  "4",   "--tp",
          "2",        "--pp", "2",       "--sp",      "--zero",   "1", "--global-batch", "16",   "--out", prefix};
}

TEST(LlmGenerateCli, GeneratesAndRuns) {
  const auto dir = temp_dir("llm_cli_run");
  const std::string prefix = (dir / "llama").string();
  std::vector<std::string> args = small(prefix);
  args.insert(args.end(), {"--network-out", (dir / "net.yml").string(), "--system-out", (dir / "sys.json").string()});
  const CommandResult gen = run_binary(args);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_THAT(gen.out, HasSubstr("llama3-8b (modified) on 16 H100 GPUs: TP 2, PP 2, DP 4"));
  EXPECT_THAT(gen.out, HasSubstr("model FLOPs per iteration: "));
  EXPECT_THAT(gen.out, HasSubstr("  TP : "));
  EXPECT_THAT(gen.out, HasSubstr("  PP : 4 sends"));
  EXPECT_THAT(gen.out, HasSubstr("memory per rank (of 80 GiB)"));
  EXPECT_THAT(gen.out, HasSubstr("wrote 16 traces"));
  for (int r = 0; r < 16; ++r) EXPECT_TRUE(std::filesystem::exists(dir / ("llama." + std::to_string(r) + ".et")));
  EXPECT_FALSE(std::filesystem::exists(dir / "llama.16.et"));
  const CommandResult sim =
      run_binary({"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json", "--network",
                  (dir / "net.yml").string(), "--system", (dir / "sys.json").string()});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_THAT(sim.out, HasSubstr("16 of 16 NPUs finished"));
  // The group kinds come from PREFIX.group-names.json beside the group file, and MFU is measured
  // against the data-sheet peak (989 TFLOP/s), not the roofline's 70% ceiling.
  EXPECT_TRUE(std::filesystem::exists(prefix + ".group-names.json"));
  EXPECT_THAT(sim.out, ::testing::ContainsRegex("exposed collectives by group kind: (TP|DP) "));
  EXPECT_THAT(sim.out, HasSubstr("TFLOP/s peak (the system's mfu-peak-perf)"));
  EXPECT_THAT(sim.out, HasSubstr("of a 989.0 TFLOP/s peak"));
  // --group-names names them otherwise; a bad file is an error naming it.
  write_bytes(dir / "names.json", R"({"1": "tensor", "2": "tensor", "3": "tensor", "4": "tensor", "5": "tensor",
    "6": "tensor", "7": "tensor", "8": "tensor"})");
  const CommandResult named = run_binary({"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json",
                                          "--network", (dir / "net.yml").string(), "--system",
                                          (dir / "sys.json").string(), "--group-names", (dir / "names.json").string()});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_THAT(named.out, HasSubstr("tensor "));
  write_bytes(dir / "bad_names.json", R"({"1": 7})");
  const CommandResult bad = run_binary(
      {"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json", "--network", (dir / "net.yml").string(),
       "--system", (dir / "sys.json").string(), "--group-names", (dir / "bad_names.json").string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("bad_names.json: group \"1\": value 7 is invalid; expected a name such as \"TP\""));
}

TEST(LlmGenerateCli, RunsInMemoryWithoutFiles) {
  // --run without --out: no trace files, and what `run` prints for the written files, NPU for
  // NPU; the ranks fold into one class per stage.
  const auto dir = temp_dir("llm_cli_in_memory");
  const std::string prefix = (dir / "llama").string();
  std::vector<std::string> args = small(prefix);
  args.insert(args.end(), {"--network-out", (dir / "net.yml").string(), "--system-out", (dir / "sys.json").string()});
  ASSERT_EQ(run_binary(args).exit_code, 0);
  const CommandResult from_files =
      run_binary({"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json", "--network",
                  (dir / "net.yml").string(), "--system", (dir / "sys.json").string()});
  ASSERT_EQ(from_files.exit_code, 0) << from_files.err;
  std::vector<std::string> in_memory_args = small(prefix);
  in_memory_args.resize(in_memory_args.size() - 2);  // no --out
  in_memory_args.insert(in_memory_args.end(), {"--run", "--network-out", (dir / "net2.yml").string()});
  const CommandResult in_memory = run_binary(in_memory_args);
  ASSERT_EQ(in_memory.exit_code, 0) << in_memory.err;
  auto npu_lines = [](const std::string& out) {
    std::string lines;
    std::size_t at = 0;
    while ((at = out.find("sys[", at)) != std::string::npos) {
      const std::size_t end = out.find('\n', at);
      lines += out.substr(at, end - at + 1);
      at = end;
    }
    return lines;
  };
  EXPECT_EQ(npu_lines(in_memory.out), npu_lines(from_files.out));
  EXPECT_THAT(npu_lines(in_memory.out), HasSubstr("sys[15] finished"));
  EXPECT_THAT(in_memory.out, HasSubstr("The NPUs fall into 2 classes that run the same timelines"));
  EXPECT_THAT(in_memory.out, HasSubstr("Generated and parsed in memory in"));
  EXPECT_EQ(file_bytes(dir / "net2.yml"), file_bytes(dir / "net.yml"));
  // --no-folding simulates every NPU, to the same lines.
  const CommandResult full =
      run_binary({"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json", "--network",
                  (dir / "net.yml").string(), "--system", (dir / "sys.json").string(), "--no-folding"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(npu_lines(full.out), npu_lines(from_files.out));
  EXPECT_THAT(full.out, ::testing::Not(HasSubstr("classes")));
  // Without --run, --out is needed.
  std::vector<std::string> neither = small(prefix);
  neither.resize(neither.size() - 2);
  const CommandResult refused = run_binary(neither);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("--out"));
}

TEST(LlmGenerateCli, FoldedRunsWriteTheFullRunsFiles) {
  // The timeline, the per-node CSV and the reference's statistics of a run folded into classes
  // are byte for byte the full run's: each NPU's record is its representative's.
  const auto dir = temp_dir("llm_cli_folded_outputs");
  const std::string prefix = (dir / "llama").string();
  std::vector<std::string> args = small(prefix);
  args.insert(args.end(), {"--network-out", (dir / "net.yml").string(), "--system-out", (dir / "sys.json").string()});
  ASSERT_EQ(run_binary(args).exit_code, 0);
  auto run_to = [&](const std::string& tag, bool fold) {
    std::vector<std::string> run = {"run",
                                    "--workload",
                                    prefix,
                                    "--comm-groups",
                                    prefix + ".groups.json",
                                    "--network",
                                    (dir / "net.yml").string(),
                                    "--system",
                                    (dir / "sys.json").string(),
                                    "--timeline",
                                    (dir / (tag + ".json")).string(),
                                    "--timeline-npus",
                                    "0-15",
                                    "--stats",
                                    (dir / (tag + ".csv")).string(),
                                    "--astra-sim-stats"};
    if (!fold) run.push_back("--no-folding");
    const CommandResult r = run_binary(run);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  };
  const CommandResult folded = run_to("folded", true);
  const CommandResult full = run_to("full", false);
  EXPECT_THAT(folded.out, HasSubstr("fall into 2 classes"));
  EXPECT_EQ(file_bytes(dir / "folded.csv"), file_bytes(dir / "full.csv"));
  std::string folded_timeline = file_bytes(dir / "folded.json");
  std::string full_timeline = file_bytes(dir / "full.json");
  // Only the header differs: how many NPUs were simulated for all.
  const std::string header_end = "\"traceEvents\":[";
  EXPECT_EQ(folded_timeline.substr(folded_timeline.find(header_end)),
            full_timeline.substr(full_timeline.find(header_end)));
  EXPECT_THAT(folded_timeline, HasSubstr("\"classes_simulated\":2"));
  // The printed lines, statistics included, but the last (events and messages).
  auto before_counts = [](const std::string& out) { return out.substr(0, out.rfind('\n', out.rfind(" events, "))); };
  EXPECT_EQ(before_counts(folded.out), before_counts(full.out));
  EXPECT_THAT(folded.out, HasSubstr("sys[15] finished"));
}

TEST(LlmGenerateCli, NcclCollectivesOnAB200Preset) {
  // The GPU presets are NCCL's model's (system/nccl/hardware.h); --collectives nccl writes the
  // system file that times collectives by it, and the run names NCCL's choices in its report.
  const auto dir = temp_dir("llm_cli_nccl");
  const std::string prefix = (dir / "llama").string();
  std::vector<std::string> args = small(prefix);
  args.insert(args.end(), {"--gpu", "B200", "--collectives", "nccl", "--network-out", (dir / "net.yml").string(),
                           "--system-out", (dir / "sys.json").string()});
  const CommandResult gen = run_binary(args);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const std::string system = file_bytes(dir / "sys.json");
  EXPECT_THAT(system, HasSubstr("\"collectives\": \"nccl\""));
  EXPECT_THAT(system, HasSubstr("\"nccl-gpu\": \"B200\""));
  EXPECT_THAT(system, HasSubstr("\"nccl-gpus-per-node\": 8"));
  EXPECT_THAT(file_bytes(dir / "net.yml"), HasSubstr("(900 GB/s per GPU and direction)"));  // 18 NVLink5 links of 50
  const CommandResult sim = run_binary({"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json",
                                        "--network", (dir / "net.yml").string(), "--system",
                                        (dir / "sys.json").string(), "--report", (dir / "report").string()});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_THAT(sim.out, HasSubstr("16 of 16 NPUs finished"));
  EXPECT_THAT(file_bytes(dir / "report" / "index.html"), HasSubstr("NCCL "));
}

// The README's LLM example, run as the README says: its summary lines are the README's.
TEST(LlmGenerateCli, ReadmeExampleIsWhatRunPrints) {
  const auto dir = temp_dir("llm_cli_readme");
  const CommandResult gen =
      run_binary({"generate",      "llm",       "--model",        "llama3-8b", "--tp",  "2",    "--pp",  "2",
                  "--dp",          "2",         "--global-batch", "16",        "--gpu", "H100", "--out", "t/llama",
                  "--network-out", "t/net.yml", "--system-out",   "t/sys.json"},
                 dir);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const CommandResult sim = run_binary({"run", "--workload", "t/llama", "--comm-groups", "t/llama.groups.json",
                                        "--network", "t/net.yml", "--system", "t/sys.json"},
                                       dir);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const std::string readme = file_bytes(std::filesystem::path(CHAKRASIM_SOURCE_DIR) / "README.md");
  const std::size_t from = sim.out.find("Summary:");
  ASSERT_NE(from, std::string::npos) << sim.out;
  std::size_t lines = 0;
  for (std::size_t at = from; at < sim.out.size() && lines < 5; ++lines) {
    const std::size_t end = sim.out.find('\n', at);
    const std::string line = sim.out.substr(at, end - at);
    EXPECT_THAT(readme, HasSubstr(line + "\n")) << "README.md lacks the line run prints:\n" << line;
    at = end + 1;
  }
}

// A smaller run with the same prefix removes the larger run's extra rank files, which would
// otherwise not match the smaller network.
TEST(LlmGenerateCli, RemovesStaleRankFiles) {
  const auto dir = temp_dir("llm_cli_stale");
  const std::string prefix = (dir / "t").string();
  ASSERT_EQ(run_binary(small(prefix)).exit_code, 0);
  std::vector<std::string> args = small(prefix);
  args[9] = "2";   // --dp 2: 8 ranks
  args[18] = "8";  // --global-batch 8
  const CommandResult r = run_binary(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "t.7.et"));
  EXPECT_FALSE(std::filesystem::exists(dir / "t.8.et"));
  EXPECT_FALSE(std::filesystem::exists(dir / "t.15.et"));
}

TEST(LlmGenerateCli, BadFlagsExitNonZeroNamingTheFlag) {
  const auto dir = temp_dir("llm_cli_bad");
  const std::string prefix = (dir / "t").string();
  write_bytes(dir / "blocker", "a file where --out wants a folder");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--model", "gpt5"}, "--model: unknown model \"gpt5\""},
      {{"--layers", "4"}, "--hidden: expected a value (or --model NAME for a preset)"},
      {{"--model", "llama3-8b", "--tp", "3"}, "--tp 3 does not divide --heads 32"},
      {{"--model", "llama3-8b", "--pp", "0"}, "--pp: expected a positive number, got 0"},
      {{"--model", "llama3-8b", "--layers", "0"}, "--layers: expected a positive number, got 0"},
      {{"--model", "llama3-8b", "--gpu", "V100"}, "--gpu: unknown GPU \"V100\""},
      {{"--model", "llama3-8b", "--schedule", "zigzag"}, "--schedule: unknown value \"zigzag\""},
      {{"--model", "llama3-8b", "--recompute", "maybe"}, "--recompute: unknown value \"maybe\""},
      {{"--model", "llama3-8b", "--dtype", "int8"}, "--dtype: unknown value \"int8\""},
      {{"--model", "llama3-8b", "--mlp", "relu"}, "--mlp: unknown value \"relu\""},
      {{"--model", "llama3-8b", "--grad-bucket", "0"}, "--grad-bucket 0"},
      {{"--model", "llama3-8b", "--gpus-per-node", "0"}, "--gpus-per-node 0: expected a scale-up domain"},
      {{"--model", "llama3-8b", "--dp", "12", "--network-out", (dir / "n.yml").string()},
       "--network-out: 12 ranks do not fill whole 8-GPU H100 nodes"},
      {{"--model", "llama3-8b", "--out", (dir / "blocker" / "t").string()}, "--out: cannot create the folder"},
      {{"--model", "llama3-8b", "--global-batch", "1000000000"}, "--global-batch 1000000000"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"generate", "llm"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    if (std::find(c.args.begin(), c.args.end(), "--out") == c.args.end()) args.insert(args.end(), {"--out", prefix});
    const CommandResult r = run_binary(args);
    EXPECT_EQ(r.exit_code, 1) << c.message;
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
  // CLI11 rejects what is not a number, with its own message and a non-zero exit.
  const CommandResult r = run_binary({"generate", "llm", "--model", "llama3-8b", "--dp", "-2", "--out", prefix});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--dp"));
}

// One rank is a single-GPU baseline: its network is one NPU, and the run has compute only.
TEST(LlmGenerateCli, OneRankRunsAsASingleGpuBaseline) {
  const auto dir = temp_dir("llm_cli_one_rank");
  const std::string prefix = (dir / "t").string(), net = (dir / "n.yml").string(), sys = (dir / "s.json").string();
  const CommandResult g =
      run_binary({"generate", "llm", "--layers", "2", "--hidden", "256", "--heads", "4", "--seq", "128", "--vocab",
                  "512", "--out", prefix, "--network-out", net, "--system-out", sys});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_THAT(file_bytes(net), HasSubstr("npus_count: [ 1 ]"));
  const CommandResult r = run_binary({"run", "--workload", prefix, "--network", net, "--system", sys});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("sys[0] finished, "));
  EXPECT_THAT(r.out, HasSubstr(" cycles, exposed communication 0 cycles.\n"));
  EXPECT_THAT(r.out, HasSubstr("1 of 1 NPUs finished"));
}

}  // namespace
}  // namespace chakrasim::test
