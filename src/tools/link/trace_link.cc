#include "tools/link/trace_link.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "core/json_input.h"
#include "core/read_file.h"
#include "tools/link/trace_link_linker.h"

namespace chakrasim::tools {
namespace trace_linker {

Json parse_json(const std::string& text, const std::string& source, const char* expected) {
  check_json_depth(text, source);
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    fail("{}: invalid JSON (expected {}): {}", source, expected, json_parse_error_text(e.what()));
  }
  if (!root.is_object())
    fail("{}: the top level is {}; expected a JSON object: {}", source, root.type_name(), expected);
  return root;
}

std::optional<std::int64_t> integer_field(const Json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (it->is_number_integer() && !(it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX))
    return it->get<std::int64_t>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    std::size_t used = 0;
    try {
      const long long value = std::stoll(s, &used);
      if (used == s.size()) return value;
    } catch (const std::exception&) {}
  }
  fail("{}: \"{}\" is {}; expected an integer", where, key, json_excerpt(*it));
}

std::string string_field(const Json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) fail("{}: \"{}\" is {}; expected a string", where, key, json_excerpt(*it));
  return it->get<std::string>();
}

void Linker::load_host(const std::string& text) {
  host_root_ = parse_json(text, host_source_, "a PyTorch host execution trace with \"nodes\"");
  auto nodes = host_root_.find("nodes");
  if (nodes == host_root_.end())
    fail("{}: no \"nodes\"; expected a PyTorch host execution trace (JSON with a \"nodes\" list)", host_source_);
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
      if (!attrs->is_array())
        fail("{}: \"attrs\" is {}; expected a list of {{name, type, value}}", where, attrs->type_name());
      for (const Json& attr : *attrs) {
        if (attr.is_object() && attr.value("name", Json()) == "rf_id")
          node.rf_id = integer_field(attr, "value", where + ": attr rf_id");
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
    fail("{}: CPU ops ran in process {} (traceEvents[{}]) but the host trace {} is of process {}; expected the two "
         "traces of one rank",
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
      fail("{}: nodes[{}] (id {}) and nodes[{}] (id {}) have the same rf_id {}; expected one host op per record "
           "function",
           host_source_, host_[op.host].json_index, host_[op.host].id, node.json_index, node.id, *node.rf_id);
    }
    op.host = h;
    node.device_op = it->second;
    node.ts = op.ts;
    node.inclusive = op.dur;
    node.exclusive = op.exclusive;
    ++report_.linked_ops;
  }
  if (unmatched)
    report_.warnings.push_back(fmt::format("{} host ops have an rf_id that no CPU op of the device trace has; they "
                                           "keep no timing",
                                           unmatched));
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
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool nccl = contains(lower, "nccl");
  auto usable = [&](std::size_t op) { return !(nccl && events_[op].name == "nccl:coalesced"); };
  std::size_t op = kNone;
  const std::optional<std::int64_t> external_id = gpu.external_id ? gpu.external_id : launch.external_id;
  if (auto it = ops_by_external_id_.find({launch.tid, external_id.value_or(-1)});
      external_id && it != ops_by_external_id_.end()) {
    for (auto candidate = it->second.rbegin(); candidate != it->second.rend() && op == kNone; ++candidate) {
      if (events_[*candidate].ts.value <= launch.ts.value && usable(*candidate)) op = *candidate;
    }
  }
  if (op == kNone) {
    if (auto nesting = thread_nesting_.find(launch.tid); nesting != thread_nesting_.end()) {
      const std::vector<std::size_t>& ops = nesting->second;
      // Ops that start at the launch's own µs may hold it (the reference skips them).
      auto after = std::upper_bound(ops.begin(), ops.end(), launch.ts.value,
                                    [&](double t, std::size_t o) { return t < events_[o].ts.value; });
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
  if (no_launch)
    report_.warnings.push_back(
        fmt::format("{} GPU ops have no kernel launch with their correlation id; dropped", no_launch));
  if (no_parent)
    report_.warnings.push_back(
        fmt::format("{} GPU ops were launched outside every op of the host trace; dropped", no_parent));
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
        auto before = std::lower_bound(linked.begin(), linked.end(), op.ts.value,
                                       [&](std::size_t o, double t) { return events_[o].ts.value < t; });
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
  std::map<std::int64_t, std::vector<std::size_t>> by_stream;  // emitted GPU ops by launch ts
  std::map<std::string, std::vector<std::size_t>> by_thread;   // GPU ops by launching thread
  std::vector<std::size_t> gpu_ops;
  for (std::size_t i = 0; i < events_.size(); ++i) {
    if (events_[i].kind == Kind::kGpuOp && events_[i].launch != kNone) gpu_ops.push_back(i);
  }
  auto launch_ts = [&](std::size_t g) { return events_[events_[g].launch].ts.value; };
  std::stable_sort(gpu_ops.begin(), gpu_ops.end(),
                   [&](std::size_t a, std::size_t b) { return launch_ts(a) < launch_ts(b); });
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
    } else if (auto rec = sync.correlation ? sync_stream_by_correlation_.find(*sync.correlation)
                                           : sync_stream_by_correlation_.end();
               rec != sync_stream_by_correlation_.end()) {
      streams.insert(rec->second);
    } else if (auto mine = by_thread.find(sync.tid); mine != by_thread.end()) {
      const std::size_t previous = last_before(mine->second, sync.ts.value);
      if (previous != kNone && events_[previous].stream) streams.insert(*events_[previous].stream);
    }
    auto thread = thread_ops_.find(sync.tid);
    if (streams.empty() || thread == thread_ops_.end()) continue;
    const double returned = sync.end().value;
    auto waiter = std::lower_bound(thread->second.begin(), thread->second.end(), returned,
                                   [&](std::size_t o, double t) { return events_[o].ts.value < t; });
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

}  // namespace trace_linker

std::string link_traces(const std::string& host_json, const std::string& host_source, const std::string& device_json,
                        const std::string& device_source, const LinkOptions& options, LinkReport* report) {
  LinkReport local;
  trace_linker::Linker linker(host_source, device_source, report ? *report : local);
  linker.load_device(device_json, options);
  linker.load_host(host_json);
  linker.link();
  return linker.write();
}

LinkReport link_trace_files(const std::string& host_path, const std::string& device_path, const std::string& out_path,
                            const LinkOptions& options) {
  const std::string host =
      read_file(host_path, "host execution trace", "a PyTorch host execution trace (JSON)", kTraceFileMaxBytes);
  const std::string device = read_file(device_path, "device trace", "a Kineto device trace (JSON)", kTraceFileMaxBytes);
  LinkReport report;
  const std::string et_plus = link_traces(host, host_path, device, device_path, options, &report);
  std::ofstream out(out_path, std::ios::binary);
  if (!out) fail("{}: cannot open the ET+ output for writing", out_path);
  out << et_plus;
  if (!out.flush()) fail("{}: error while writing the ET+ output", out_path);
  return report;
}

}  // namespace chakrasim::tools
