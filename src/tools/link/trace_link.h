// The trace linker: a PyTorch host execution trace (the JSON the ET observer writes) plus the
// Kineto device trace of the same run (Chrome-trace JSON) -> the "ET+" JSON that `chakrasim
// chakra convert pytorch` reads, as `chakra_trace_link` writes it (docs/chakra-format.md §4.2).
//
// Every host node is kept, its fields as written, renumbered from 0 in host-id order. A host op
// whose rf_id matches a Kineto CPU op gets that op's `ts`, `inclusive_dur`, `exclusive_dur` (its
// duration less the union of the ops nested in it, same thread) and `inter_thread_dep`. Right
// after it come the GPU ops it launched (kernels and memcpys, by ts), each a copy of the host
// node with the kernel's `name`, `cat`, `ph`, `ts`, durations, `stream` and, for NCCL kernels,
// `pg_name`; its `ctrl_deps` is the launching host op. The host's process and thread annotation
// nodes get the spans of the Kineto process and of their thread (exclusive_dur 0).
//
// Where this differs from the reference tool, on purpose:
//  - every host op is linked, not only those reachable from node 1 (the reference drops the
//    rest: chakra issue #161), and node 1 need not exist;
//  - ids are assigned before any reference is translated, so inter_thread_dep and sync_dep
//    always hold new ids (the reference falls back to the original id when the target comes
//    later in id order);
//  - sync_dep comes from the CUDA synchronisation calls in the device trace (HTA's critical
//    path, which the reference uses, does not exist here): after cudaDeviceSynchronize,
//    cudaStreamSynchronize or cudaEventSynchronize returns, the next CPU op of that thread
//    waits for the last GPU op launched before the call on each stream it synchronised;
//  - a new inter-thread group starts when the thread has been idle over 1000 µs (the gap is
//    measured from the end of everything running, not from the previous op's end), and its
//    dependency is the latest op of another thread that is in the host trace;
//  - a GPU op's launcher is the op with the launch's External id, else the innermost op around
//    the launch (one starting at the launch's own µs included), else the nearest enclosing op in
//    the host trace, else the thread's annotation node;
//  - the process and thread annotation nodes get their spans (the reference computes them but,
//    its synthetic ops having no rf_id, never writes them);
//  - a negative "dur" is an error, so a negative exclusive duration can only be rounding of
//    fractional µs: it reads as 0 (the reference stops there);
//  - the device trace must be of the host trace's process (pid) and, with --rank, of that rank.

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chakrasim::tools {

struct LinkOptions {
  // When set, the device trace's distributedInfo.rank (where it has one) must equal it.
  std::optional<std::int64_t> rank;
};

// What one link did, for the CLI's summary line; `warnings` lists what was left unlinked.
struct LinkReport {
  std::size_t host_nodes = 0;  // nodes of the host trace
  std::size_t linked_ops = 0;  // host nodes that got timing from the device trace
  std::size_t gpu_ops = 0;     // GPU nodes added
  std::size_t inter_thread_deps = 0;
  std::size_t sync_deps = 0;  // sync_dep entries written
  std::vector<std::string> warnings;
};

// Links the two traces' JSON texts (`host_source` / `device_source` name them in errors) and
// returns the ET+ JSON text, laid out as Python's json.dump(indent=4). Throws Error on input
// that is not what a PyTorch host trace or a Kineto trace is.
std::string link_traces(const std::string& host_json, const std::string& host_source, const std::string& device_json,
                        const std::string& device_source, const LinkOptions& options, LinkReport* report = nullptr);

// Reads both files, links them and writes the ET+ JSON to `out_path`.
LinkReport link_trace_files(const std::string& host_path, const std::string& device_path, const std::string& out_path,
                            const LinkOptions& options);

}  // namespace chakrasim::tools
