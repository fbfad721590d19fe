// libFuzzer target: the reader of a real run's nccl-tests output (system/nccl/measured_sweep.h)
// and the model's times for its first rows, with their shape and, for odd-sized inputs, noise
// spikes left out.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "system/nccl/hardware.h"
#include "system/nccl/measured_sweep.h"
#include "system/nccl/sweep_comparison.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim::system::nccl;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    MeasuredRun run = read_nccl_tests_log(text, "fuzz.log", Collective::kAllReduce);
    // Three rows are enough to reach the comparison's arithmetic and a spike between two others;
    // more would only slow the run.
    if (run.rows.size() > 3) run.rows.resize(3);
    Machine machine;
    machine.gpu = &gpu_preset("H100");
    machine.nic = &nic_preset(machine.gpu->default_nic);
    machine.gpus_per_node = machine.nics_per_node = 8;
    CompareOptions options;
    options.leave_out_spikes = (size & 1) != 0;
    const Comparison c =
        compare_with_model(run, "fuzz.log", Collective::kAllReduce, machine, Enabled::all(), {}, options);
    (void)comparison_table(c, Collective::kAllReduce, machine, "fuzz.log");
  } catch (const chakrasim::Error&) {}
  return 0;
}
