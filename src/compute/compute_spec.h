// What the user says about compute: which model times compute nodes and its parameters (the
// system JSON's roofline keys and its "systolic" object). Parsed in config/; read by the model
// the name selects.
#pragma once

#include <cstdint>
#include <string>

#include "compute/systolic/systolic_layer.h"

namespace chakrasim::compute {

// One chip of systolic arrays (the "systolic" model; docs/systolic.md).
struct SystolicSpec {
  std::string preset;  // the preset it started from ("": none)
  systolic::ArrayShape array{128, 128, systolic::Dataflow::kWeightStationary, 0, 0, 0};  // and its SRAMs
  std::uint64_t arrays = 1;  // arrays per chip, sharing a node's folds
  double clock_mhz = 0;
  std::uint64_t word_bytes = 2;
  double dram_gb_per_s = 0;    // 10^9 B/s; the roofline fallback's memory slope too
  bool memory_stalls = false;  // SCALE-sim's USER mode, approximated: DRAM stalls at dram_gb_per_s
  // 10^12 FLOP/s: 2 FLOP per MAC slot per cycle.
  double peak_tflops() const {
    return 2.0 * static_cast<double>(array.rows * array.cols * arrays) * clock_mhz * 1e6 / 1e12;
  }
};

struct ComputeSpec {
  // A row of compute::compute_models(): "replay" (recorded durations) unless the system JSON
  // sets roofline-enabled, which selects "roofline", or "systolic", which selects "systolic".
  std::string model = "replay";
  double peak_perf_tflops = 0;       // 10^12 FLOP/s: the roofline's ceiling
  double local_mem_bw_gb_per_s = 0;  // 10^9 B/s
  // 10^12 FLOP/s: the data-sheet peak MFU is measured against (0: peak_perf_tflops). A
  // roofline ceiling is often the peak times an achievable efficiency; MFU is not.
  double mfu_peak_tflops = 0;
  SystolicSpec systolic;
};

}  // namespace chakrasim::compute
