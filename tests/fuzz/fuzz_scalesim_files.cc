// libFuzzer target: SCALE-sim's config and topology readers (compute/systolic/scalesim_files.h)
// and the closed forms on what they read (with a USER config, the stall approximation too). The first byte picks the
// reader: a config whose array then runs a fixed GEMM, or a topology (conv or M,N,K) whose layers run on a fixed 8 x 8
// array.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compute/systolic/scalesim_files.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chakrasim;
  using namespace chakrasim::compute::systolic;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if ((data[0] & 3) == 0) {
      const ScaleSimConfig cfg = parse_scalesim_config(text, "fuzz.cfg");
      if (cfg.array.rows <= 4096 && cfg.array.cols <= 4096) {
        const Layer gemm = Layer::gemm("g", 37, 19, 23);
        LayerReport report = analyse_layer(cfg.array, gemm);
        if (cfg.user_bandwidth) {  // the stall approximation on any SRAM sizes and bandwidth
          const double memory =
              memory_bound_cycles(cfg.array, gemm, static_cast<double>(cfg.bandwidth_words_per_cycle));
          if (!(memory >= 0)) __builtin_trap();
          if (memory > static_cast<double>(report.total_cycles) && memory < 1e18) {
            add_stall_cycles(report, cfg.array, static_cast<std::uint64_t>(memory) - report.total_cycles);
          }
        }
        (void)compute_report_csv({report});
      }
    } else {
      const ArrayShape array{8, 8, static_cast<Dataflow>(data[0] % 3), 1, 1, 1};
      std::vector<LayerReport> reports;
      for (const Layer& l : parse_scalesim_topology(text, "fuzz.csv", (data[0] & 4) != 0)) {
        // Bounded work: the averages cost one step per fold, the start and stop a few pixels.
        if (l.ifmap_h > 256 || l.ifmap_w > 256 || l.filters > 256 || l.channels > 64) continue;
        reports.push_back(analyse_layer(array, l));
      }
      (void)detailed_access_report_csv(reports);
    }
  } catch (const Error&) {}
  return 0;
}
