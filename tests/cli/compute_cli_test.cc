// `chakrasim compute` through the binary: SCALE-sim's files in, its two reports out; bad files
// exit 1 naming the file and what was expected.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kConfig = "[general]\nrun_name = r\n\n[architecture_presets]\nArrayHeight:    3\nArrayWidth:     "
                                "8\n"
                                "IfmapSramSzkB:    2\nFilterSramSzkB:   2\nOfmapSramSzkB:    2\nIfmapOffset:    0\n"
                                "FilterOffset:   10000000\nOfmapOffset:    20000000\nBandwidth : 10\nDataflow : "
                                "os\nMemoryBanks:   1\n\n"
                                "[run_presets]\nInterfaceBandwidth: CALC\n";

TEST(ComputeCli, WritesScaleSimsReports) {
  const auto dir = temp_dir("compute_cli");
  write_bytes(dir / "r.cfg", kConfig);
  write_bytes(dir / "g.csv", "Layer,M,N,K,\ng0,12,12,37,\ng3,8,5,30,\n");
  const CommandResult r = run_binary({"compute", "--config", (dir / "r.cfg").string(), "--topology",
                                      (dir / "g.csv").string(), "--gemm", "--out", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("r: 2 layers on a 3 x 8 os array, 483 cycles in all"));
  EXPECT_EQ(file_bytes(dir / "out" / "COMPUTE_REPORT.csv"), "LayerID, Total Cycles, Stall Cycles, Overall Util %, "
                                                            "Mapping Efficiency %, Compute Util %,\n"
                                                            "0, 367, 0, 60.490463215258856, 75.0, 60.32608695652175,\n"
                                                            "1, 116, 0, 43.10344827586207, 55.55555555555556, "
                                                            "42.73504273504274,\n");
  EXPECT_THAT(file_bytes(dir / "out" / "DETAILED_ACCESS_REPORT.csv"), HasSubstr("\n1, 1.0, 109.0, 240, 1.0, 112.0, "
                                                                                "450, 29.0, 113.0, 73, -24.0, -1.0, "
                                                                                "240, -16.0, -1.0, 150, "
                                                                                "116.0, 120.0, 40,\n"));
  EXPECT_THAT(file_bytes(dir / "out" / "BANDWIDTH_REPORT.csv"), HasSubstr("\n1, 2.0689655172413794, "
                                                                          "3.8793103448275863, 0.6293103448275862, "
                                                                          "10.0, 9.375, 8.0,\n"));
  EXPECT_TRUE(r.err.empty()) << r.err;  // everything fits its SRAM: no warning
}

TEST(ComputeCli, SaysWhatItDoesNotModel) {
  // USER bandwidth (finite DRAM) is answered with approximate stalls, and layers too large for
  // their SRAM get DRAM columns that count each element once: both said on stderr.
  const auto dir = temp_dir("compute_cli_warn");
  std::string cfg = kConfig;
  cfg.replace(cfg.find("CALC"), 4, "USER");
  write_bytes(dir / "u.cfg", cfg);
  write_bytes(dir / "big.csv", "Layer,M,N,K,\nbig,512,512,512,\n");
  const CommandResult r = run_binary({"compute", "-c", (dir / "u.cfg").string(), "-t", (dir / "big.csv").string(),
                                      "--gemm", "-p", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("InterfaceBandwidth USER (a finite DRAM bandwidth): the stall cycles are an "
                               "approximation of SCALE-sim's"));
  EXPECT_THAT(r.err, HasSubstr("1 of 1 layers do not fit their SRAM's working half"));
}

TEST(ComputeCli, UserBandwidthStallsAsTheApproximationDerivesThem) {
  // An 8 x 8 weight-stationary array, 2 kB SRAMs (halves of 1024 words), 2 words a cycle. The
  // GEMM 96 x 128 x 32: K on 4 row folds, N on 16 column folds, 118-cycle folds: 7551 cycles.
  // The ifmap (96 x 32 = 3072 words, over the half) streams its 16 x 3072 SRAM reads but the
  // first 1024, at 2 a cycle: 24064; the ofmap's 4 x 96 x 128 partial sums fill 48 halves, all
  // but the last drained at 2 a cycle: 24064 too. Stalls: 24064 - 7551 = 16513. SCALE-sim v2
  // counts 24268 cycles, 16717 of them stalls (0.8% more).
  const auto dir = temp_dir("compute_cli_user");
  std::string cfg = kConfig;
  cfg.replace(cfg.find("CALC"), 4, "USER");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"ArrayHeight:    3", "ArrayHeight:    8"},
                                 {"Bandwidth : 10", "Bandwidth : 2"},
                                 {"Dataflow : os", "Dataflow : ws"}}) {
    cfg.replace(cfg.find(from), from.size(), to);
  }
  write_bytes(dir / "u.cfg", cfg);
  write_bytes(dir / "g.csv", "Layer,M,N,K,\nfc_b,96,128,32,\n");
  const CommandResult r = run_binary({"compute", "-c", (dir / "u.cfg").string(), "-t", (dir / "g.csv").string(),
                                      "--gemm", "-p", (dir / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(file_bytes(dir / "out" / "COMPUTE_REPORT.csv"), HasSubstr("\n0, 24064, 16513, "));
}

TEST(ComputeCli, BadFilesExitOneNamingThem) {
  const auto dir = temp_dir("compute_cli_bad");
  write_bytes(dir / "r.cfg", kConfig);
  write_bytes(dir / "bad.csv", "Layer,M,N,K,\ng0,12,x,37,\n");
  CommandResult r = run_binary({"compute", "--config", (dir / "r.cfg").string(), "--topology",
                                (dir / "bad.csv").string(), "--gemm", "--out", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.csv: line 2 N: \"x\" is not a whole number"));
  std::string no_dataflow = kConfig;
  no_dataflow.erase(no_dataflow.find("Dataflow"), std::string("Dataflow : os\n").size());
  write_bytes(dir / "nd.cfg", no_dataflow);
  write_bytes(dir / "g.csv", "Layer,M,N,K,\ng0,12,12,37,\n");
  r = run_binary({"compute", "--config", (dir / "nd.cfg").string(), "--topology", (dir / "g.csv").string(), "--gemm",
                  "--out", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("nd.cfg: [architecture_presets] has no key Dataflow"));
  r = run_binary({"compute", "--config", (dir / "missing.cfg").string(), "--topology", (dir / "g.csv").string(),
                  "--out", (dir / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("missing.cfg"));
}

}  // namespace
}  // namespace chakrasim::test
