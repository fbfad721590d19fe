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

// Writes the timeline of `npus` (each must be recorded in `log`) to `path`; throws Error if the
// file cannot be written.
void write_timeline(const std::string& path, const sim::Inputs& inputs, const sim::Result& result, const NodeLog& log,
                    const std::vector<NpuId>& npus);

// Writes one CSV row per node that ran on `npus`: npu, id, name, type, start_ns, end_ns,
// duration_ns, bytes (comm_size, or tensor_size for memory nodes), group (pg_name).
void write_node_csv(const std::string& path, const sim::Inputs& inputs, const NodeLog& log,
                    const std::vector<NpuId>& npus);

}  // namespace chakrasim::report
