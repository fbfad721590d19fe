#include "tools/msccl/msccl_converter.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include <pugixml.hpp>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "core/error.h"
#include "core/read_file.h"
#include "core/sim_time.h"

namespace chakrasim::tools {
namespace {

// The reference converter charges a reduction at a fixed 50 GB/s: 3 x floor(bytes / 50) ns,
// written in whole microseconds. floor(bytes / 50.0) is that integer division exactly for any
// bytes below 2^46, so the default stays byte-identical.
std::uint64_t reduction_micros(std::uint64_t bytes, double gb_per_s) {
  return 3 * static_cast<std::uint64_t>(std::floor(static_cast<double>(bytes) / gb_per_s)) / 1000;
}

// A <gpu>'s chunk count: i_chunks, or o_chunks when i_chunks is 0.
int gpu_chunks(const pugi::xml_node& gpu, const std::string& source);

enum class StepKind { kSend, kRecv, kRecvReduce, kNop };

struct Step {
  int id = 0;
  StepKind kind = StepKind::kNop;
  int dep_block = -1;
  int dep_step = -1;
  std::uint64_t bytes = 0;
  std::int64_t first_node = -1;  // the node that takes the step's dependencies
  std::int64_t last_node = -1;   // the node later steps depend on
};

struct Block {
  int id = 0;
  int send_to = -1;
  int recv_from = -1;
  int channel = 0;
  std::vector<Step> steps;                     // in XML order
  std::unordered_map<int, std::size_t> by_id;  // step id -> index in steps: lookups stay O(1)
  const Step* find(int step) const {
    const auto it = by_id.find(step);
    return it == by_id.end() ? nullptr : &steps[it->second];
  }
};

int int_attr(const pugi::xml_node& node, const char* name, const std::string& source) {
  const pugi::xml_attribute a = node.attribute(name);
  const std::string text = a.value();
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!a || used != text.size() || text.empty()) {
    fail("{}: <{}> attribute \"{}\" is \"{}\"; expected an integer", source, node.name(), name, text);
  }
  return value;
}

// One <gpu> of the XML: its thread blocks' steps (pass 1), then its trace (pass 2).
class GpuConverter {
 public:
  // `gpus`: the <algo>'s ngpus, bounding GPU ids and peers (-1 when the XML does not say).
  GpuConverter(const pugi::xml_node& gpu, const std::string& source, const MscclOptions& options, int gpus)
      : source_(source), gpu_id_(int_attr(gpu, "id", source)), gpus_(gpus) {
    if (gpu_id_ < 0 || (gpus_ >= 0 && gpu_id_ >= gpus_)) {
      fail("{}: <gpu id=\"{}\">: expected an id from 0 to {}", source_, gpu_id_,
           gpus_ >= 0 ? fmt::format("{} (ngpus=\"{}\")", gpus_ - 1, gpus_) : std::string("2147483647"));
    }
    const auto chunks = static_cast<std::uint64_t>(gpu_chunks(gpu, source));
    reduction_gb_per_s_ = options.reduction_gb_per_s;
    read_blocks(gpu, msccl_chunk_bytes(options.collective, options.collective_bytes, chunks));
  }

  // The first step that makes a node, with that node's id (every step takes an id, rrc two).
  std::optional<std::pair<const Step*, std::int64_t>> first_message() const {
    for (const Block& b : blocks_) {
      for (const Step& s : b.steps) {
        if (s.kind != StepKind::kNop) return std::pair{&s, s.first_node};
      }
    }
    return std::nullopt;
  }
  int gpu_id() const { return gpu_id_; }

  // Pass 2: nodes, with the cross-block dependency first, then the previous step of the block.
  void write(chakra::Trace& trace) const {
    for (const Block& b : blocks_) {
      for (const Step& s : b.steps) {
        if (s.kind != StepKind::kNop) write_step(trace, b, s, dependencies(b, s));
      }
    }
  }

 private:
  // Pass 1: steps and node ids (every step takes an id, a nop too; rrc takes two).
  void read_blocks(const pugi::xml_node& gpu, std::uint64_t chunk_bytes) {
    std::int64_t next_id = 0;
    for (const pugi::xml_node tb : gpu.children("tb")) {
      Block b;
      b.id = int_attr(tb, "id", source_);
      if (b.id < 0) fail("{}: gpu {} tb {}: expected a thread block id of 0 or more", source_, gpu_id_, b.id);
      if (!block_index_.emplace(b.id, blocks_.size()).second)
        fail("{}: gpu {}: thread block id {} appears twice; expected each <tb> id once per GPU", source_, gpu_id_,
             b.id);
      b.send_to = peer_attr(tb, "send", b.id);
      b.recv_from = peer_attr(tb, "recv", b.id);
      b.channel = int_attr(tb, "chan", source_);
      for (const pugi::xml_node st : tb.children("step")) {
        Step s;
        s.id = int_attr(st, "s", source_);
        const std::string where = fmt::format("{}: gpu {} tb {} step {}", source_, gpu_id_, b.id, s.id);
        if (s.id < 0) fail("{}: expected a step number of 0 or more", where);
        if (!b.by_id.emplace(s.id, b.steps.size()).second)
          fail("{}: step number {} appears twice in the thread block; expected each once", where, s.id);
        s.dep_block = int_attr(st, "depid", source_);
        s.dep_step = int_attr(st, "deps", source_);
        if (s.dep_block < -1) fail("{}: depid {}; expected -1 (none) or a thread block id", where, s.dep_block);
        if (s.dep_block == b.id && s.dep_step == s.id) fail("{}: depends on itself (depid and deps name it)", where);
        const int count = int_attr(st, "cnt", source_);
        if (count < 0) fail("{}: cnt \"{}\"; expected a chunk count of 0 or more", where, count);
        if (chunk_bytes != 0 && static_cast<std::uint64_t>(count) > kMaxMessageBytes / chunk_bytes) {
          fail("{}: cnt {} x {} bytes per chunk is beyond {} bytes, the largest message a trace holds", where, count,
               chunk_bytes, kMaxMessageBytes);
        }
        s.bytes = chunk_bytes * static_cast<std::uint64_t>(count);
        const std::string type = st.attribute("type").value();
        s.first_node = next_id++;
        s.last_node = s.first_node;
        if (type == "s") s.kind = StepKind::kSend;
        else if (type == "r") s.kind = StepKind::kRecv;
        else if (type == "rrc") {
          s.kind = StepKind::kRecvReduce;
          s.last_node = next_id++;
        } else if (type == "nop") {
          s.kind = StepKind::kNop;
        } else {
          fail("{}: step type \"{}\" is not supported; expected s, r, rrc or nop", where, type);
        }
        if (s.kind == StepKind::kSend && b.send_to < 0)
          fail("{}: a send in a thread block with send=\"-1\"; expected the block's send peer", where);
        if ((s.kind == StepKind::kRecv || s.kind == StepKind::kRecvReduce) && b.recv_from < 0)
          fail("{}: a receive in a thread block with recv=\"-1\"; expected the block's receive peer", where);
        b.steps.push_back(s);
      }
      blocks_.push_back(std::move(b));
    }
  }

  // -1 (no peer) or another GPU of the algorithm.
  int peer_attr(const pugi::xml_node& tb, const char* name, int block) const {
    const int peer = int_attr(tb, name, source_);
    const bool in_range = peer >= 0 && (gpus_ < 0 || peer < gpus_);
    if (peer != -1 && (!in_range || peer == gpu_id_)) {
      fail("{}: gpu {} tb {}: {}=\"{}\"; expected -1 or another GPU's id{}", source_, gpu_id_, block, name, peer,
           gpus_ >= 0 ? fmt::format(", 0 to {} (ngpus=\"{}\")", gpus_ - 1, gpus_) : std::string());
    }
    return peer;
  }

  const Step& find_step(int block, int step, const Block& from, const Step& who) const {
    if (const auto it = block_index_.find(block); it != block_index_.end()) {
      if (const Step* s = blocks_[it->second].find(step)) return *s;
    }
    fail("{}: gpu {} tb {} step {} depends on tb {} step {}, which does not exist", source_, gpu_id_, from.id, who.id,
         block, step);
  }

  // The step's cross-block dependency, then the previous step of its block, walking back over
  // nops, which hand on their own cross-block dependencies.
  std::vector<std::uint64_t> dependencies(const Block& b, const Step& s) const {
    std::vector<std::uint64_t> deps;
    auto depend_on = [&](const Step& parent) {
      if (parent.kind == StepKind::kNop)
        fail("{}: gpu {} tb {} step {} depends on a nop step", source_, gpu_id_, b.id, s.id);
      deps.push_back(static_cast<std::uint64_t>(parent.last_node));
    };
    if (s.dep_block != -1) depend_on(find_step(s.dep_block, s.dep_step, b, s));
    if (s.id != 0) {
      int prev = s.id - 1;
      const Step* p = b.find(prev);
      if (p == nullptr) fail("{}: gpu {} tb {} has no step {} before step {}", source_, gpu_id_, b.id, prev, s.id);
      while (p != nullptr && p->kind == StepKind::kNop) {
        if (p->dep_block != -1) depend_on(find_step(p->dep_block, p->dep_step, b, *p));
        p = --prev < 0 ? nullptr : b.find(prev);
      }
      if (p != nullptr) depend_on(*p);
    }
    return deps;
  }

  // A send or receive node, and for rrc the reduction after it.
  void write_step(chakra::Trace& trace, const Block& b, const Step& s, const std::vector<std::uint64_t>& deps) const {
    const std::string suffix = fmt::format("_tb{}_step{}", b.id, s.id);
    const bool send = s.kind == StepKind::kSend;
    const chakra::NodeType type = send ? chakra::NodeType::kCommSend : chakra::NodeType::kCommRecv;
    chakra::Node& n = trace.nodes.emplace_back();
    n.set_id(static_cast<std::uint64_t>(s.first_node));
    n.set_name((send ? "COMM_SEND_NODE" : "COMM_RECV_NODE") + suffix);
    n.set_type(static_cast<ChakraProtoMsg::NodeType>(type));
    for (std::uint64_t d : deps) n.add_data_deps(d);
    // The reference stores the node type in comm_type, a value of no meaning here.
    *n.add_attr() = chakra::make_int64("comm_type", static_cast<std::int64_t>(type));
    *n.add_attr() = chakra::make_int64("comm_size", static_cast<std::int64_t>(s.bytes));
    *n.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", send ? b.send_to : b.recv_from);
    *n.add_attr() = chakra::make_int32("comm_tag", b.channel);
    if (s.kind == StepKind::kRecvReduce) {
      chakra::Node& c = trace.nodes.emplace_back();
      c.set_id(static_cast<std::uint64_t>(s.last_node));
      c.set_name("COMP_NODE" + suffix);
      c.set_type(ChakraProtoMsg::COMP_NODE);
      c.add_data_deps(static_cast<std::uint64_t>(s.first_node));
      c.set_duration_micros(reduction_micros(s.bytes, reduction_gb_per_s_));
    }
  }

  const std::string& source_;
  int gpu_id_;
  int gpus_;
  double reduction_gb_per_s_ = 50;
  std::vector<Block> blocks_;
  std::unordered_map<int, std::size_t> block_index_;  // tb id -> index in blocks_
};

int gpu_chunks(const pugi::xml_node& gpu, const std::string& source) {
  int chunks = int_attr(gpu, "i_chunks", source);
  if (chunks == 0) chunks = int_attr(gpu, "o_chunks", source);
  if (chunks <= 0) {
    fail("{}: <gpu id=\"{}\"> has no input or output chunks; expected i_chunks or o_chunks > 0", source,
         int_attr(gpu, "id", source));
  }
  return chunks;
}

// The <algo>'s ngpus, or -1 when it has none.
int algo_gpus(const pugi::xml_node& algo, const std::string& source) {
  if (!algo.attribute("ngpus")) return -1;
  const int gpus = int_attr(algo, "ngpus", source);
  if (gpus < 1) fail("{}: <algo> ngpus=\"{}\"; expected 1 or more", source, gpus);
  return gpus;
}

}  // namespace

std::uint64_t msccl_chunk_bytes(const std::string& collective, std::uint64_t bytes, std::uint64_t chunks) {
  if (collective == "allgather" || collective == "reduce") return bytes;
  return chunks == 0 ? 0 : bytes / chunks;
}

std::optional<MscclConvertedFor> msccl_converted_for(const chakra::Trace& trace, int gpu) {
  std::string xml, collective;
  for (const auto& a : trace.metadata.attr()) {
    if (a.name() == "input_file") xml = a.string_val();
    if (a.name() == "collective") collective = a.string_val();
  }
  if (xml.empty() || collective.empty()) return std::nullopt;
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) return std::nullopt;
  const std::string source = "the XML embedded in the algorithm ET";
  try {
    for (const pugi::xml_node node : doc.child("algo").children("gpu")) {
      if (int_attr(node, "id", source) != gpu) continue;
      // Converted again with chunks of 1 byte, the first message's size is its step's cnt.
      const auto chunks = static_cast<std::uint64_t>(gpu_chunks(node, source));
      const bool whole = collective == "allgather" || collective == "reduce";
      const GpuConverter steps(node, source, {collective, whole ? 1 : chunks, 50},
                               algo_gpus(doc.child("algo"), source));
      const auto first = steps.first_message();
      if (!first || first->first->bytes == 0) return std::nullopt;
      for (const chakra::Node& n : trace.nodes) {
        if (n.id() != static_cast<std::uint64_t>(first->second)) continue;
        for (const auto& a : n.attr()) {
          if (a.name() != "comm_size") continue;
          return MscclConvertedFor{collective, chunks, static_cast<std::uint64_t>(a.int64_val()) / first->first->bytes};
        }
      }
      return std::nullopt;
    }
  } catch (const Error&) {
    return std::nullopt;  // an XML the converter would not take: the ET does not say
  }
  return std::nullopt;
}

std::map<int, chakra::Trace> convert_msccl(const std::string& xml, const std::string& source,
                                           const MscclOptions& options) {
  static const char* const kCollectives[] = {"allreduce",     "allgather", "alltoall",
                                             "reducescatter", "broadcast", "reduce"};
  if (std::find(std::begin(kCollectives), std::end(kCollectives), options.collective) == std::end(kCollectives)) {
    fail("--collective: \"{}\" is not a collective; expected allreduce, allgather, alltoall, reducescatter, "
         "broadcast or reduce",
         options.collective);
  }
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size());
  if (!parsed) {
    fail("{}: byte {}: invalid XML: {}; expected MSCCL-IR XML (an <algo> of <gpu> elements)", source, parsed.offset,
         parsed.description());
  }
  const pugi::xml_node algo = doc.child("algo");
  if (!algo) fail("{}: no <algo> element; expected MSCCL-IR XML", source);

  chakra::Trace templ;
  *templ.metadata.add_attr() = chakra::make_string("schema", "1.0.2-chakra.0.0.4");
  *templ.metadata.add_attr() = chakra::make_string("input_file", xml);
  *templ.metadata.add_attr() = chakra::make_string("collective", options.collective);

  std::map<int, chakra::Trace> out;
  const int gpus = algo_gpus(algo, source);
  for (const pugi::xml_node gpu : algo.children("gpu")) {
    const GpuConverter converter(gpu, source, options, gpus);
    const auto [at, added] = out.try_emplace(converter.gpu_id());
    if (!added) fail("{}: <gpu id=\"{}\"> appears twice; expected each GPU once", source, converter.gpu_id());
    chakra::Trace& trace = at->second;
    trace.metadata = templ.metadata;
    converter.write(trace);
    // The simulator's own check: a step waiting (through depid/deps) on a later one is a cycle.
    chakra::Graph::build(trace, fmt::format("{}: gpu {}", source, converter.gpu_id()));
  }
  if (out.empty()) fail("{}: the <algo> has no <gpu> elements", source);
  return out;
}

std::size_t convert_msccl_file(const std::string& xml_path, const std::string& prefix, const MscclOptions& options) {
  const std::string xml = read_file(xml_path, "MSCCL-IR XML", "an MSCCL-IR XML file", kDescriptionFileMaxBytes);
  const auto traces = convert_msccl(xml, xml_path, options);
  for (const auto& [gpu, trace] : traces)
    chakra::write_trace(chakra::rank_path(prefix, static_cast<std::size_t>(gpu)), trace);
  return traces.size();
}

}  // namespace chakrasim::tools
