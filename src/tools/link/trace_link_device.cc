// The trace linker's reading of the Kineto device trace: its events, the CPU ops' exclusive
// durations and nesting, and the indexes the linking uses (trace_link_linker.h).
#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "core/error.h"
#include "core/json_input.h"
#include "tools/link/trace_link_linker.h"

namespace chakrasim::tools::trace_linker {

void Linker::load_device(const std::string& text, const LinkOptions& options) {
  Json root = parse_json(text, device_source_, "a Kineto trace with \"traceEvents\"");
  auto events = root.find("traceEvents");
  if (events == root.end())
    fail("{}: no \"traceEvents\"; expected a Kineto (Chrome-trace) JSON with a \"traceEvents\" list", device_source_);
  if (!events->is_array())
    fail("{}: \"traceEvents\" is {}; expected a list of events", device_source_, events->type_name());
  if (auto info = root.find("distributedInfo"); options.rank && info != root.end() && info->is_object()) {
    const auto rank = integer_field(*info, "rank", device_source_ + ": distributedInfo");
    if (rank && *rank != *options.rank) {
      fail("{}: distributedInfo.rank is {} but --rank is {}; expected the device trace of rank {}", device_source_,
           *rank, *options.rank, *options.rank);
    }
  }
  for (std::size_t i = 0; i < events->size(); ++i) read_event((*events)[i], i);
  std::stable_sort(events_.begin(), events_.end(),
                   [](const DeviceEvent& a, const DeviceEvent& b) { return a.ts.value < b.ts.value; });
  index_device();
}

void Linker::read_event(const Json& raw, std::size_t index) {
  const std::string where = fmt::format("{}: traceEvents[{}]", device_source_, index);
  if (!raw.is_object()) fail("{} is {}; expected an event object", where, raw.type_name());
  DeviceEvent e;
  e.index = index;
  e.cat = string_field(raw, "cat", where);
  e.name = string_field(raw, "name", where);
  if (auto ph = raw.find("ph"); ph != raw.end()) e.ph = *ph;
  const bool complete = e.ph == "X";
  // Times beyond 2^53 µs are not exact as doubles (and 2^64-1 wrapped when written back as an
  // integer): they are refused like a missing time, with the range in the message.
  auto time_of = [&](const char* key, Micros& out) {
    auto it = raw.find(key);
    if (it == raw.end() || !it->is_number()) return false;
    const double value = it->get<double>();
    if (!(std::fabs(value) <= kMaxExactMicros)) return false;
    out = {value, it->is_number_float()};
    return true;
  };
  const bool cpu_side =
      e.cat == "cpu_op" || e.cat == "user_annotation" || e.cat == "cuda_runtime" || e.cat == "cuda_driver";
  if (auto tid = raw.find("tid"); tid != raw.end()) e.tid = tid->dump();
  if (complete && time_of("ts", e.ts) && time_of("dur", e.dur)) {  // spans use every complete event
    process_span_.add(e.ts, e.end());
    if (cpu_side) thread_spans_[e.tid].add(e.ts, e.end());
  }

  static const std::set<std::string_view> kLaunches =
      {"cuLaunchKernel",        "cuLaunchKernelEx",    "cudaLaunchKernel",
       "cudaLaunchKernelExC",   "cudaMemcpy",          "cudaMemcpyAsync",
       "cudaMemcpyFromSymbol",  "cudaMemcpyToSymbol",  "cudaLaunchCooperativeKernel",
       "hipLaunchKernel",       "hipExtLaunchKernel",  "hipExtModuleLaunchKernel",
       "hipModuleLaunchKernel", "hipMemcpyWithStream", "hipMemcpyAsync"};
  static const std::set<std::string_view> kSyncs = {"cudaDeviceSynchronize", "cudaStreamSynchronize",
                                                    "cudaEventSynchronize",  "cuCtxSynchronize",
                                                    "cuStreamSynchronize",   "cuEventSynchronize",
                                                    "hipDeviceSynchronize",  "hipStreamSynchronize",
                                                    "hipEventSynchronize"};
  const Json no_args = Json::object();
  auto args_it = raw.find("args");
  if (args_it != raw.end() && !args_it->is_object())
    fail("{}: \"args\" is {}; expected an object", where, args_it->type_name());
  const Json& args = args_it == raw.end() ? no_args : *args_it;

  if (e.cat == "ac2g") {  // CPU->GPU flow arrows: the correlation is on both ends already
    if (e.ph != "s" && e.ph != "f")
      fail("{}: ac2g flow event with ph {}; expected \"s\" or \"f\"", where, json_excerpt(e.ph));
    if (!raw.contains("id")) fail("{}: ac2g flow event without \"id\"; expected the launch's correlation id", where);
    return;
  }
  if (e.cat == "cuda_sync") {  // the GPU side of a synchronisation, where the profiler records it
    const auto correlation = integer_field(args, "correlation", where + ": args");
    const auto stream = integer_field(args, "stream", where + ": args");
    if (correlation && stream) sync_stream_by_correlation_.emplace(*correlation, *stream);
    return;
  }
  if ((e.cat == "cpu_op" || e.cat == "user_annotation") && !contains(e.name, "ProfilerStep")) {
    e.kind = Kind::kCpuOp;
  } else if ((e.cat == "cuda_runtime" || e.cat == "cuda_driver") && kLaunches.count(e.name)) {
    e.kind = Kind::kLaunch;
  } else if ((e.cat == "cuda_runtime" || e.cat == "cuda_driver") && kSyncs.count(e.name)) {
    e.kind = Kind::kSync;
  } else if (e.cat == "kernel" || e.cat == "gpu_memcpy") {
    e.kind = Kind::kGpuOp;
  } else {
    return;
  }
  if (!time_of("ts", e.ts))
    event_fail(e, fmt::format("\"ts\" is {}; expected a time in µs, at most 2^53 in magnitude",
                              raw.contains("ts") ? json_excerpt(raw["ts"]) : "missing"));
  if (!time_of("dur", e.dur))
    event_fail(e, fmt::format("\"dur\" is {}; expected a duration in µs, at most 2^53",
                              raw.contains("dur") ? json_excerpt(raw["dur"]) : "missing"));
  if (e.dur.value < 0) event_fail(e, fmt::format("\"dur\" is {}; expected a duration of 0 µs or more", e.dur.value));
  const std::string args_where = where + ": args";
  e.external_id = integer_field(args, "External id", args_where);
  e.rf_id = integer_field(args, "Record function id", args_where);
  e.correlation = integer_field(args, "correlation", args_where);
  e.stream = integer_field(args, "stream", args_where);
  if (auto pg = args.find("Process Group Name"); pg != args.end() && !pg->is_null()) {
    if (pg->is_number_integer()) {
      e.pg_name = std::to_string(pg->get<std::int64_t>());
    } else {
      e.pg_name = string_field(args, "Process Group Name", args_where);
    }
  }
  if (e.kind == Kind::kCpuOp && !cpu_pid_) {
    cpu_pid_ = integer_field(raw, "pid", where);
    cpu_pid_event_ = index;
  }
  events_.push_back(std::move(e));
}

void Linker::index_device() {
  for (std::size_t i = 0; i < events_.size(); ++i) {
    DeviceEvent& e = events_[i];
    if (e.kind == Kind::kCpuOp) {
      thread_ops_[e.tid].push_back(i);
      if (e.external_id) ops_by_external_id_[{e.tid, *e.external_id}].push_back(i);
      if (e.rf_id) {
        auto [it, fresh] = op_by_rf_id_.emplace(*e.rf_id, i);
        if (!fresh)
          event_fail(e, fmt::format("Record function id {} is also on traceEvents[{}]; expected each CPU op to have "
                                    "its own",
                                    *e.rf_id, events_[it->second].index));
      }
    } else if (e.kind == Kind::kLaunch) {
      if (!e.correlation)
        event_fail(e, "a kernel launch without args.correlation; expected the id that ties it to its GPU op");
      auto [it, fresh] = launch_by_correlation_.emplace(*e.correlation, i);
      if (!fresh)
        event_fail(e, fmt::format("correlation {} is also on traceEvents[{}]; expected each kernel launch to have its "
                                  "own correlation id",
                                  *e.correlation, events_[it->second].index));
    }
  }
  for (const auto& [tid, ops] : thread_ops_) {
    compute_exclusive(ops);
    compute_nesting(ops);
  }
}

// Exclusive duration = duration less the union of the later ops (by ts, then duration) of the
// same thread that lie wholly inside it, subtracted interval by interval as the reference does.
void Linker::compute_exclusive(const std::vector<std::size_t>& ops) {
  std::vector<std::size_t> sorted = ops;
  std::stable_sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) {
    if (events_[a].ts.value != events_[b].ts.value) return events_[a].ts.value < events_[b].ts.value;
    return events_[a].dur.value < events_[b].dur.value;
  });
  std::vector<std::pair<Micros, Micros>> inside;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    DeviceEvent& op = events_[sorted[i]];
    const double op_end = op.end().value;
    inside.clear();
    for (std::size_t j = i + 1; j < sorted.size(); ++j) {
      const DeviceEvent& child = events_[sorted[j]];
      if (child.ts.value >= op.ts.value && child.end().value <= op_end) inside.emplace_back(child.ts, child.end());
      if (op_end < child.ts.value) break;
    }
    std::stable_sort(inside.begin(), inside.end(),
                     [](const auto& a, const auto& b) { return a.first.value < b.first.value; });
    Micros exclusive = op.dur;
    for (std::size_t k = 0; k < inside.size();) {
      Micros start = inside[k].first, end = inside[k].second;
      for (++k; k < inside.size() && inside[k].first.value <= end.value; ++k) {
        if (inside[k].second.value > end.value) end = inside[k].second;
      }
      exclusive = exclusive - (end - start);
    }
    // Durations are checked to be >= 0, so a negative result is rounding in fractional µs (the
    // reference stops with an error there).
    if (exclusive.value < 0) exclusive.value = 0;
    op.exclusive = exclusive;
  }
}

// The innermost enclosing op of each CPU op: a sweep, outer ops first at equal start.
void Linker::compute_nesting(std::vector<std::size_t> ops) {
  std::stable_sort(ops.begin(), ops.end(), [&](std::size_t a, std::size_t b) {
    if (events_[a].ts.value != events_[b].ts.value) return events_[a].ts.value < events_[b].ts.value;
    return events_[a].dur.value > events_[b].dur.value;
  });
  std::vector<std::size_t> open;
  for (std::size_t op : ops) {
    while (!open.empty() && events_[open.back()].end().value < events_[op].end().value) open.pop_back();
    events_[op].enclosing = open.empty() ? kNone : open.back();
    open.push_back(op);
  }
  thread_nesting_[events_[ops.front()].tid] = std::move(ops);
}

}  // namespace chakrasim::tools::trace_linker
