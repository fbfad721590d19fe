#include "report/timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "chakra/et_file.h"
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

// A file written through one buffer, failing with the path on any error.
class Output {
 public:
  explicit Output(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb"), &std::fclose) {
    if (!file_) fail("{}: cannot open for writing", path);
  }
  void add(std::string_view text) {
    buffer_ += text;
    if (buffer_.size() > (1u << 20)) flush();
  }
  void close() {
    flush();
    if (std::fflush(file_.get()) != 0) fail("{}: write failed", path_);
  }

 private:
  void flush() {
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) != buffer_.size()) {
      fail("{}: write failed", path_);
    }
    buffer_.clear();
  }
  std::string path_;
  std::unique_ptr<FILE, int (*)(FILE*)> file_;
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

// What a person reads on a node's slice: the collective and its size first, then the name.
std::string slice_name(const chakra::Graph& g, std::uint32_t node) {
  if (g.type(node) == chakra::NodeType::kCommColl && g.has_attrs(node)) {
    const std::string group = node_group(g, node);
    return fmt::format("{} {}{} · {}", workload::collective_node_name(g.attrs(node).comm_type),
                       format_bytes(g.attrs(node).comm_size), group.empty() ? "" : " on group " + group, g.name(node));
  }
  return g.name(node);
}

std::string phase_name(const PhaseSpan& p) {
  return fmt::format("phase {}: {} on {} {} of {} NPUs, {}", p.phase + 1, system::algorithm_name(p.algorithm),
                     p.group ? "group ring" : "dimension", p.group ? std::string() : std::to_string(p.dim), p.ring_size,
                     format_bytes(p.bytes));
}

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
  void metadata(const char* what, NpuId npu, const std::string& tid_field, const std::string& args) {
    add(fmt::format("{{\"name\":\"{}\",\"ph\":\"M\",\"pid\":{}{},\"args\":{{{}}}}}", what, npu, tid_field, args));
  }

 private:
  Output& out_;
  bool first_ = true;
};

void write_npu(Events& events, const sim::Inputs& inputs, const NodeLog& log, NpuId npu) {
  const chakra::Graph& g = *inputs.graphs[npu];
  std::map<Track, Lanes> lanes;
  for (const NodeSpan& s : log.spans(npu)) {
    if (s.end == kNeverTick || s.end <= s.start) continue;  // unfinished, or took no time
    const Track track = track_of(g, s.node);
    const std::uint32_t tid = static_cast<std::uint32_t>(track) * kLanes + lanes[track].place(s.start, s.end);
    std::string args =
        fmt::format("\"node\":{},\"type\":{}", g.id(s.node), json_string(chakra::node_type_name(g.raw_type(s.node))));
    if (const std::uint64_t bytes = node_bytes(g, s.node); bytes != 0) args += fmt::format(",\"bytes\":{}", bytes);
    if (const std::string group = node_group(g, s.node); !group.empty()) args += ",\"group\":" + json_string(group);
    events.slice(npu, tid, slice_name(g, s.node), track_name(track), s.start, s.end, args);
  }
  // Chunks span their phases; each chunk's phases nest inside it on its lane.
  struct Chunk {
    Tick start = kNeverTick, end = 0;
    std::vector<const PhaseSpan*> phases;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, Chunk> chunks;
  for (const PhaseSpan& p : log.phases(npu)) {
    if (p.end == kNeverTick) continue;
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
    const std::uint32_t tid =
        static_cast<std::uint32_t>(Track::kChunk) * kLanes + lanes[Track::kChunk].place(c->start, c->end);
    const char* kind =
        g.has_attrs(key.first) ? workload::collective_node_name(g.attrs(key.first).comm_type) : "collective";
    const std::string args = fmt::format("\"node\":{},\"chunk\":{}", g.id(key.first), key.second);
    events.slice(npu, tid, fmt::format("{} chunk {}", kind, key.second + 1), "collective chunks", c->start, c->end,
                 args);
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
                    const std::vector<NpuId>& npus) {
  Output out(path);
  out.add("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"chakrasim\"");
  out.add(fmt::format(",\"npus\":{},\"symmetric_run\":{}}},\"traceEvents\":[", result.npus.size(), result.symmetric));
  Events events(out);
  for (const NpuId npu : npus) write_npu(events, inputs, log, npu);
  out.add("\n]}\n");
  out.close();
}

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void write_node_csv(const std::string& path, const sim::Inputs& inputs, const NodeLog& log,
                    const std::vector<NpuId>& npus) {
  Output out(path);
  out.add("npu,id,name,type,start_ns,end_ns,duration_ns,bytes,group\n");
  for (const NpuId npu : npus) {
    const chakra::Graph& g = *inputs.graphs[npu];
    for (const NodeSpan& s : log.spans(npu)) {
      if (s.end == kNeverTick) continue;
      out.add(fmt::format("{},{},{},{},{},{},{},{},{}\n", npu, g.id(s.node), csv_field(g.name(s.node)),
                          chakra::node_type_name(g.raw_type(s.node)), s.start, s.end, s.end - s.start,
                          node_bytes(g, s.node), csv_field(node_group(g, s.node))));
    }
  }
  out.close();
}

}  // namespace chakrasim::report
