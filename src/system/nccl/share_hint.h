// Which of the model's link shares sets a large call's time, and the value of it that gives a
// time measured there: the one step of calibrating the model's bandwidth to a real machine, as
// the floor hint (sweep_comparison.h) is for its latency. At a size where the bytes set the time,
// the share of the busiest link's rate (NVLink's for rings, the NICs', NVLS's, an all-to-all's)
// scales it; the share whose change moves the time most is the one that binds there.
#pragma once

#include <cstdint>
#include <optional>

#include "system/nccl/achieved.h"
#include "system/nccl/call_types.h"
#include "system/nccl/sweep.h"

namespace chakrasim::system::nccl {

struct ShareHint {
  const char* option = "";  // the nccl-tests command's option that sets the share
  const char* binds = "";   // what the share is of, for the sentence that names it
  double now = 0;           // the model's share
  double share = 1;         // the share at which the model's time is the measured one
  bool reachable = true;    // false: even a share of 1 leaves the model slower than the run
  // Where it is not: the share that binds once this one is 1, if another does.
  const char* next_option = nullptr;
  const char* next_binds = nullptr;
};

// The share binding the call of `bytes` that `row` describes (its collective, type, operation,
// root and host's launches; out of place) on `machine`, and the value that makes its time
// `measured_us`; none where no share moves the time by at least half as much as it changes (a
// latency, the host's launches or NCCL's few channels a peer set it, not a link's rate), or
// where even a share near 0 leaves the model faster than the run.
std::optional<ShareHint> share_hint(const Machine& machine, const Enabled& enabled, const Efficiencies& efficiencies,
                                    const SweepOptions& row, std::uint64_t bytes, double measured_us);

}  // namespace chakrasim::system::nccl
