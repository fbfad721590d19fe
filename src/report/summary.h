// What a person reads after a run: the reference-compatible per-NPU lines, a summary in real
// units, and the machine-readable JSON of the same figures.
#pragma once

#include <ostream>
#include <string>

#include "core/types.h"
#include "report/analysis.h"
#include "sim/simulation.h"

namespace chakrasim::report {

// "850 ns", "117.780 µs", "1.234 ms", "2.500 s".
std::string format_duration(Tick ns);

// `sys[<i>] finished, <N> cycles, exposed communication <M> cycles.` and its newline, as
// ASTRA-sim prints it for NPU `npu`.
std::string finish_line(std::size_t npu, const sim::NpuResult& result);
// That line for each finished NPU, in rank order.
void print_finish_lines(std::ostream& out, const sim::Result& result);

// A short summary in real units.
void print_summary(std::ostream& out, const sim::Result& result);

// The deadlock report: which nodes on which NPUs never finished, and what each waits for.
void print_deadlock(std::ostream& out, const sim::Result& result);

// One warning per collective whose bus bandwidth exceeds what its links can carry
// (CollectiveRow::exceeds_links), the first `limit` of them and a count of the rest; nothing when
// there is none. Printed even under --quiet: the figure it warns of is not a prediction.
void print_bandwidth_warnings(std::ostream& out, const std::vector<CollectiveRow>& rows, const std::string& backend,
                              std::size_t limit = 5);
// Why such a bus bandwidth appears on `backend` (a name from network::backends()), one sentence
// for the warnings and the report: a backend that serves every message at full link rate
// overstates it; on one that shares the links (BackendInfo::has_links) it can only come from NPU
// 0 starting the collective after its peers had sent it their shares.
std::string bandwidth_explanation(const std::string& backend);

// The per-NPU results as one JSON document; with `collectives`, also their nccl-tests figures
// under "collectives" (size and which buffer it is, time, algbw and busbw in 10^9 B/s).
std::string results_json(const sim::Result& result, const std::vector<CollectiveRow>* collectives = nullptr);
void write_results_json(const std::string& path, const sim::Result& result,
                        const std::vector<CollectiveRow>* collectives = nullptr);

}  // namespace chakrasim::report
