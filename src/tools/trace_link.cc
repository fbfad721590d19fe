#include "tools/trace_link.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/read_file.h"

namespace chakrasim::tools {
namespace {

// Ordered, so every host node keeps its keys in the order the host trace wrote them and the
// keys added come after them, as Python's dict does in the reference tool.
using Json = nlohmann::ordered_json;
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr double kInterThreadGapMicros = 1000;  // the reference's idle-gap threshold
constexpr std::string_view kProcessAnnotation = "[pytorch|profiler|execution_trace|process]";
constexpr std::string_view kThreadAnnotations[] = {"[pytorch|profiler|execution_trace|thread]",
                                                   "[pytorch|profiler|execution_graph|thread]"};

// A time or duration in µs as the trace wrote it: integers stay integers in the ET+ (as they do
// in Python), and anything fractional makes a result fractional. Doubles hold every integer µs
// time exactly (2^53 µs is 285 years).
struct Micros {
  double value = 0;
  bool fractional = false;
};
Micros operator+(Micros a, Micros b) { return {a.value + b.value, a.fractional || b.fractional}; }
Micros operator-(Micros a, Micros b) { return {a.value - b.value, a.fractional || b.fractional}; }
Json to_json(Micros m) { return m.fractional ? Json(m.value) : Json(static_cast<std::int64_t>(m.value)); }

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }
bool is_thread_annotation(std::string_view name) {
  return name == kThreadAnnotations[0] || name == kThreadAnnotations[1];
}

enum class Kind { kCpuOp, kLaunch, kGpuOp, kSync };

// One Kineto event the linker uses (CPU op, kernel launch, GPU op, synchronisation call).
struct DeviceEvent {
  std::size_t index = 0;  // position in traceEvents, for errors
  Kind kind = Kind::kCpuOp;
  std::string cat, name, tid;  // tid: the JSON text of "tid" (Kineto writes numbers or strings)
  Json ph;
  Micros ts, dur;
  std::optional<std::int64_t> external_id, rf_id, correlation, stream;
  std::optional<std::string> pg_name;
  // CPU ops: derived below.
  Micros exclusive;
  std::size_t enclosing = kNone;         // innermost CPU op of the same thread around it
  std::size_t host = kNone;              // the host node it is linked to
  // GPU ops: the launch event and the host node it hangs under.
  std::size_t launch = kNone;
  std::size_t parent_host = kNone;
  Micros end() const { return ts + dur; }
};

struct HostNode {
  std::size_t json_index = 0;  // position in "nodes"
  std::int64_t id = 0;
  std::string name;
  std::optional<std::int64_t> rf_id, ctrl_dep;
  std::size_t device_op = kNone;
  std::optional<Micros> ts, inclusive, exclusive;  // set when linked (or an annotation with a span)
  std::size_t inter_thread_dep = kNone;            // host node
  std::vector<std::size_t> gpu_ops;                // device events, by ts
  std::set<std::size_t> sync_deps;                 // device events (GPU ops)
};

struct Span {
  Micros start, end;
  bool seen = false;
  void add(Micros ts, Micros end_ts) {
    if (!seen || ts.value < start.value) start = ts;
    if (!seen || end_ts.value > end.value) end = end_ts;
    seen = true;
  }
};

Json parse_json(const std::string& text, const std::string& source, const char* expected) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    fail("{}: not valid JSON ({}); expected {}", source, e.what(), expected);
  }
  if (!root.is_object()) fail("{}: the top level is {}; expected a JSON object: {}", source, root.type_name(), expected);
  return root;
}

// An integer field, or nullopt when absent or null. Kineto has written some ids as strings of
// digits; those are read as the reference's int() reads them.
std::optional<std::int64_t> integer_field(const Json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (it->is_number_integer() && !(it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX)) return it->get<std::int64_t>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    std::size_t used = 0;
    try {
      const long long value = std::stoll(s, &used);
      if (used == s.size()) return value;
    } catch (const std::exception&) {
    }
  }
  fail("{}: \"{}\" is {}; expected an integer", where, key, it->dump());
}

std::string string_field(const Json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) fail("{}: \"{}\" is {}; expected a string", where, key, it->dump());
  return it->get<std::string>();
}

class Linker {
 public:
  Linker(const std::string& host_source, const std::string& device_source, LinkReport& report)
      : host_source_(host_source), device_source_(device_source), report_(report) {}

  void load_device(const std::string& text, const LinkOptions& options);
  void load_host(const std::string& text);
  void link();
  std::string write();

 private:
  [[noreturn]] void event_fail(const DeviceEvent& e, const std::string& what) const {
    fail("{}: traceEvents[{}] (\"{}\"): {}", device_source_, e.index, e.name, what);
  }
  void read_event(const Json& raw, std::size_t index);
  void index_device();
  void compute_exclusive(const std::vector<std::size_t>& ops);
  void compute_nesting(std::vector<std::size_t> ops);
  void match_host_ops();
  void annotate_process_and_threads();
  std::size_t launching_host_node(const DeviceEvent& gpu) const;
  void attach_gpu_ops();
  void group_inter_thread();
  void add_sync_deps();

  std::string host_source_, device_source_;
  LinkReport& report_;
  std::vector<DeviceEvent> events_;  // by ts, stable
  Span process_span_;
  std::map<std::string, Span> thread_spans_;
  std::map<std::string, std::vector<std::size_t>> thread_ops_;      // CPU ops by thread, by ts
  std::map<std::string, std::vector<std::size_t>> thread_nesting_;  // the same, outer before inner
  std::map<std::pair<std::string, std::int64_t>, std::vector<std::size_t>> ops_by_external_id_;
  std::unordered_map<std::int64_t, std::size_t> launch_by_correlation_, op_by_rf_id_;
  std::unordered_map<std::int64_t, std::int64_t> sync_stream_by_correlation_;  // "cuda_sync" records
  std::optional<std::int64_t> cpu_pid_;
  std::size_t cpu_pid_event_ = 0;

  Json host_root_;
  std::vector<HostNode> host_;  // by id
  std::map<std::string, std::size_t> thread_anchor_;  // Kineto tid -> host thread annotation node
};

void Linker::load_device(const std::string& text, const LinkOptions& options) {
  Json root = parse_json(text, device_source_, "a Kineto trace with \"traceEvents\"");
  auto events = root.find("traceEvents");
  if (events == root.end()) fail("{}: no \"traceEvents\"; expected a Kineto (Chrome-trace) JSON with a \"traceEvents\" list", device_source_);
  if (!events->is_array()) fail("{}: \"traceEvents\" is {}; expected a list of events", device_source_, events->type_name());
  if (auto info = root.find("distributedInfo"); options.rank && info != root.end() && info->is_object()) {
    const auto rank = integer_field(*info, "rank", device_source_ + ": distributedInfo");
    if (rank && *rank != *options.rank) {
      fail("{}: distributedInfo.rank is {} but --rank is {}; expected the device trace of rank {}", device_source_, *rank, *options.rank, *options.rank);
    }
  }
  for (std::size_t i = 0; i < events->size(); ++i) read_event((*events)[i], i);
  std::stable_sort(events_.begin(), events_.end(), [](const DeviceEvent& a, const DeviceEvent& b) { return a.ts.value < b.ts.value; });
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
  auto time_of = [&](const char* key, Micros& out) {
    auto it = raw.find(key);
    if (it == raw.end() || !it->is_number()) return false;
    out = {it->get<double>(), it->is_number_float()};
    return true;
  };
  const bool cpu_side = e.cat == "cpu_op" || e.cat == "user_annotation" || e.cat == "cuda_runtime" || e.cat == "cuda_driver";
  if (auto tid = raw.find("tid"); tid != raw.end()) e.tid = tid->dump();
  if (complete && time_of("ts", e.ts) && time_of("dur", e.dur)) {  // spans use every complete event
    process_span_.add(e.ts, e.end());
    if (cpu_side) thread_spans_[e.tid].add(e.ts, e.end());
  }

  static const std::set<std::string_view> kLaunches = {
      "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpy",
      "cudaMemcpyAsync", "cudaMemcpyFromSymbol", "cudaMemcpyToSymbol", "cudaLaunchCooperativeKernel",
      "hipLaunchKernel", "hipExtLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel",
      "hipMemcpyWithStream", "hipMemcpyAsync"};
  static const std::set<std::string_view> kSyncs = {
      "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cuCtxSynchronize",
      "cuStreamSynchronize", "cuEventSynchronize", "hipDeviceSynchronize", "hipStreamSynchronize",
      "hipEventSynchronize"};
  const Json no_args = Json::object();
  auto args_it = raw.find("args");
  if (args_it != raw.end() && !args_it->is_object()) fail("{}: \"args\" is {}; expected an object", where, args_it->type_name());
  const Json& args = args_it == raw.end() ? no_args : *args_it;

  if (e.cat == "ac2g") {  // CPU->GPU flow arrows: the correlation is on both ends already
    if (e.ph != "s" && e.ph != "f") fail("{}: ac2g flow event with ph {}; expected \"s\" or \"f\"", where, e.ph.dump());
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
  if (!time_of("ts", e.ts)) event_fail(e, fmt::format("\"ts\" is {}; expected a time in µs", raw.contains("ts") ? raw["ts"].dump() : "missing"));
  if (!time_of("dur", e.dur)) event_fail(e, fmt::format("\"dur\" is {}; expected a duration in µs", raw.contains("dur") ? raw["dur"].dump() : "missing"));
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
        if (!fresh) event_fail(e, fmt::format("Record function id {} is also on traceEvents[{}]; expected each CPU op to have its own", *e.rf_id, events_[it->second].index));
      }
    } else if (e.kind == Kind::kLaunch) {
      if (!e.correlation) event_fail(e, "a kernel launch without args.correlation; expected the id that ties it to its GPU op");
      auto [it, fresh] = launch_by_correlation_.emplace(*e.correlation, i);
      if (!fresh) event_fail(e, fmt::format("correlation {} is also on traceEvents[{}]; expected each kernel launch to have its own correlation id", *e.correlation, events_[it->second].index));
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
    std::stable_sort(inside.begin(), inside.end(), [](const auto& a, const auto& b) { return a.first.value < b.first.value; });
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

void Linker::load_host(const std::string& text) {
  host_root_ = parse_json(text, host_source_, "a PyTorch host execution trace with \"nodes\"");
  auto nodes = host_root_.find("nodes");
  if (nodes == host_root_.end()) fail("{}: no \"nodes\"; expected a PyTorch host execution trace (JSON with a \"nodes\" list)", host_source_);
  if (!nodes->is_array()) fail("{}: \"nodes\" is {}; expected a list of nodes", host_source_, nodes->type_name());
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const Json& raw = (*nodes)[i];
    std::string where = fmt::format("{}: nodes[{}]", host_source_, i);
    if (!raw.is_object()) fail("{} is {}; expected a node object", where, raw.type_name());
    HostNode node;
    node.json_index = i;
    const auto id = integer_field(raw, "id", where);
    if (!id) fail("{}: no \"id\"; expected an integer node id", where);
    node.id = *id;
    where += fmt::format(" (id {})", node.id);
    node.name = string_field(raw, "name", where);
    node.ctrl_dep = integer_field(raw, "ctrl_deps", where);
    if (auto attrs = raw.find("attrs"); attrs != raw.end()) {
      if (!attrs->is_array()) fail("{}: \"attrs\" is {}; expected a list of {{name, type, value}}", where, attrs->type_name());
      for (const Json& attr : *attrs) {
        if (attr.is_object() && attr.value("name", Json()) == "rf_id") node.rf_id = integer_field(attr, "value", where + ": attr rf_id");
      }
    }
    host_.push_back(std::move(node));
  }
  std::stable_sort(host_.begin(), host_.end(), [](const HostNode& a, const HostNode& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < host_.size(); ++i) {
    if (host_[i].id == host_[i - 1].id) {
      fail("{}: nodes[{}] and nodes[{}] both have id {}; expected unique node ids", host_source_,
           host_[i - 1].json_index, host_[i].json_index, host_[i].id);
    }
  }
  const auto host_pid = integer_field(host_root_, "pid", host_source_);
  if (host_pid && cpu_pid_ && *cpu_pid_ != *host_pid) {
    fail("{}: CPU ops ran in process {} (traceEvents[{}]) but the host trace {} is of process {}; expected the two traces of one rank",
         device_source_, *cpu_pid_, cpu_pid_event_, host_source_, *host_pid);
  }
  report_.host_nodes = host_.size();
}

void Linker::link() {
  match_host_ops();
  annotate_process_and_threads();
  attach_gpu_ops();
  group_inter_thread();
  add_sync_deps();
}

// Host op <-> Kineto CPU op by rf_id. The annotation nodes all carry rf_id 0 and are matched by
// their spans instead.
void Linker::match_host_ops() {
  std::size_t unmatched = 0;
  for (std::size_t h = 0; h < host_.size(); ++h) {
    HostNode& node = host_[h];
    if (node.name == kProcessAnnotation || is_thread_annotation(node.name) || !node.rf_id) continue;
    auto it = op_by_rf_id_.find(*node.rf_id);
    if (it == op_by_rf_id_.end()) {
      ++unmatched;
      continue;
    }
    DeviceEvent& op = events_[it->second];
    if (op.host != kNone) {
      fail("{}: nodes[{}] (id {}) and nodes[{}] (id {}) have the same rf_id {}; expected one host op per record function",
           host_source_, host_[op.host].json_index, host_[op.host].id, node.json_index, node.id, *node.rf_id);
    }
    op.host = h;
    node.device_op = it->second;
    node.ts = op.ts;
    node.inclusive = op.dur;
    node.exclusive = op.exclusive;
    ++report_.linked_ops;
  }
  if (unmatched) report_.warnings.push_back(fmt::format("{} host ops have an rf_id that no CPU op of the device trace has; they keep no timing", unmatched));
}

// The process node gets the span of every complete event; each thread node the span of the
// Kineto thread that its first linked descendant ran on.
void Linker::annotate_process_and_threads() {
  std::unordered_map<std::int64_t, std::size_t> by_id;
  for (std::size_t h = 0; h < host_.size(); ++h) by_id.emplace(host_[h].id, h);
  std::vector<std::vector<std::size_t>> children(host_.size());  // by id, as host_ is
  for (std::size_t h = 0; h < host_.size(); ++h) {
    if (!host_[h].ctrl_dep) continue;
    auto parent = by_id.find(*host_[h].ctrl_dep);
    if (parent != by_id.end() && parent->second != h) children[parent->second].push_back(h);
  }
  auto set_span = [](HostNode& node, const Span& span) {
    node.ts = span.start;
    node.inclusive = span.end - span.start;
    node.exclusive = Micros{};
  };
  for (std::size_t h = 0; h < host_.size(); ++h) {
    if (host_[h].name == kProcessAnnotation && process_span_.seen) set_span(host_[h], process_span_);
    if (!is_thread_annotation(host_[h].name)) continue;
    std::vector<std::size_t> stack(children[h].rbegin(), children[h].rend());
    std::vector<bool> seen(host_.size(), false);
    while (!stack.empty()) {
      const std::size_t n = stack.back();
      stack.pop_back();
      if (seen[n]) continue;
      seen[n] = true;
      if (host_[n].device_op != kNone) {
        const std::string& tid = events_[host_[n].device_op].tid;
        if (auto span = thread_spans_.find(tid); span != thread_spans_.end()) set_span(host_[h], span->second);
        thread_anchor_.emplace(tid, h);
        break;
      }
      stack.insert(stack.end(), children[n].rbegin(), children[n].rend());
    }
  }
}

// The host node a GPU op hangs under: the CPU op of the launching thread with the launch's
// External id, else the innermost op around the launch; then the nearest enclosing op that is
// in the host trace, else the thread's annotation node. NCCL kernels skip "nccl:coalesced".
std::size_t Linker::launching_host_node(const DeviceEvent& gpu) const {
  const DeviceEvent& launch = events_[gpu.launch];
  std::string lower = gpu.name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool nccl = contains(lower, "nccl");
  auto usable = [&](std::size_t op) { return !(nccl && events_[op].name == "nccl:coalesced"); };
  std::size_t op = kNone;
  const std::optional<std::int64_t> external_id = gpu.external_id ? gpu.external_id : launch.external_id;
  if (auto it = ops_by_external_id_.find({launch.tid, external_id.value_or(-1)}); external_id && it != ops_by_external_id_.end()) {
    for (auto candidate = it->second.rbegin(); candidate != it->second.rend() && op == kNone; ++candidate) {
      if (events_[*candidate].ts.value <= launch.ts.value && usable(*candidate)) op = *candidate;
    }
  }
  if (op == kNone) {
    if (auto nesting = thread_nesting_.find(launch.tid); nesting != thread_nesting_.end()) {
      const std::vector<std::size_t>& ops = nesting->second;
      // Ops that start at the launch's own µs may hold it (the reference skips them).
      auto after = std::upper_bound(ops.begin(), ops.end(), launch.ts.value, [&](double t, std::size_t o) { return t < events_[o].ts.value; });
      op = after == ops.begin() ? kNone : *(after - 1);
      while (op != kNone && (events_[op].end().value < launch.ts.value || !usable(op))) op = events_[op].enclosing;
    }
  }
  while (op != kNone && events_[op].host == kNone) op = events_[op].enclosing;
  if (op != kNone) return events_[op].host;
  auto anchor = thread_anchor_.find(launch.tid);
  return anchor == thread_anchor_.end() ? kNone : anchor->second;
}

void Linker::attach_gpu_ops() {
  std::size_t no_launch = 0, no_parent = 0;
  for (std::size_t i = 0; i < events_.size(); ++i) {
    DeviceEvent& gpu = events_[i];
    if (gpu.kind != Kind::kGpuOp) continue;
    auto launch = gpu.correlation ? launch_by_correlation_.find(*gpu.correlation) : launch_by_correlation_.end();
    if (launch == launch_by_correlation_.end()) {
      ++no_launch;
      continue;
    }
    gpu.launch = launch->second;
    gpu.parent_host = launching_host_node(gpu);
    if (gpu.parent_host == kNone) {
      ++no_parent;
      continue;
    }
    host_[gpu.parent_host].gpu_ops.push_back(i);  // events_ is by ts, so each list is too
    ++report_.gpu_ops;
  }
  if (no_launch) report_.warnings.push_back(fmt::format("{} GPU ops have no kernel launch with their correlation id; dropped", no_launch));
  if (no_parent) report_.warnings.push_back(fmt::format("{} GPU ops were launched outside every op of the host trace; dropped", no_parent));
}

// Per thread, a group starts at the first op and after every idle gap over 1000 µs; each op of
// the group waits for the latest op of another thread (in the host trace) that started before
// the group did.
void Linker::group_inter_thread() {
  std::vector<std::size_t> linked;  // by ts
  for (std::size_t i = 0; i < events_.size(); ++i) {
    if (events_[i].kind == Kind::kCpuOp && events_[i].host != kNone) linked.push_back(i);
  }
  for (const auto& [tid, ops] : thread_ops_) {
    std::size_t dep = kNone;
    double busy_until = 0;
    for (std::size_t k = 0; k < ops.size(); ++k) {
      DeviceEvent& op = events_[ops[k]];
      if (k == 0 || op.ts.value - busy_until > kInterThreadGapMicros) {
        auto before = std::lower_bound(linked.begin(), linked.end(), op.ts.value, [&](std::size_t o, double t) { return events_[o].ts.value < t; });
        dep = kNone;
        while (before != linked.begin() && dep == kNone) {
          --before;
          if (events_[*before].tid != tid) dep = *before;
        }
      }
      busy_until = k == 0 ? op.end().value : std::max(busy_until, op.end().value);
      if (op.host != kNone && dep != kNone) {
        host_[op.host].inter_thread_dep = events_[dep].host;
        ++report_.inter_thread_deps;
      }
    }
  }
}

// A synchronisation call waits for the GPU ops launched before it on the streams it names
// (args.stream, else the stream of its "cuda_sync" record, else the stream of the thread's
// previous launch; every stream for a device-wide sync). Stream order makes the last such op of
// each stream enough. The waiter is the first CPU op of the thread (in the host trace) that
// starts once the call has returned.
void Linker::add_sync_deps() {
  std::map<std::int64_t, std::vector<std::size_t>> by_stream;   // emitted GPU ops by launch ts
  std::map<std::string, std::vector<std::size_t>> by_thread;    // GPU ops by launching thread
  std::vector<std::size_t> gpu_ops;
  for (std::size_t i = 0; i < events_.size(); ++i) {
    if (events_[i].kind == Kind::kGpuOp && events_[i].launch != kNone) gpu_ops.push_back(i);
  }
  auto launch_ts = [&](std::size_t g) { return events_[events_[g].launch].ts.value; };
  std::stable_sort(gpu_ops.begin(), gpu_ops.end(), [&](std::size_t a, std::size_t b) { return launch_ts(a) < launch_ts(b); });
  for (std::size_t g : gpu_ops) {
    by_thread[events_[events_[g].launch].tid].push_back(g);
    if (events_[g].stream && events_[g].parent_host != kNone) by_stream[*events_[g].stream].push_back(g);
  }
  auto last_before = [&](const std::vector<std::size_t>& list, double t) {
    auto it = std::lower_bound(list.begin(), list.end(), t, [&](std::size_t g, double x) { return launch_ts(g) < x; });
    return it == list.begin() ? kNone : *(it - 1);
  };
  for (const DeviceEvent& sync : events_) {
    if (sync.kind != Kind::kSync) continue;
    std::set<std::int64_t> streams;
    if (contains(sync.name, "Device") || contains(sync.name, "Ctx")) {
      for (const auto& entry : by_stream) streams.insert(entry.first);
    } else if (sync.stream) {
      streams.insert(*sync.stream);
    } else if (auto rec = sync.correlation ? sync_stream_by_correlation_.find(*sync.correlation) : sync_stream_by_correlation_.end();
               rec != sync_stream_by_correlation_.end()) {
      streams.insert(rec->second);
    } else if (auto mine = by_thread.find(sync.tid); mine != by_thread.end()) {
      const std::size_t previous = last_before(mine->second, sync.ts.value);
      if (previous != kNone && events_[previous].stream) streams.insert(*events_[previous].stream);
    }
    auto thread = thread_ops_.find(sync.tid);
    if (streams.empty() || thread == thread_ops_.end()) continue;
    const double returned = sync.end().value;
    auto waiter = std::lower_bound(thread->second.begin(), thread->second.end(), returned, [&](std::size_t o, double t) { return events_[o].ts.value < t; });
    while (waiter != thread->second.end() && events_[*waiter].host == kNone) ++waiter;
    if (waiter == thread->second.end()) continue;
    for (std::int64_t stream : streams) {
      auto list = by_stream.find(stream);
      const std::size_t last = list == by_stream.end() ? kNone : last_before(list->second, sync.ts.value);
      if (last != kNone) host_[events_[*waiter].host].sync_deps.insert(last);
    }
  }
}

// New ids: host nodes in id order, each followed by its GPU ops; then the ET+ document.
std::string Linker::write() {
  std::vector<std::int64_t> new_id(host_.size());
  std::unordered_map<std::size_t, std::int64_t> gpu_new_id;
  std::unordered_map<std::int64_t, std::int64_t> by_old_id;
  std::int64_t next = 0;
  for (std::size_t h = 0; h < host_.size(); ++h) {
    new_id[h] = next++;
    by_old_id.emplace(host_[h].id, new_id[h]);
    for (std::size_t g : host_[h].gpu_ops) gpu_new_id.emplace(g, next++);
  }
  Json& in_nodes = host_root_["nodes"];
  Json out_nodes = Json::array();
  for (std::size_t h = 0; h < host_.size(); ++h) {
    const HostNode& host = host_[h];
    Json node = std::move(in_nodes[host.json_index]);
    node["id"] = new_id[h];
    if (host.ts) {
      node["inclusive_dur"] = to_json(*host.inclusive);
      node["exclusive_dur"] = to_json(*host.exclusive);
      node["ts"] = to_json(*host.ts);
      node["inter_thread_dep"] = host.inter_thread_dep == kNone ? Json() : Json(new_id[host.inter_thread_dep]);
    }
    std::vector<Json> gpu_nodes;
    for (std::size_t g : host.gpu_ops) {
      const DeviceEvent& gpu = events_[g];
      Json copy = node;
      copy["id"] = gpu_new_id.at(g);
      copy["ctrl_deps"] = new_id[h];
      copy["cat"] = gpu.cat;
      copy["name"] = gpu.name;
      copy["ph"] = gpu.ph;
      copy["inclusive_dur"] = to_json(gpu.dur);
      copy["exclusive_dur"] = to_json(gpu.dur);
      copy["ts"] = to_json(gpu.ts);
      copy["stream"] = gpu.stream ? Json(*gpu.stream) : Json();
      if (contains(gpu.name, "ncclDevKernel") && gpu.pg_name) copy["pg_name"] = *gpu.pg_name;
      gpu_nodes.push_back(std::move(copy));
    }
    if (host.ctrl_dep) {
      auto parent = by_old_id.find(*host.ctrl_dep);
      // A parent id that is no node's keeps pointing at no node: a fresh id, as the reference does.
      if (parent == by_old_id.end()) parent = by_old_id.emplace(*host.ctrl_dep, next++).first;
      node["ctrl_deps"] = parent->second;
    }
    if (!host.sync_deps.empty()) {
      std::vector<std::int64_t> ids;
      for (std::size_t g : host.sync_deps) ids.push_back(gpu_new_id.at(g));
      std::sort(ids.begin(), ids.end());
      report_.sync_deps += ids.size();
      node["sync_dep"] = ids;
    }
    out_nodes.push_back(std::move(node));
    for (Json& gpu_node : gpu_nodes) out_nodes.push_back(std::move(gpu_node));
  }
  in_nodes = std::move(out_nodes);
  return host_root_.dump(4, ' ', true);
}

}  // namespace

std::string link_traces(const std::string& host_json, const std::string& host_source,
                        const std::string& device_json, const std::string& device_source,
                        const LinkOptions& options, LinkReport* report) {
  LinkReport local;
  Linker linker(host_source, device_source, report ? *report : local);
  linker.load_device(device_json, options);
  linker.load_host(host_json);
  linker.link();
  return linker.write();
}

LinkReport link_trace_files(const std::string& host_path, const std::string& device_path,
                            const std::string& out_path, const LinkOptions& options) {
  const std::string host = read_file(host_path, "host execution trace", "a PyTorch host execution trace (JSON)");
  const std::string device = read_file(device_path, "device trace", "a Kineto device trace (JSON)");
  LinkReport report;
  const std::string et_plus = link_traces(host, host_path, device, device_path, options, &report);
  std::ofstream out(out_path, std::ios::binary);
  if (!out) fail("{}: cannot open the ET+ output for writing", out_path);
  out << et_plus;
  if (!out.flush()) fail("{}: error while writing the ET+ output", out_path);
  return report;
}

}  // namespace chakrasim::tools
