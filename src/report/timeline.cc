#include "report/timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "chakra/et_file.h"
#include "compute/compute_model.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/resources.h"
#include "workload/executor.h"

namespace chakrasim::report {
namespace {

// Tracks, in the order a viewer lists them; tid = kind * kLanes + lane.
enum class Track : std::uint32_t { kGpu = 1, kCpu, kCollective, kChunk, kP2p, kMemory };
constexpr std::uint32_t kLanes = 1000;

const char* track_name(Track t) {
  switch (t) {
    case Track::kGpu: return "GPU compute";
    case Track::kCpu: return "CPU compute";
    case Track::kCollective: return "collectives";
    case Track::kChunk: return "collective chunks";
    case Track::kP2p: return "send/recv";
    case Track::kMemory: return "memory";
  }
  return "other";
}

// A file written through one buffer, whole or not at all (core/atomic_file.h).
class Output {
 public:
  Output(const std::string& path, std::string_view what) : file_(path, what) {}
  void add(std::string_view text) {
    buffer_ += text;
    if (buffer_.size() > (1u << 20)) flush();
  }
  void close() {
    flush();
    file_.commit();
  }

 private:
  void flush() {
    file_.write(buffer_);
    buffer_.clear();
  }
  AtomicFile file_;
  std::string buffer_;
};

// `text` as a JSON string literal.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out += c;
    }
  }
  return out + "\"";
}

// Nanoseconds as microseconds with three decimals, exactly.
std::string micros(Tick ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

// Gives each slice of a track the first lane free at its start, so slices never overlap on one
// thread (viewers require proper nesting there).
class Lanes {
 public:
  std::uint32_t place(Tick start, Tick end) {
    for (std::uint32_t i = 0; i < ends_.size(); ++i) {
      if (ends_[i] <= start) {
        ends_[i] = end;
        return i;
      }
    }
    ends_.push_back(end);
    return static_cast<std::uint32_t>(std::min<std::size_t>(ends_.size() - 1, kLanes - 1));
  }
  std::uint32_t used() const { return static_cast<std::uint32_t>(std::min<std::size_t>(ends_.size(), kLanes)); }

 private:
  std::vector<Tick> ends_;
};

Track track_of(const chakra::Graph& g, std::uint32_t node) {
  switch (g.type(node)) {
    case chakra::NodeType::kComp: return g.is_cpu_op(node) ? Track::kCpu : Track::kGpu;
    case chakra::NodeType::kCommColl: return Track::kCollective;
    case chakra::NodeType::kCommSend:
    case chakra::NodeType::kCommRecv: return Track::kP2p;
    case chakra::NodeType::kMemLoad:
    case chakra::NodeType::kMemStore: return Track::kMemory;
    default: return Track::kGpu;
  }
}

std::uint64_t node_bytes(const chakra::Graph& g, std::uint32_t node) {
  if (!g.has_attrs(node)) return 0;
  const chakra::OpAttrs& a = g.attrs(node);
  if (g.type(node) == chakra::NodeType::kMemLoad || g.type(node) == chakra::NodeType::kMemStore) return a.tensor_size;
  return a.comm_size;
}

std::string node_group(const chakra::Graph& g, std::uint32_t node) {
  return g.has_attrs(node) ? g.string(g.attrs(node).pg_name) : std::string();
}

// What a person reads on a node's slice: the collective and its size first, then the name; a
// send or receive with its peer.
std::string slice_name(const chakra::Graph& g, std::uint32_t node) {
  if (!g.has_attrs(node)) return g.name(node);
  const chakra::OpAttrs& a = g.attrs(node);
  switch (g.type(node)) {
    case chakra::NodeType::kCommColl: {
      const std::string group = node_group(g, node);
      return fmt::format("{} {}{} · {}", workload::collective_node_name(a.comm_type), format_bytes(a.comm_size),
                         group.empty() ? "" : " on group " + group, g.name(node));
    }
    case chakra::NodeType::kCommSend:
      return fmt::format("send {} to NPU {} · {}", format_bytes(a.comm_size), a.comm_dst, g.name(node));
    case chakra::NodeType::kCommRecv:
      return fmt::format("receive {} from NPU {} · {}", format_bytes(a.comm_size), a.comm_src, g.name(node));
    default: return g.name(node);
  }
}

std::string phase_what(const PhaseSpan& p) {
  if (p.label != nullptr) return fmt::format("{} on {} NPUs, {}", p.label, p.ring_size, format_bytes(p.bytes));
  const std::string where = p.group ? std::string("the group's ring") : fmt::format("dimension {}", p.dim);
  return fmt::format("{} on {} of {} NPUs, {}", system::algorithm_name(p.algorithm), where, p.ring_size,
                     format_bytes(p.bytes));
}

std::string phase_name(const PhaseSpan& p) { return fmt::format("phase {}: {}", p.phase + 1, phase_what(p)); }

// The traceEvents array, one event per line.
class Events {
 public:
  explicit Events(Output& out) : out_(out) {}
  void add(const std::string& event) {
    out_.add(first_ ? "\n" : ",\n");
    out_.add(event);
    first_ = false;
  }
  // A complete ("X") slice.
  void slice(NpuId npu, std::uint32_t tid, const std::string& name, const char* cat, Tick start, Tick end,
             const std::string& args) {
    add(fmt::format("{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{{}"
                    "}}}}",
                    json_string(name), cat, npu, tid, micros(start), micros(end - start), args));
  }
  // One end of a flow arrow: "s" at its start slice, "f" (bound to the enclosing slice) at its end.
  void flow(char phase, std::uint64_t id, NpuId npu, std::uint32_t tid, Tick at) {
    add(fmt::format("{{\"name\":\"message\",\"cat\":\"send/recv\",\"ph\":\"{}\",\"id\":{},\"pid\":{},"
                    "\"tid\":{},\"ts\":{}{}}}",
                    phase, id, npu, tid, micros(at), phase == 'f' ? ",\"bp\":\"e\"" : ""));
  }
  void metadata(const char* what, NpuId npu, const std::string& tid_field, const std::string& args) {
    add(fmt::format("{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{}{},\"args\":{{{}}}}}", what, npu, tid_field, args));
  }

 private:
  Output& out_;
  bool first_ = true;
};

// A point-to-point node that ran, where its slice is: for pairing sends with receives.
struct Message {
  NpuId npu = 0;
  std::uint32_t tid = 0;
  Tick start = 0, end = 0;
};
// (src, dst, tag, bytes) -> the sends (or receives) in start order.
using MessageKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint64_t>;
struct Messages {
  std::map<MessageKey, std::vector<Message>> sends, receives;
};

// The compute model's figures of a node (the systolic array's cycles, utilisation and traffic),
// as timeline slice arguments and as the CSV's extra columns.
std::string figures_args(const compute::NodeFigures& f) {
  return fmt::format(",\"shape\":{},\"cycles\":{},\"stall_cycles\":{},"
                     "\"compute_util\":{:.6g},\"mapping_efficiency\":{:.6g},"
                     "\"sram_read_bytes\":{},\"sram_write_bytes\":{},\"dram_read_bytes\":{},\"dram_write_bytes\":{}",
                     json_string(f.shape), f.cycles, f.stall_cycles, f.compute_util, f.mapping_efficiency,
                     f.sram_read_bytes, f.sram_write_bytes, f.dram_read_bytes, f.dram_write_bytes);
}

void write_npu(Events& events, const sim::Inputs& inputs, const NodeLog& log, NpuId npu, const TimeWindow& window,
               Messages& messages, const compute::ComputeModel* figures) {
  const chakra::Graph& g = *inputs.graphs[npu];
  std::map<Track, Lanes> lanes;
  std::map<std::uint32_t, std::uint32_t> chunks_of;  // collective node -> its chunk count
  for (const PhaseSpan& p : log.phases(npu)) {
    auto& n = chunks_of[p.node];
    n = std::max(n, p.chunk + 1);
  }
  for (const NodeSpan& s : log.spans(npu)) {
    if (s.end == kNeverTick || s.end <= s.start) continue;  // unfinished, or took no time
    if (!window.contains(s.start, s.end)) continue;
    const Track track = track_of(g, s.node);
    const std::uint32_t tid = static_cast<std::uint32_t>(track) * kLanes + lanes[track].place(s.start, s.end);
    if (track == Track::kP2p && g.has_attrs(s.node)) {
      const chakra::OpAttrs& a = g.attrs(s.node);
      const bool send = g.type(s.node) == chakra::NodeType::kCommSend;
      const MessageKey key{send ? npu : a.comm_src, send ? a.comm_dst : npu, a.comm_tag, a.comm_size};
      (send ? messages.sends : messages.receives)[key].push_back({npu, tid, s.start, s.end});
    }
    std::string args =
        fmt::format("\"node\":{},\"type\":{}", g.id(s.node), json_string(chakra::node_type_name(g.raw_type(s.node))));
    if (const std::uint64_t bytes = node_bytes(g, s.node); bytes != 0) args += fmt::format(",\"bytes\":{}", bytes);
    if (const std::string group = node_group(g, s.node); !group.empty()) args += ",\"group\":" + json_string(group);
    if (figures != nullptr && g.type(s.node) == chakra::NodeType::kComp) {
      if (const auto f = figures->figures(g, s.node)) args += figures_args(*f);
    }
    events.slice(npu, tid, slice_name(g, s.node), track_name(track), s.start, s.end, args);
  }
  // Chunks span their phases; each chunk's phases nest inside it on its lane.
  struct Chunk {
    Tick start = kNeverTick, end = 0;
    std::vector<const PhaseSpan*> phases;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, Chunk> chunks;
  for (const PhaseSpan& p : log.phases(npu)) {
    if (p.end == kNeverTick || !window.contains(p.start, p.end)) continue;
    Chunk& c = chunks[{p.node, p.chunk}];
    c.start = std::min(c.start, p.start);
    c.end = std::max(c.end, p.end);
    c.phases.push_back(&p);
  }
  std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, const Chunk*>> ordered;
  for (const auto& [key, c] : chunks) ordered.emplace_back(key, &c);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.second->start < b.second->start; });
  for (const auto& [key, c] : ordered) {
    // One chunk of one phase spans exactly the collective's slice: nothing to add below it.
    const bool one_chunk = chunks_of[key.first] == 1;
    if (one_chunk && c->phases.size() == 1) continue;
    const std::uint32_t tid =
        static_cast<std::uint32_t>(Track::kChunk) * kLanes + lanes[Track::kChunk].place(c->start, c->end);
    const char* kind =
        g.has_attrs(key.first) ? workload::collective_node_name(g.attrs(key.first).comm_type) : "collective";
    const std::string args = fmt::format("\"node\":{},\"chunk\":{}", g.id(key.first), key.second);
    if (!one_chunk) {
      events.slice(npu, tid, fmt::format("{} chunk {} of {}", kind, key.second + 1, chunks_of[key.first]),
                   "collective chunks", c->start, c->end, args);
    }
    if (c->phases.size() == 1) continue;  // the chunk's slice is its one phase
    for (const PhaseSpan* p : c->phases) {
      events.slice(npu, tid, phase_name(*p), "collective phases", p->start, p->end,
                   fmt::format("\"node\":{},\"chunk\":{},\"phase\":{},\"bytes\":{}", g.id(p->node), p->chunk, p->phase,
                               p->bytes));
    }
  }
  // Names and order for the viewer.
  events.metadata("process_name", npu, "", fmt::format("\"name\":\"NPU {}\"", npu));
  events.metadata("process_sort_index", npu, "", fmt::format("\"sort_index\":{}", npu));
  for (const auto& [track, l] : lanes) {
    for (std::uint32_t lane = 0; lane < l.used(); ++lane) {
      const std::uint32_t tid = static_cast<std::uint32_t>(track) * kLanes + lane;
      const std::string name = lane == 0 ? track_name(track) : fmt::format("{} #{}", track_name(track), lane + 1);
      const std::string tid_field = fmt::format(",\"tid\":{}", tid);
      events.metadata("thread_name", npu, tid_field, "\"name\":" + json_string(name));
      events.metadata("thread_sort_index", npu, tid_field, fmt::format("\"sort_index\":{}", tid));
    }
  }
}

}  // namespace

void write_timeline(const std::string& path, const sim::Inputs& inputs, const sim::Result& result, const NodeLog& log,
                    const std::vector<NpuId>& npus, const TimeWindow& window) {
  Output out(path, "the timeline");
  out.add("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"chakrasim\"");
  out.add(fmt::format(",\"npus\":{},\"symmetric_run\":{},\"classes_simulated\":{}}},\"traceEvents\":[",
                      result.npus.size(), result.symmetric, result.classes_simulated));
  Events events(out);
  Messages messages;
  const std::unique_ptr<compute::ComputeModel> figures =
      compute::make_figures_model(inputs.compute, inputs.replay_only);
  for (const NpuId npu : npus) write_npu(events, inputs, log, npu, window, messages, figures.get());
  // The k-th send of a (src, dst, tag, size) matched the k-th receive, as the system pairs them.
  std::uint64_t flow_id = 0;
  for (const auto& [key, sends] : messages.sends) {
    const auto r = messages.receives.find(key);
    if (r == messages.receives.end()) continue;
    for (std::size_t k = 0; k < sends.size() && k < r->second.size(); ++k) {
      const Message& s = sends[k];
      const Message& d = r->second[k];
      events.flow('s', ++flow_id, s.npu, s.tid, s.start);
      events.flow('f', flow_id, d.npu, d.tid, d.end);
    }
  }
  out.add("\n]}\n");
  out.close();
}

std::string timeline_size_warning(std::uint64_t bytes, std::size_t npus, std::uint64_t limit) {
  if (bytes <= limit) return "";
  return fmt::format("the timeline of {} NPUs will be about {}, slow to open; narrow it with --timeline-npus (e.g. "
                     "0-7) or --timeline-window (e.g. 0ms:50ms)",
                     npus, format_bytes(bytes));
}

std::uint64_t estimate_timeline_bytes(const sim::Inputs& inputs, const std::vector<NpuId>& npus) {
  constexpr std::uint64_t kBytesPerSlice = 230;
  const std::uint64_t phases = std::max<std::size_t>(1, inputs.network.dims.size());
  const std::uint64_t per_collective = 1 + inputs.system.preferred_dataset_splits * (1 + phases);
  std::uint64_t slices = 0;
  for (const NpuId npu : npus) {
    const chakra::Graph& g = *inputs.graphs[npu];
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      slices += g.type(i) == chakra::NodeType::kCommColl ? per_collective : 1;
    }
  }
  return slices * kBytesPerSlice;
}

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

constexpr const char* kFiguresCsvHeader = ",shape,cycles,stall_cycles,compute_util,mapping_efficiency,sram_read_bytes,"
                                          "sram_write_bytes,dram_read_bytes,"
                                          "dram_write_bytes";
std::string figures_csv(const std::optional<compute::NodeFigures>& f) {
  if (!f) return ",,,,,,,,,";
  return fmt::format(",{},{},{},{:.6g},{:.6g},{},{},{},{}", csv_field(f->shape), f->cycles, f->stall_cycles,
                     f->compute_util, f->mapping_efficiency, f->sram_read_bytes, f->sram_write_bytes,
                     f->dram_read_bytes, f->dram_write_bytes);
}

}  // namespace

void write_node_csv(const std::string& path, const sim::Inputs& inputs, const NodeLog& log,
                    const std::vector<NpuId>& npus) {
  Output out(path, "the node CSV");
  const std::unique_ptr<compute::ComputeModel> figures =
      compute::make_figures_model(inputs.compute, inputs.replay_only);
  out.add(fmt::format("npu,id,name,type,start_ns,end_ns,duration_ns,bytes,group{}\n",
                      figures != nullptr ? kFiguresCsvHeader : ""));
  for (const NpuId npu : npus) {
    const chakra::Graph& g = *inputs.graphs[npu];
    for (const NodeSpan& s : log.spans(npu)) {
      if (s.end == kNeverTick) continue;
      out.add(fmt::format("{},{},{},{},{},{},{},{},{}", npu, g.id(s.node), csv_field(g.name(s.node)),
                          chakra::node_type_name(g.raw_type(s.node)), s.start, s.end, s.end - s.start,
                          node_bytes(g, s.node), csv_field(node_group(g, s.node))));
      if (figures != nullptr) {
        out.add(figures_csv(g.type(s.node) == chakra::NodeType::kComp ? figures->figures(g, s.node) : std::nullopt));
      }
      out.add("\n");
    }
  }
  out.close();
}

}  // namespace chakrasim::report
