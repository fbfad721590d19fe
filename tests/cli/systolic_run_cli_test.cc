// Runs on the systolic compute model through the binary: `generate llm --systolic` end to end,
// the summary's count of nodes the roofline timed, the per-node figures in the CSV, the timeline
// and the report, and the system JSON's checks.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kSmallGpt = small_llm({"--mlp", "gelu", "--dp", "2", "--tp", "2"});

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(SystolicRunCli, AGeneratedIterationRunsOnATpuPreset) {
  const CommandResult r = run_binary(with(kSmallGpt, {"--systolic", "tpu-v4", "--run"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 2 layers x (qkv, proj, fc1, fc2) forward and x 3 backward, plus the logits' 3: 27 GEMMs a
  // rank; the rest (norms, attention, embedding, optimizer) fall back to the roofline.
  EXPECT_THAT(r.out, HasSubstr("GPU compute nodes had no shape (gemm, conv) and were timed by the roofline (or"));
  EXPECT_THAT(r.out, HasSubstr("TFLOP/s peak (the systolic arrays')"));
  // A preset that does not exist, named with the valid ones.
  const CommandResult bad = run_binary(with(kSmallGpt, {"--systolic", "tpu-v9", "--run"}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("--systolic: unknown systolic preset \"tpu-v9\"; valid presets are: tpu-v4"));
}

TEST(SystolicRunCli, PerNodeFiguresGoToTheCsvTimelineAndReport) {
  const auto dir = temp_dir("systolic_run_cli");
  const std::string prefix = (dir / "g").string();
  const CommandResult g =
      run_binary(with(kSmallGpt, {"--systolic", "google", "--out", prefix, "--network-out", (dir / "n.yml").string(),
                                  "--system-out", (dir / "s.json").string()}));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_THAT(file_bytes(dir / "s.json"), HasSubstr("\"systolic\": {\"rows\": 256, \"cols\": 256"));
  const CommandResult r =
      run_binary({"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json", "--network",
                  (dir / "n.yml").string(), "--system", (dir / "s.json").string(), "--stats", (dir / "st.csv").string(),
                  "--timeline", (dir / "t.json").string(), "--report", (dir / "rep").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = file_bytes(dir / "st.csv");
  EXPECT_THAT(csv, HasSubstr("group,shape,cycles,stall_cycles,compute_util,mapping_efficiency,sram_read_bytes,"));
  // The first layer's fc1 on rank 0: 128 tokens x 512 columns (1024 / tp 2), inner 256.
  EXPECT_THAT(csv, HasSubstr(".L0.fc1,COMP_NODE,"));
  EXPECT_THAT(csv, HasSubstr(",gemm 128x512x256,"));
  EXPECT_THAT(file_bytes(dir / "t.json"), HasSubstr("\"shape\":\"gemm 128x512x256\",\"cycles\":"));
  const std::string html = file_bytes(dir / "rep" / "index.html");
  EXPECT_THAT(html, HasSubstr("Compute by layer (NPU"));
  EXPECT_THAT(html, HasSubstr("id=\"compute-util-plot\""));
  EXPECT_THAT(html, HasSubstr("gemm 128x512x256 weight_gradient"));
  EXPECT_THAT(html, HasSubstr("<td>no shape (the systolic model's fallback)</td>"));
  // The page with its utilisation plot loads in headless Chromium, where installed, without errors.
  if (std::filesystem::exists("/usr/bin/chromium")) {
    const CommandResult dom =
        run_program("/usr/bin/chromium", {"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                          "--user-data-dir=" + (dir / "profile").string(), "--enable-logging=stderr",
                                          "--v=0", "--dump-dom", "file://" + (dir / "rep" / "index.html").string()});
    ASSERT_EQ(dom.exit_code, 0) << dom.err;
    EXPECT_THAT(dom.out, HasSubstr("data-charts=\"3\""));  // time split, busbw, compute utilisation
    EXPECT_EQ(dom.out.find("Uncaught"), std::string::npos);
    EXPECT_EQ(dom.err.find(":CONSOLE("), std::string::npos) << dom.err;
  }
}

TEST(SystolicRunCli, AFoldedRunCountsTheFallbackOfEveryNpu) {
  // The count comes from each class's representative in a folded run, and from every NPU's own
  // trace in a full one: the same line either way.
  const auto dir = temp_dir("systolic_run_cli_fold");
  const std::string prefix = (dir / "g").string();
  ASSERT_EQ(run_binary(with(kSmallGpt, {"--pp", "2", "--systolic", "tpu-v4", "--out", prefix, "--network-out",
                                        (dir / "n.yml").string(), "--system-out", (dir / "s.json").string()}))
                .exit_code,
            0);
  auto compute_line = [&](const std::vector<std::string>& more) {
    std::vector<std::string> args = {"run",
                                     "--workload",
                                     prefix,
                                     "--comm-groups",
                                     prefix + ".groups.json",
                                     "--network",
                                     (dir / "n.yml").string(),
                                     "--system",
                                     (dir / "s.json").string()};
    args.insert(args.end(), more.begin(), more.end());
    const CommandResult r = run_binary(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("fall into") != std::string::npos, more.empty()) << r.out;
    const std::size_t at = r.out.find("  Compute: ");
    return at == std::string::npos ? std::string() : r.out.substr(at, r.out.find('\n', at) - at);
  };
  const std::string folded = compute_line({});
  EXPECT_THAT(folded, HasSubstr(" GPU compute nodes had no shape"));
  EXPECT_EQ(folded, compute_line({"--no-folding"}));
}

TEST(SystolicRunCli, OneComputeModelAtATime) {
  const auto dir = temp_dir("systolic_run_cli_both");
  write_bytes(dir / "s.json",
              R"({"preferred-dataset-splits": 1, "roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 100,)"
              R"( "systolic": {"preset": "tpu-v4"}})");
  write_bytes(dir / "n.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  const CommandResult r = run_binary({"run", "--workload", (dir / "none").string(), "--network",
                                      (dir / "n.yml").string(), "--system", (dir / "s.json").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("both \"systolic\" and roofline-enabled 1 are set; expected one compute model"));
}

}  // namespace
}  // namespace chakrasim::test
