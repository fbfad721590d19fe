// A finished run as a Chrome / Perfetto trace (the Trace Event Format's JSON): one process per
// NPU, one track per kind of work (GPU compute, CPU compute, collectives, collective chunks with
// their phases nested inside, send/recv, memory), more lanes of a kind where its slices overlap.
// Timestamps are microseconds with nanosecond decimals, as the format expects.
#pragma once

#include <string>
#include <vector>

#include "report/node_log.h"
#include "sim/simulation.h"

namespace chakrasim::report {

// The part of the run a timeline shows: slices that overlap [from_ns, to_ns).
struct TimeWindow {
  Tick from_ns = 0;
  Tick to_ns = kNeverTick;
  bool contains(Tick start, Tick end) const { return start < to_ns && end > from_ns; }
};

// Writes the timeline of `npus` (each must be recorded in `log`) to `path`; throws Error if the
// file cannot be written. A collective with one chunk gets no chunk slice, and a chunk with one
// phase no phase slice (they would repeat the slice above); sends and receives are named with
// their peer, and a flow arrow goes from each send to the receive that matched it when both
// NPUs are shown.
void write_timeline(const std::string& path, const sim::Inputs& inputs, const sim::Result& result, const NodeLog& log,
                    const std::vector<NpuId>& npus, const TimeWindow& window = {});

// About how many bytes the timeline of `npus` will take, from their graphs alone (before the
// run): a slice per node, and per collective one per chunk and phase as the system's splits and
// the network's dimensions suggest, at ~230 bytes a slice.
std::uint64_t estimate_timeline_bytes(const sim::Inputs& inputs, const std::vector<NpuId>& npus);

// A timeline above this is slow to open in a viewer.
inline constexpr std::uint64_t kLargeTimelineBytes = 100'000'000;
// The warning for a timeline of `npus` NPUs estimated at `bytes`, saying how to narrow it; ""
// when it is not above `limit`.
std::string timeline_size_warning(std::uint64_t bytes, std::size_t npus, std::uint64_t limit = kLargeTimelineBytes);

// Writes one CSV row per node that ran on `npus`: npu, id, name, type, start_ns, end_ns,
// duration_ns, bytes (comm_size, or tensor_size for memory nodes), group (pg_name).
void write_node_csv(const std::string& path, const sim::Inputs& inputs, const NodeLog& log,
                    const std::vector<NpuId>& npus);

}  // namespace chakrasim::report
