#include "compute/systolic/systolic_presets.h"

#include "core/error.h"

namespace chakrasim::compute::systolic {

namespace {

SystolicSpec make(const char* name, std::uint64_t rows, std::uint64_t cols, Dataflow dataflow, std::uint64_t arrays,
                  double clock_mhz, std::uint64_t word_bytes, std::uint64_t ifmap_kib, std::uint64_t filter_kib,
                  std::uint64_t ofmap_kib, double dram_gb_per_s) {
  SystolicSpec s;
  s.preset = name;
  s.array = ArrayShape{rows, cols, dataflow, ifmap_kib, filter_kib, ofmap_kib};
  s.arrays = arrays;
  s.clock_mhz = clock_mhz;
  s.word_bytes = word_bytes;
  s.dram_gb_per_s = dram_gb_per_s;
  return s;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = {
      {"tpu-v4",
       "one TensorCore of a TPU v4 chip: 4 MXUs of 128x128, weight stationary, 1050 MHz, bf16, 8/4/4 MiB of "
       "SRAM (assumed), half the chip's 1228 GB/s HBM (137.6 TFLOP/s)",
       make("tpu-v4", 128, 128, Dataflow::kWeightStationary, 4, 1050, 2, 8192, 4096, 4096, 614)},
      {"tpu-v5e",
       "a TPU v5e chip: 4 MXUs of 128x128, weight stationary, 1500 MHz, bf16, 8/4/4 MiB of SRAM (assumed), 819 GB/s "
       "HBM (196.6 TFLOP/s)",
       make("tpu-v5e", 128, 128, Dataflow::kWeightStationary, 4, 1500, 2, 8192, 4096, 4096, 819)},
      {"google",
       "SCALE-sim's google.cfg, a TPU v1: one 256x256 array, weight stationary, 6144/6144/2048 KiB SRAMs, "
       "700 MHz, int8, 34 GB/s DDR3 (91.8 TOP/s)",
       make("google", 256, 256, Dataflow::kWeightStationary, 1, 700, 1, 6144, 6144, 2048, 34)},
  };
  return kPresets;
}

const Preset& preset(const std::string& name) {
  std::string valid;
  for (const Preset& p : presets()) {
    if (name == p.name) return p;
    valid += std::string(valid.empty() ? "" : ", ") + p.name;
  }
  fail("unknown systolic preset \"{}\"; valid presets are: {}", name, valid);
}

}  // namespace chakrasim::compute::systolic
