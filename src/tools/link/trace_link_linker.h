// The trace linker's internals (trace_link.h is its interface): the events and host nodes it
// works on and the Linker that holds them. trace_link_device.cc reads the Kineto trace into it;
// trace_link.cc reads the host trace, links the two and writes the ET+.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/link/trace_link.h"

namespace chakrasim::tools::trace_linker {

// Ordered, so every host node keeps its keys in the order the host trace wrote them and the
// keys added come after them, as Python's dict does in the reference tool.
using Json = nlohmann::ordered_json;
inline constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
inline constexpr double kInterThreadGapMicros = 1000;  // the reference's idle-gap threshold
inline constexpr std::string_view kProcessAnnotation = "[pytorch|profiler|execution_trace|process]";
inline constexpr std::string_view kThreadAnnotations[] = {"[pytorch|profiler|execution_trace|thread]", "[pytorch|"
                                                                                                       "profiler|"
                                                                                                       "execution_"
                                                                                                       "graph|thread]"};

// A time or duration in µs as the trace wrote it: integers stay integers in the ET+ (as they do
// in Python), and anything fractional makes a result fractional. Doubles hold every integer µs
// time exactly (2^53 µs is 285 years).
struct Micros {
  double value = 0;
  bool fractional = false;
};
inline constexpr double kMaxExactMicros = 9007199254740992.0;  // 2^53
inline Micros operator+(Micros a, Micros b) { return {a.value + b.value, a.fractional || b.fractional}; }
inline Micros operator-(Micros a, Micros b) { return {a.value - b.value, a.fractional || b.fractional}; }
inline Json to_json(Micros m) { return m.fractional ? Json(m.value) : Json(static_cast<std::int64_t>(m.value)); }

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }
inline bool is_thread_annotation(std::string_view name) {
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
  std::size_t enclosing = kNone;  // innermost CPU op of the same thread around it
  std::size_t host = kNone;       // the host node it is linked to
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

// The text parsed as a JSON object; `expected` says what the file should be, in errors.
Json parse_json(const std::string& text, const std::string& source, const char* expected);

// An integer field, or nullopt when absent or null. Kineto has written some ids as strings of
// digits; those are read as the reference's int() reads them.
std::optional<std::int64_t> integer_field(const Json& object, const char* key, const std::string& where);

// A string field, or "" when absent or null.
std::string string_field(const Json& object, const char* key, const std::string& where);

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
  std::vector<HostNode> host_;                        // by id
  std::map<std::string, std::size_t> thread_anchor_;  // Kineto tid -> host thread annotation node
};

}  // namespace chakrasim::tools::trace_linker
