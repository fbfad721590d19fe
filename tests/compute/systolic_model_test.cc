// The systolic compute model (compute/systolic/systolic_model.h): each node's cycles from its
// shape and the chip, the passes, several arrays and batched GEMMs, the roofline fallback,
// memory stalls, the per-node figures; and the system JSON's "systolic" object.
#include "compute/systolic/systolic_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/trace_builder.h"
#include "compute/systolic/systolic_presets.h"
#include "config/systolic_config.h"
#include "support/test_support.h"

namespace chakrasim::compute {
namespace {

using chakra::NodeType;
using ::testing::HasSubstr;

// An 8 x 8 array at 1000 MHz (one cycle a ns), one-byte words, DRAM at 1 GB/s (a byte a cycle).
ComputeSpec chip(systolic::Dataflow dataflow, std::uint64_t arrays = 1) {
  ComputeSpec spec;
  spec.model = "systolic";
  spec.systolic.array = systolic::ArrayShape{8, 8, dataflow, 0, 0, 0};
  spec.systolic.arrays = arrays;
  spec.systolic.clock_mhz = 1000;
  spec.systolic.word_bytes = 1;
  spec.systolic.dram_gb_per_s = 1;
  return spec;
}

chakra::Attribute gemm(std::vector<std::int64_t> dims) { return chakra::make_int64_list("gemm", dims); }

// Node 0: gemm 16x16x16. Node 1: gemm 16x8x16, input_gradient. Node 2: the same forward.
// Node 3: 3 GEMMs of 16x16x16. Node 4: no shape, 1280 FLOP over 10 bytes. Node 5: a CPU op.
// Node 6: no shape and no num_ops, recorded 0 us.
chakra::Graph graph() {
  chakra::TraceBuilder b;
  b.node(NodeType::kComp, "g").attr(gemm({16, 16, 16}));
  b.node(NodeType::kComp, "dg").attr(gemm({16, 8, 16})).attr(chakra::make_string("pass", "input_gradient"));
  b.node(NodeType::kComp, "fw").attr(gemm({16, 8, 16}));
  b.node(NodeType::kComp, "batched").attr(gemm({16, 16, 16, 3}));
  b.node(NodeType::kComp, "softmax")
      .attr(chakra::make_uint64("num_ops", 1280))
      .attr(chakra::make_uint64("tensor_size", 10));
  b.node(NodeType::kComp, "host").duration_micros(4).is_cpu_op(true);
  b.node(NodeType::kComp, "bare");
  return chakra::Graph::build(b.trace(), "s.et");
}

TEST(SystolicModel, ANodeTakesScaleSimsCyclesAtTheClock) {
  const chakra::Graph g = graph();
  // Output stationary: M x N on the array, K in time. A fold takes K + R + C - 2 = 30 cycles;
  // 16 x 16 is 2 x 2 folds; SCALE-sim counts folds x fold - 1 = 119.
  const auto os = make_compute_model(chip(systolic::Dataflow::kOutputStationary));
  EXPECT_EQ(os->duration(g, 0), Tick{119});
  // The input gradient of M=16, N=8, K=16 runs 16 x 16 with inner 8: folds of 8 + 14 = 22
  // cycles, 4 of them (87); the forward runs 16 x 8 with inner 16: 2 folds of 30 (59).
  EXPECT_EQ(os->duration(g, 1), Tick{87});
  EXPECT_EQ(os->duration(g, 2), Tick{59});
  // Weight stationary: K x N on the array, M in time; a fold is 2R + C + M - 2 = 38: 4 x 38 - 1.
  EXPECT_EQ(make_compute_model(chip(systolic::Dataflow::kWeightStationary))->duration(g, 0), Tick{151});
  // At 500 MHz each cycle is 2 ns.
  ComputeSpec slow = chip(systolic::Dataflow::kOutputStationary);
  slow.systolic.clock_mhz = 500;
  EXPECT_EQ(make_compute_model(slow)->duration(g, 0), Tick{238});
  // A CPU op keeps its recorded time.
  EXPECT_EQ(os->duration(g, 5), Tick{4000});
}

TEST(SystolicModel, ArraysShareTheFoldsOfEveryGemmOfANode) {
  const chakra::Graph g = graph();
  // 4 arrays take the 4 folds at once: one fold, 29 cycles.
  EXPECT_EQ(make_compute_model(chip(systolic::Dataflow::kOutputStationary, 4))->duration(g, 0), Tick{29});
  // 3 GEMMs of 4 folds on 2 arrays: 6 rounds of 30 cycles, 179; on 5 arrays ceil(12 / 5) = 3 rounds.
  EXPECT_EQ(make_compute_model(chip(systolic::Dataflow::kOutputStationary, 2))->duration(g, 3), Tick{179});
  EXPECT_EQ(make_compute_model(chip(systolic::Dataflow::kOutputStationary, 5))->duration(g, 3), Tick{89});
}

TEST(SystolicModel, NodesWithoutAShapeFallBackToTheRoofline) {
  const chakra::Graph g = graph();
  const auto model = make_compute_model(chip(systolic::Dataflow::kOutputStationary));
  // The arrays' peak, 2 x 64 FLOP a ns (0.128 TFLOP/s), and DRAM's 1 GB/s: intensity 128 makes
  // the node compute bound, 1280 FLOP in 10 ns.
  EXPECT_EQ(model->duration(g, 4), Tick{10});
  EXPECT_TRUE(model->falls_back(g, 4));
  EXPECT_FALSE(model->falls_back(g, 0));
  EXPECT_FALSE(model->falls_back(g, 5));  // CPU ops are replayed, not a fallback
  EXPECT_THAT(model->fallback_name(), HasSubstr("roofline"));
  // peak-perf, when given, is the fallback's ceiling: 0.064 TFLOP/s takes 20 ns.
  ComputeSpec capped = chip(systolic::Dataflow::kOutputStationary);
  capped.peak_perf_tflops = 0.064;
  EXPECT_EQ(make_compute_model(capped)->duration(g, 4), Tick{20});
  EXPECT_EQ(model->check(g, 0), "");
  EXPECT_EQ(model->check(g, 4), "");
  // Without num_ops and tensor_size a node keeps its recorded duration (0 us replays as 1 ns).
  EXPECT_EQ(model->check(g, 6), "");
  EXPECT_EQ(model->duration(g, 6), Tick{1});
  EXPECT_TRUE(model->falls_back(g, 6));
  // A batched GEMM whose cycles could not be counted in 62 bits is refused before the run.
  chakra::TraceBuilder b;
  b.node(NodeType::kComp, "huge").attr(gemm({1024, 1024, 1024, std::int64_t{1} << 50}));
  const chakra::Graph huge = chakra::Graph::build(b.trace(), "h.et");
  EXPECT_THAT(model->check(huge, 0), HasSubstr("gemm 1125899906842624x(1024x1024x1024): 1125899906842624 GEMMs of "
                                               "16384 folds"));
}

TEST(SystolicModel, MemoryStallsApproximateScaleSimsUserMode) {
  const chakra::Graph g = graph();
  ComputeSpec spec = chip(systolic::Dataflow::kWeightStationary);
  spec.systolic.memory_stalls = true;
  // No SRAM, DRAM at a word a cycle. Weight stationary 16x16x16 on 8 x 8 (151 compute cycles)
  // streams the ifmap once per column fold (2 x 16 x 16 = 512 words) and the filter once (256),
  // and drains partial sums once per row fold (512): each SRAM is fed on its own, as SCALE-sim
  // feeds its three buffers, so the slowest, 512 cycles, bounds the node.
  EXPECT_EQ(make_compute_model(spec)->duration(g, 0), Tick{512});
  // Three such GEMMs share the DRAM one after another: 3 x 512.
  EXPECT_EQ(make_compute_model(spec)->duration(g, 3), Tick{1536});
  // Ifmap and filter SRAMs of 1 KiB: half holds each 16 x 16 operand, filled before the first
  // cycle; the ofmap, without SRAM, still drains 512 words.
  spec.systolic.array.ifmap_sram_kib = spec.systolic.array.filter_sram_kib = 1;
  const auto model = make_compute_model(spec);
  EXPECT_EQ(model->duration(g, 0), Tick{512});
  const NodeFigures f = model->figures(g, 0).value();
  EXPECT_EQ(f.cycles, 512u);
  EXPECT_EQ(f.stall_cycles, 512u - 151);
  EXPECT_EQ(f.dram_read_bytes, 512u);  // the operands once each
  EXPECT_EQ(f.dram_write_bytes, 512u);
  EXPECT_FALSE(model->utilization(g, 0)->compute_bound);
  // An ofmap SRAM of 1 KiB: its 512 writes fill one half, whose drain runs after the node (it
  // stalls only once a second half fills before the first has drained): no stall at all.
  spec.systolic.array.ofmap_sram_kib = 1;
  EXPECT_EQ(make_compute_model(spec)->duration(g, 0), Tick{151});
  // 2^36 GEMMs of 1024^3 take about 2^60 compute cycles, but their ifmap streams (128 column
  // folds x 2^20 reads each) would wait about 2^63 cycles for DRAM: refused before the run.
  {
    ComputeSpec slow = chip(systolic::Dataflow::kOutputStationary);
    slow.systolic.memory_stalls = true;
    chakra::TraceBuilder b;
    b.node(NodeType::kComp, "many").attr(gemm({1024, 1024, 1024, std::int64_t{1} << 36}));
    const chakra::Graph many = chakra::Graph::build(b.trace(), "m.et");
    EXPECT_THAT(make_compute_model(slow)->check(many, 0), HasSubstr("cycles for DRAM at 1 GB/s; expected fewer than "
                                                                    "2^62"));
    slow.systolic.memory_stalls = false;  // without stalls it runs, and its traffic saturates rather than wraps
    EXPECT_EQ(make_compute_model(slow)->check(many, 0), "");
    EXPECT_GT(make_compute_model(slow)->figures(many, 0)->sram_read_bytes, std::uint64_t{1} << 62);
  }
  // Without stalls the chip takes its compute cycles whatever the SRAMs.
  spec.systolic.array = systolic::ArrayShape{8, 8, systolic::Dataflow::kWeightStationary, 0, 0, 0};
  spec.systolic.memory_stalls = false;
  EXPECT_EQ(make_compute_model(spec)->duration(g, 0), Tick{151});
}

TEST(SystolicModel, FiguresSayHowTheArrayWasUsed) {
  const chakra::Graph g = graph();
  const auto model = make_compute_model(chip(systolic::Dataflow::kOutputStationary));
  const NodeFigures f = model->figures(g, 0).value();
  EXPECT_EQ(f.shape, "gemm 16x16x16");
  EXPECT_EQ(f.cycles, 119u);
  EXPECT_EQ(f.stall_cycles, 0u);
  // 4096 MACs over 119 cycles of 64 units; every fold maps the whole array.
  EXPECT_DOUBLE_EQ(f.compute_util, 4096.0 / (119 * 64));
  EXPECT_DOUBLE_EQ(f.mapping_efficiency, 1.0);
  // Output stationary reads the ifmap per column fold and the filter per row fold (2 x 256 each)
  // and writes the ofmap with SCALE-sim's R + C per fold (256 + 4 x 16).
  EXPECT_EQ(f.sram_read_bytes, 1024u);
  EXPECT_EQ(f.sram_write_bytes, 320u);
  // The 16 x 8 forward and its 16 x 16 input gradient fill the 8 x 8 array in every fold too.
  EXPECT_DOUBLE_EQ(model->figures(g, 2)->mapping_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(model->figures(g, 1)->mapping_efficiency, 1.0);
  EXPECT_FALSE(model->figures(g, 4).has_value());  // the roofline's node
  EXPECT_TRUE(model->reports_figures());
}

TEST(SystolicConfig, PresetsAndOverrides) {
  const SystolicSpec v4 = config::parse_systolic(nlohmann::json::parse(R"({"preset": "tpu-v4"})"), "s.json");
  EXPECT_EQ(v4.array.rows, 128u);
  EXPECT_EQ(v4.arrays, 4u);
  EXPECT_EQ(v4.array.dataflow, systolic::Dataflow::kWeightStationary);
  // 2 x 4 x 128 x 128 MAC units at 1.05 GHz.
  EXPECT_DOUBLE_EQ(v4.peak_tflops(), 2.0 * 4 * 128 * 128 * 1050e6 / 1e12);
  const SystolicSpec custom =
      config::parse_systolic(nlohmann::json::parse(
                                 R"({"preset": "google", "dataflow": "os", "arrays": 2, "memory-stalls": true})"),
                             "s.json");
  EXPECT_EQ(custom.array.rows, 256u);
  EXPECT_EQ(custom.array.dataflow, systolic::Dataflow::kOutputStationary);
  EXPECT_EQ(custom.arrays, 2u);
  EXPECT_TRUE(custom.memory_stalls);
  // What systolic_json writes reads back the same.
  const SystolicSpec back = config::parse_systolic(nlohmann::json::parse(config::systolic_json(custom)), "s.json");
  EXPECT_EQ(back.array.rows, custom.array.rows);
  EXPECT_EQ(back.array.ofmap_sram_kib, custom.array.ofmap_sram_kib);
  EXPECT_EQ(back.clock_mhz, custom.clock_mhz);
  EXPECT_EQ(back.memory_stalls, custom.memory_stalls);
}

TEST(SystolicConfig, BadObjectsNameTheKeyAndWhatWasExpected) {
  auto error = [](const char* text) {
    return test::error_of([&] { config::parse_systolic(nlohmann::json::parse(text), "s.json"); });
  };
  EXPECT_THAT(error(R"({"preset": "tpu-v9"})"), HasSubstr("s.json: key \"systolic\": unknown systolic preset "
                                                          "\"tpu-v9\"; valid presets are: tpu-v4, tpu-v5e, google"));
  EXPECT_THAT(error(R"({"rows": 8, "cols": 8, "clock-mhz": 1})"), HasSubstr("no \"preset\" and no \"dram-gb-per-s\""));
  EXPECT_THAT(error(R"({"preset": "google", "colums": 4})"), HasSubstr("unknown key \"colums\" (did you mean "
                                                                       "\"cols\"?)"));
  EXPECT_THAT(error(R"({"preset": "google", "dataflow": "rs"})"), HasSubstr("\"dataflow\" is \"rs\"; expected \"os\""));
  EXPECT_THAT(error(R"({"preset": "google", "rows": 0})"), HasSubstr("\"rows\" is 0; expected an integer from 1"));
  EXPECT_THAT(error(R"({"preset": "google", "clock-mhz": -5})"), HasSubstr("expected a positive number"));
  EXPECT_THAT(error(R"("tpu-v4")"), HasSubstr("expected an object such as {\"preset\": \"tpu-v4\"}"));
}

}  // namespace
}  // namespace chakrasim::compute
