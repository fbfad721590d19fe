// What the user says about compute: which model times compute nodes and its parameters (the
// system JSON's roofline keys). Parsed in config/; read by the model the name selects.
#pragma once

#include <string>

namespace chakrasim::compute {

struct ComputeSpec {
  // A row of compute::compute_models(): "replay" (recorded durations) unless the system JSON
  // sets roofline-enabled, which selects "roofline".
  std::string model = "replay";
  double peak_perf_tflops = 0;       // 10^12 FLOP/s: the roofline's ceiling
  double local_mem_bw_gb_per_s = 0;  // 10^9 B/s
  // 10^12 FLOP/s: the data-sheet peak MFU is measured against (0: peak_perf_tflops). A
  // roofline ceiling is often the peak times an achievable efficiency; MFU is not.
  double mfu_peak_tflops = 0;
};

}  // namespace chakrasim::compute
