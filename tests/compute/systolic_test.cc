// compute/systolic: SCALE-sim v2's reports in closed form. Worked examples (derived below, and
// checked against SCALE-sim v2 22f88b1 run with Debian's python3 and python3-numpy), and, when
// CHAKRASIM_SCALESIM_DIR names a SCALE-sim source tree, SCALE-sim itself on fresh layers.
#include <cstdlib>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compute/systolic/scalesim_files.h"
#include "compute/systolic/systolic_layer.h"
#include "support/test_support.h"

namespace chakrasim::compute::systolic {
namespace {

using ::testing::HasSubstr;

ArrayShape array(std::uint64_t rows, std::uint64_t cols, Dataflow dataflow, std::uint64_t sram_kib = 64) {
  return ArrayShape{rows, cols, dataflow, sram_kib, sram_kib, sram_kib};
}

// The reports' first `columns` comma-separated columns, row by row.
std::string columns(const std::string& csv, std::size_t count) {
  std::string out;
  std::size_t at = 0;
  while (at < csv.size()) {
    const std::size_t end = csv.find('\n', at);
    const std::string line = csv.substr(at, end - at);
    std::size_t cut = 0;
    for (std::size_t i = 0; i < count && cut != std::string::npos; ++i) cut = line.find(',', cut + 1);
    out += line.substr(0, cut) + "\n";
    at = end + 1;
  }
  return out;
}

TEST(Systolic, GemmCyclesFollowTheFolds) {
  // GEMM M=12, N=12, K=37 on 3 x 8, output stationary: pixels on the rows (12 / 3 = 4 row
  // folds), filters on the columns (ceil(12 / 8) = 2), K in time. A fold lasts K + R + C - 2 =
  // 46 cycles, partial or not; SCALE-sim reports the last cycle's index: 8 x 46 - 1 = 367.
  const Layer g = Layer::gemm("g", 12, 12, 37);
  const LayerReport os = analyse_layer(array(3, 8, Dataflow::kOutputStationary), g);
  EXPECT_EQ(os.row_folds, 4u);
  EXPECT_EQ(os.col_folds, 2u);
  EXPECT_EQ(os.total_cycles, 367u);
  EXPECT_EQ(layer_cycles(array(3, 8, Dataflow::kOutputStationary), g), 367u);
  // Mapping efficiency: the column folds use 8 and 4 of 8 columns, all 3 rows: (1 + 0.5) / 2 =
  // 75%. Overall utilisation: 12 x 12 x 37 MACs over 367 x 24 cells = 60.49...%.
  EXPECT_EQ(os.mapping_efficiency_pct, 75.0);
  EXPECT_DOUBLE_EQ(os.overall_util_pct, 12.0 * 12 * 37 * 100 / (367.0 * 24));
  // SRAM: each column fold reads the whole ifmap (2 x 12 x 37 = 888), each row fold the whole
  // filter (4 x 37 x 12 = 1776); ofmap writes M x N plus SCALE-sim's R + C per fold (144 + 88).
  EXPECT_EQ(os.ifmap_sram_reads, 888u);
  EXPECT_EQ(os.filter_sram_reads, 1776u);
  EXPECT_EQ(os.ofmap_sram_writes, 232u);
  // Weight stationary: K on the rows (13 folds of 3), N on the columns (2), M in time, each fold
  // 2R + C + M - 2 = 24 cycles: 26 x 24 - 1 = 623.
  EXPECT_EQ(analyse_layer(array(3, 8, Dataflow::kWeightStationary), g).total_cycles, 623u);
  // Input stationary: K on the rows (13), M on the columns (2), N in time: 26 x 24 - 1 as well.
  EXPECT_EQ(analyse_layer(array(3, 8, Dataflow::kInputStationary), g).total_cycles, 623u);
}

TEST(Systolic, ReproducesScaleSimOnGemms) {
  // SCALE-sim v2's reports for rand03 (3 x 8, os, 2 KiB SRAMs: every operand fits, so the DRAM
  // columns are exact too) and a 2 x 3 input-stationary array (K = 1, 1 x 1 x 1, sizes just
  // over multiples of the array).
  const ScaleSimConfig cfg = parse_scalesim_config("[general]\nrun_name = r\n[architecture_presets]\nArrayHeight: "
                                                   "3\nArrayWidth: 8\nIfmapSramSzkB: 2\n"
                                                   "FilterSramSzkB: 2\nOfmapSramSzkB: 2\nDataflow : "
                                                   "os\n[run_presets]\nInterfaceBandwidth: CALC\n",
                                                   "r.cfg");
  std::vector<LayerReport> reports;
  for (const Layer& l :
       parse_scalesim_topology("Layer,M,N,K,\ng0,12,12,37,\ng1,34,16,27,\ng2,33,27,21,\ng3,8,5,30,\n", "r.csv", true)) {
    reports.push_back(analyse_layer(cfg.array, l));
  }
  EXPECT_EQ(compute_report_csv(reports), "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
                                         "Compute Util %,\n"
                                         "0, 367, 0, 60.490463215258856, 75.0, 60.32608695652175,\n"
                                         "1, 863, 0, 70.9154113557358, 94.44444444444446, 70.83333333333334,\n"
                                         "2, 1319, 0, 59.107278241091734, 84.375, 59.06249999999995,\n"
                                         "3, 116, 0, 43.10344827586207, 55.55555555555556, 42.73504273504274,\n");
  const std::string detail = detailed_access_report_csv(reports);
  EXPECT_THAT(detail, HasSubstr("\n0, 1.0, 361.0, 888, 1.0, 362.0, 1776, 36.0, 363.0, 232, -46.0, -1.0, 444, -46.0, "
                                "-1.0, 444, 367.0, 384.0, 144,\n"));
  EXPECT_THAT(detail, HasSubstr("\n3, 1.0, 109.0, 240, 1.0, 112.0, 450, 29.0, 113.0, 73, -24.0, -1.0, 240, -16.0, "
                                "-1.0, 150, 116.0, 120.0, 40,\n"));
  // Bandwidths: SRAM accesses over the total cycles (888 / 367 = 2.4196...), DRAM words over
  // their cycles (444 over 46 cycles of prefetch = 9.652...).
  EXPECT_EQ(bandwidth_report_csv(reports),
            "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, "
            "Avg OFMAP DRAM BW,\n"
            "0, 2.4196185286103544, 4.839237057220709, 0.6321525885558583, 9.652173913043478, 9.652173913043478, 8.0,\n"
            "1, 2.127462340672074, 6.006952491309386, 0.936268829663963, 9.978260869565217, 9.818181818181818, 8.0,\n"
            "2, 2.1015921152388173, 4.7285822592873386, 1.042456406368461, 9.9, 9.775862068965518, "
            "7.955357142857143,\n"
            "3, 2.0689655172413794, 3.8793103448275863, 0.6293103448275862, 10.0, 9.375, 8.0,\n");

  std::vector<LayerReport> is;
  for (const Layer& l : parse_scalesim_topology("Layer,M,N,K,\ng9,9,9,9,\ng_k1,17,33,1,\ng111,1,1,1,\n"
                                                "g1_8_17,1,8,17,\ng33_17_9,33,17,9,\n",
                                                "is.csv", true)) {
    is.push_back(analyse_layer(array(2, 3, Dataflow::kInputStationary, 1), l));
  }
  EXPECT_EQ(compute_report_csv(is), "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
                                    "Compute Util %,\n"
                                    "0, 209, 0, 58.133971291866025, 90.0, 50.625,\n"
                                    "1, 227, 0, 41.18942731277533, 47.22222222222223, 38.958333333333336,\n"
                                    "2, 5, 0, 3.3333333333333335, 16.666666666666664, 2.083333333333333,\n"
                                    "3, 116, 0, 19.54022988505747, 31.481481481481477, 16.790123456790123,\n"
                                    "4, 1209, 0, 69.6029776674938, 90.0, 63.749999999999986,\n");
  EXPECT_EQ(columns(detailed_access_report_csv(is), 10)
                .substr(columns(detailed_access_report_csv(is), 10).find('\n') + 1),
            "0, 1.0, 198.0, 81, 3.0, 207.0, 243, 3.0, 209.0, 405\n"
            "1, 2.0, 192.0, 17, 3.0, 225.0, 198, 3.0, 226.0, 561\n"
            "2, 2.0, 2.0, 1, 3.0, 3.0, 1, 3.0, 3.0, 1\n"
            "3, 1.0, 106.0, 17, 3.0, 114.0, 136, 3.0, 114.0, 72\n"
            "4, 1.0, 1190.0, 297, 3.0, 1207.0, 1683, 3.0, 1209.0, 2805\n");
}

TEST(Systolic, ReproducesScaleSimOnConvolutions) {
  // 8 x 8 weight stationary: windows that overrun the ifmap (strides that do not divide),
  // rectangular filters, a stride larger than the filter (pixels whose whole window is off
  // the ifmap), a one-pixel ofmap, separate strides, and a depth-wise layer (DP: one layer per
  // channel). SCALE-sim counts reads of off-ifmap elements but starts and stops on real ones.
  const std::vector<Layer> layers =
      parse_scalesim_topology("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num "
                              "Filter, Strides,\n"
                              "c9x9_f3,9,9,3,3,1,9,1,\nc17_f3_s2,17,17,3,3,2,17,2,\nc10_f3_s2_nondiv,10,10,3,3,3,5,2,\n"
                              "c11x13_f3x2_s3,11,13,3,2,2,4,3,\nc7_f1_s3,7,7,1,1,1,1,3,\n"
                              "c5_f1_s3_invalidpix,5,5,1,1,4,3,3,\nc33x1_f3x1,33,1,3,1,1,33,1,\n"
                              "c8_f8_onepix,8,8,8,8,1,8,1,\nDPconv6,6,6,3,3,3,1,1,\nc12x10_s2x1,12,10,3,3,1,2,2,1,\n"
                              "c9_f2_s4_gtf,9,9,2,2,2,3,4,\n",
                              "conv.csv", false);
  ASSERT_EQ(layers.size(), 13u);
  EXPECT_EQ(layers[8].name, "DPconv6Channel_0");
  std::vector<LayerReport> reports;
  for (const Layer& l : layers) reports.push_back(analyse_layer(array(8, 8, Dataflow::kWeightStationary, 2), l));
  EXPECT_EQ(compute_report_csv(reports), "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
                                         "Compute Util %,\n"
                                         "0, 283, 0, 21.913648409893995, 31.640625, 19.876802884615383,\n"
                                         "1, 773, 0, 39.58602846054334, 53.125, 36.55913978494623,\n"
                                         "2, 187, 0, 28.200200534759357, 52.734375, 24.4140625,\n"
                                         "3, 83, 0, 18.072289156626507, 37.5, 15.306122448979592,\n"
                                         "4, 30, 0, 0.46875, 1.5625, 0.3700657894736842,\n"
                                         "5, 30, 0, 5.625, 18.75, 4.440789473684211,\n"
                                         "6, 264, 0, 18.1640625, 30.9375, 15.984375,\n"
                                         "7, 183, 0, 4.371584699453552, 100.0, 3.3333333333333335,\n"
                                         "8, 75, 0, 3.0, 7.03125, 2.5,\n"
                                         "9, 75, 0, 3.0, 7.03125, 2.5,\n"
                                         "10, 75, 0, 3.0, 7.03125, 2.5,\n"
                                         "11, 139, 0, 9.712230215827338, 14.0625, 8.766233766233766,\n"
                                         "12, 30, 0, 11.25, 37.5, 8.881578947368421,\n");
  const std::string sram = columns(detailed_access_report_csv(reports), 10);
  EXPECT_EQ(sram.substr(sram.find('\n') + 1), "0, 9.0, 270.0, 882, 1.0, 221.0, 81, 15.0, 276.0, 882\n"
                                              "1, 9.0, 761.0, 3456, 1.0, 696.0, 306, 15.0, 766.0, 3264\n"
                                              "2, 9.0, 170.0, 675, 1.0, 149.0, 135, 15.0, 184.0, 500\n"
                                              "3, 9.0, 67.0, 240, 1.0, 50.0, 48, 15.0, 79.0, 160\n"
                                              "4, 9.0, 17.0, 9, 8.0, 8.0, 1, 15.0, 23.0, 9\n"
                                              "5, 9.0, 16.0, 36, 5.0, 8.0, 12, 15.0, 25.0, 27\n"
                                              "6, 9.0, 253.0, 465, 6.0, 220.0, 99, 15.0, 257.0, 1023\n"
                                              "7, 9.0, 177.0, 64, 1.0, 169.0, 512, 15.0, 183.0, 64\n"
                                              "8, 9.0, 62.0, 144, 1.0, 46.0, 9, 15.0, 68.0, 32\n"
                                              "9, 9.0, 62.0, 144, 1.0, 46.0, 9, 15.0, 68.0, 32\n"
                                              "10, 9.0, 62.0, 144, 1.0, 46.0, 9, 15.0, 68.0, 32\n"
                                              "11, 9.0, 118.0, 432, 1.0, 78.0, 18, 15.0, 133.0, 192\n"
                                              "12, 9.0, 20.0, 72, 1.0, 8.0, 24, 15.0, 25.0, 27\n");
  // SCALE-sim's own golden: AlexNet's first layer on its 32 x 32 weight-stationary config.
  const LayerReport conv1 =
      analyse_layer(array(32, 32, Dataflow::kWeightStationary),
                    parse_scalesim_topology("h\nConv1,224,224,11,11,3,96,4,\n", "a.csv", false)[0]);
  EXPECT_EQ(compute_report_csv({conv1}), "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
                                         "Compute Util %,\n"
                                         "0, 112283, 0, 91.68309650614964, 94.53125, 90.78000992063485,\n");
}

TEST(Systolic, FilesAndNumbersAsScaleSimWritesThem) {
  EXPECT_EQ(python_float(100.0), "100.0");
  EXPECT_EQ(python_float(-46.0), "-46.0");
  EXPECT_EQ(python_float(63.749999999999986), "63.749999999999986");
  EXPECT_EQ(python_float(1e-05), "1e-05");
  EXPECT_EQ(python_float(1e16), "1e+16");
  // A row without its trailing comma loses its last field, as in SCALE-sim: too few fields here.
  EXPECT_THAT(test::error_of([] { parse_scalesim_topology("h\ng,1,2,3\n", "t.csv", true); }),
              HasSubstr("t.csv: line 2: \"g,1,2,3\" has 3 fields before its last comma; expected 4"));
  // A depth-wise layer of a million channels would be a million layers: refused.
  EXPECT_THAT(test::error_of([] { parse_scalesim_topology("h\nDPx,9,9,3,3,1000000,1,1,\n", "t.csv", false); }),
              HasSubstr("t.csv: line 2: layer \"DPx\" is depth-wise (its name has DP), so each of its 1000000 channels "
                        "becomes a layer; expected at most 65536"));
  // Seven numbers: the one stride serves both directions.
  const Layer l = parse_scalesim_topology("h\nc,9,9,3,3,1,2,2,\n", "t.csv", false)[0];
  EXPECT_EQ(l.stride_w, 2u);
  EXPECT_THAT(test::error_of([] {
                parse_scalesim_config("[general]\nrun_name=x\n[architecture_presets]\nArrayHeight: 4\n"
                                      "ArrayWidth: 4\nIfmapSramSzkB: 1\nFilterSramSzkB: 1\nOfmapSramSzkB: 1\n"
                                      "Dataflow: xs\n[run_presets]\nInterfaceBandwidth: CALC\n",
                                      "bad.cfg");
              }),
              HasSubstr("bad.cfg: [architecture_presets] Dataflow is \"xs\"; expected os, ws or is"));
  EXPECT_THAT(test::error_of([] { parse_scalesim_config("[general]\nrun_name=x\n", "short.cfg"); }),
              HasSubstr("short.cfg: no [run_presets] section"));
  EXPECT_THAT(test::error_of(
                  [] { analyse_layer(array(4, 4, Dataflow::kOutputStationary), Layer::gemm("z", 0, 1, 1)); }),
              HasSubstr("layer \"z\": the ifmap height is 0"));
}

// SCALE-sim itself, when a source tree is at hand (CHAKRASIM_SCALESIM_DIR, with Debian's
// python3 and python3-numpy): fresh layers on fresh arrays, every dataflow, compared column by
// column (compute report whole; the access and bandwidth reports' SRAM columns).
TEST(Systolic, AgreesWithScaleSimWhereItCanRun) {
  const char* home = std::getenv("CHAKRASIM_SCALESIM_DIR");
  if (home == nullptr || !std::filesystem::exists(std::filesystem::path(home) / "scalesim" / "scale.py")) {
    GTEST_SKIP() << "set CHAKRASIM_SCALESIM_DIR to a scale-sim-v2 source tree (with python3-numpy installed) to run "
                    "SCALE-sim beside the closed forms";
  }
  const auto dir = test::temp_dir("systolic_vs_scalesim");
  test::write_bytes(dir / "gemm.csv", "Layer,M,N,K,\na,13,7,21,\nb,64,9,1,\nc,5,40,17,\n");
  test::write_bytes(dir / "conv.csv", "Layer,H,W,fh,fw,ch,nf,s,\nx,15,15,3,3,2,6,2,\ny,12,9,4,2,3,5,3,1,\n");
  for (const auto& [rows, cols] : {std::pair{4, 4}, std::pair{8, 5}, std::pair{3, 16}}) {
    for (const char* flow : {"os", "ws", "is"}) {
      for (const bool gemm : {true, false}) {
        SCOPED_TRACE(fmt::format("{} x {} {} {}", rows, cols, flow, gemm ? "gemm" : "conv"));
        const std::string cfg = fmt::format("[general]\nrun_name = t\n[architecture_presets]\nArrayHeight: "
                                            "{}\nArrayWidth: {}\nIfmapSramSzkB: 64\n"
                                            "FilterSramSzkB: 64\nOfmapSramSzkB: 64\nIfmapOffset: 0\nFilterOffset: "
                                            "10000000\nOfmapOffset: 20000000\n"
                                            "Bandwidth : 10\nDataflow : {}\nMemoryBanks: "
                                            "1\n[run_presets]\nInterfaceBandwidth: CALC\n",
                                            rows, cols, flow);
        test::write_bytes(dir / "t.cfg", cfg);
        const std::filesystem::path theirs = dir / "theirs";
        std::filesystem::remove_all(theirs);
        std::vector<std::string> args = {"-m", "scalesim.scale",
                                         "-c", (dir / "t.cfg").string(),
                                         "-t", (dir / (gemm ? "gemm.csv" : "conv.csv")).string(),
                                         "-p", theirs.string()};
        if (gemm) args.insert(args.end(), {"-i", "gemm"});
        setenv("PYTHONPATH", home, 1);
        const test::CommandResult ran = test::run_program("/usr/bin/python3", args, home);
        ASSERT_EQ(ran.exit_code, 0) << ran.err;
        const ScaleSimConfig ours_cfg = parse_scalesim_config(cfg, "t.cfg");
        std::vector<LayerReport> ours;
        for (const Layer& l :
             parse_scalesim_topology(test::file_bytes(dir / (gemm ? "gemm.csv" : "conv.csv")), "t.csv", gemm)) {
          ours.push_back(analyse_layer(ours_cfg.array, l));
        }
        EXPECT_EQ(test::file_bytes(theirs / "t" / "COMPUTE_REPORT.csv"), compute_report_csv(ours));
        EXPECT_EQ(columns(test::file_bytes(theirs / "t" / "DETAILED_ACCESS_REPORT.csv"), 10),
                  columns(detailed_access_report_csv(ours), 10));
        EXPECT_EQ(columns(test::file_bytes(theirs / "t" / "BANDWIDTH_REPORT.csv"), 4),
                  columns(bandwidth_report_csv(ours), 4));
      }
    }
  }
}

}  // namespace
}  // namespace chakrasim::compute::systolic
