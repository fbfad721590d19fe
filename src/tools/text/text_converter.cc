// The reference converter's graphs (CHAKRA-FORMAT.md §3.1.1), rebuilt here pass by pass. Where
// it fails or writes a wrong graph, this one differs, and each difference is named at its line:
//  - blank lines (a trailing newline too many, a gap between layers) are skipped, not fatal;
//  - CRLF files parse the same as LF ones (the reference did this too, through Python's
//    universal newlines, which also turn the copied `input_file` text into LF; kept);
//  - a NONE comm makes no node, and the nodes that would have waited on it wait on the compute
//    that would have fed it; the reference writes a 0-byte ALL_REDUCE named ..._NONE. DATA keeps
//    the reference's node, because golden datanone pins it;
//  - an unknown comm type is an error; the reference silently writes ALL_REDUCE;
//  - the layer count on line 2 must match the layer lines; the reference uses it only to find
//    the first layer in MODEL and the HYBRID modes, and crashes or adds a stray comm otherwise;
//  - HYBRID_DLRM's last bottom layer must be a layer from 1 to L-1 (0 and -1 crash the
//    reference), and a first layer whose forward comm is not ALLTOALL gives no forward
//    all-to-all to wait for (the reference crashes);
//  - negative times and sizes and values beyond int64 are errors (the reference crashes on a
//    negative time and writes a negative size), as are lines that are not UTF-8 (a trace with
//    such a string is one protobuf cannot read back).
// The kinds the reference rejects are converted in text_hybrid.cc.
#include "tools/text/text_converter.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

#include "chakra/attributes.h"
#include "chakra/graph.h"
#include "chakra/trace_builder.h"
#include "core/error.h"
#include "core/read_file.h"
#include "core/resources.h"
#include "tools/common/text_format.h"
#include "tools/text/text_workload.h"

namespace chakrasim::tools {
namespace {

using text::Layer;
using text::parse_count;
using text::Phase;
using Id = std::uint64_t;
using Deps = std::vector<Id>;

// kHybrid: one of text::is_hybrid_parallelism's kinds, converted by text::convert_hybrid.
enum class Parallelism { kMicro, kData, kModel, kHybridDataModel, kHybridModelData, kHybridDlrm, kHybrid };

struct ParallelismName {
  const char* keyword;
  Parallelism kind;
};
constexpr std::array<ParallelismName, 7> kParallelisms{
    {{"MICRO", Parallelism::kMicro}, {"DATA", Parallelism::kData}, {"MODEL", Parallelism::kModel},
     {"HYBRID_DATA_MODEL", Parallelism::kHybridDataModel}, {"HYBRID_MODEL_DATA", Parallelism::kHybridModelData},
     {"HYBRID_DLRM", Parallelism::kHybridDlrm}, {"HYBRID_DLRM_ENHANCED", Parallelism::kHybridDlrm}}};
constexpr const char* kSupportedList =
    "MICRO, DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_DLRM, HYBRID_DLRM_ENHANCED, "
    "HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD or HYBRID_CUSTOMIZED";

struct CommName {
  const char* keyword;
  chakra::CommType type;
};
// NONE maps to ALL_REDUCE only for DATA, which writes it (see the top of this file).
constexpr std::array<CommName, 5> kCommTypes{{{"ALLREDUCE", chakra::CommType::kAllReduce},
                                              {"ALLTOALL", chakra::CommType::kAllToAll},
                                              {"ALLGATHER", chakra::CommType::kAllGather},
                                              {"REDUCESCATTER", chakra::CommType::kReduceScatter},
                                              {"NONE", chakra::CommType::kAllReduce}}};

struct Workload {
  Parallelism kind = Parallelism::kData;
  std::size_t last_bottom_layer = 0;  // HYBRID_DLRM only
  std::vector<std::string_view> head;  // line 1's words, for the hybrid kinds' settings
  std::vector<Layer> layers;
};

// Python's universal newlines: CRLF and lone CR become LF, as the reference reads the text.
std::string universal_newlines(std::string_view raw) {
  std::string text;
  text.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    text += raw[i] == '\r' ? '\n' : raw[i];
    if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
  }
  return text;
}

// Length of the valid UTF-8 prefix of `s`.
std::size_t utf8_valid_prefix(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const std::optional<Utf8Char> character = decode_utf8(s, i);
    if (!character) return i;
    i += character->length;
  }
  return i;
}

// Names the line and column of the first byte that is not UTF-8.
void check_utf8(std::string_view text, const std::string& source) {
  const std::size_t valid = utf8_valid_prefix(text);
  if (valid == text.size()) return;
  const std::string_view before = text.substr(0, valid);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const std::size_t column = valid - (before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1) + 1;
  fail("{}: line {}, column {}: byte 0x{:02x} is not UTF-8 text; expected a UTF-8 text file", source, line, column,
       static_cast<unsigned char>(text[valid]));
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  constexpr std::string_view kSpace = " \t\v\f\r\n";
  std::size_t at = line.find_first_not_of(kSpace);
  while (at != std::string_view::npos) {
    const std::size_t end = std::min(line.find_first_of(kSpace, at), line.size());
    words.push_back(line.substr(at, end - at));
    at = line.find_first_not_of(kSpace, end);
  }
  return words;
}

// The text's lines, LF-separated; a last line without LF is a line.
std::vector<std::string_view> split_lines(std::string_view all) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = std::min(all.find('\n', at), all.size());
    lines.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : source_(source), lines_(split_lines(text)) {}

  Workload parse() {
    Workload w;
    if (lines_.empty()) fail("{}: the file is empty; expected an ASTRA-sim 1.0 text workload", source_);
    const std::vector<std::string_view> head = words_of(1);
    if (head.empty()) fail("{}: line 1 is empty; expected the parallelism: {}", source_, kSupportedList);
    const ParallelismName* kind = nullptr;
    for (const ParallelismName& p : kParallelisms) {
      if (head[0] == p.keyword) kind = &p;
    }
    if (kind == nullptr && text::is_hybrid_parallelism(head[0])) {
      w.kind = Parallelism::kHybrid;
    } else if (kind == nullptr) {
      fail("{}: line 1: parallelism \"{}\" is not supported; expected {} (the parallelisms the Chakra text "
           "converter supports)",
           source_, head[0], kSupportedList);
    } else {
      w.kind = kind->kind;
    }
    w.head = head;

    const std::vector<std::string_view> count_words = words_of(2);
    const std::optional<std::uint64_t> count = count_words.size() == 1 ? parse_count(count_words[0]) : std::nullopt;
    if (!count) {
      fail("{}: line 2 is \"{}\"; expected the number of layers, a single non-negative integer", source_,
           line_text(2));
    }
    for (std::size_t n = 3; n <= lines_.size(); ++n) {
      // Fix: the reference fails on blank lines, e.g. a trailing empty line.
      if (split_words(lines_[n - 1]).empty()) continue;
      w.layers.push_back(parse_layer(n));
    }
    if (w.layers.empty()) fail("{}: no layer lines after line 2; expected {} layer lines", source_, *count);
    if (*count != w.layers.size()) {
      fail("{}: line 2 says {} layers but the file has {} layer lines (lines 3 to {}); expected the two to agree",
           source_, *count, w.layers.size(), w.layers.back().line);
    }
    if (w.kind == Parallelism::kHybridDlrm) w.last_bottom_layer = parse_last_bottom_layer(head, w.layers.size());
    if (w.kind != Parallelism::kHybrid) check_comm_types(w);  // the hybrid kinds check their own
    return w;
  }

 private:
  std::vector<std::string_view> words_of(std::size_t n) const {
    return n <= lines_.size() ? split_words(lines_[n - 1]) : std::vector<std::string_view>{};
  }
  std::string line_text(std::size_t n) const {
    return n <= lines_.size() ? std::string(lines_[n - 1]) : std::string("(end of file)");
  }

  Layer parse_layer(std::size_t n) {
    const std::vector<std::string_view> words = words_of(n);
    if (words.size() < 12) {
      fail("{}: line {}: a layer line with {} fields; expected at least 12: name, reserved, then compute time, "
           "comm type and comm size for the forward pass, the input gradient and the weight gradient, then the "
           "update time",
           source_, n, words.size());
    }
    Layer layer;
    layer.name = std::string(words[0]);
    layer.line = n;
    auto number = [&](std::size_t field, const char* what, std::uint64_t max) {
      const std::optional<std::uint64_t> v = parse_count(words[field]);
      if (!v || *v > max) {
        fail("{}: line {}: layer \"{}\": field {} ({}) is \"{}\"; expected an integer from 0 to {}", source_, n,
             layer.name, field + 1, what, words[field], max);
      }
      return *v;
    };
    constexpr std::uint64_t kMaxTime = std::numeric_limits<std::uint64_t>::max();
    constexpr auto kMaxBytes = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    auto phase = [&](std::size_t first, const char* time_name, const char* size_name) {
      Phase p;
      p.compute_micros = number(first, time_name, kMaxTime);
      p.comm_type = std::string(words[first + 1]);
      p.comm_bytes = static_cast<std::int64_t>(number(first + 2, size_name, kMaxBytes));
      return p;
    };
    layer.fwd = phase(2, "forward compute time", "forward comm size");
    layer.ig = phase(5, "input-gradient compute time", "input-gradient comm size");
    layer.wg = phase(8, "weight-gradient compute time", "weight-gradient comm size");
    if (words.size() > 12) layer.policy = std::string(words[12]);
    return layer;
  }

  std::size_t parse_last_bottom_layer(const std::vector<std::string_view>& head, std::size_t layers) const {
    if (layers < 2) fail("{}: {} needs at least 2 layers, bottom and top; expected more layer lines", source_, head[0]);
    const std::size_t last = layers - 1;
    std::optional<std::uint64_t> b = head.size() >= 2 ? parse_count(head[1]) : std::nullopt;
    // Fix: 0 or -1 crash the reference; a layer past the end is no bottom/top split at all.
    if (!b || *b < 1 || *b > last) {
      fail("{}: line 1: {} needs the index of the last bottom MLP layer as its second field, found \"{}\"; "
           "expected an integer from 1 to {}",
           source_, head[0], head.size() >= 2 ? std::string(head[1]) : std::string(), last);
    }
    return static_cast<std::size_t>(*b);
  }

  // Checks the comm types of the phases the mode turns into nodes.
  void check_comm_types(const Workload& w) const {
    const bool micro_or_data = w.kind == Parallelism::kMicro || w.kind == Parallelism::kData;
    const bool uses_fwd_ig = !micro_or_data, uses_wg = w.kind != Parallelism::kModel;
    for (const Layer& layer : w.layers) {
      if (uses_fwd_ig) check_comm(layer, layer.fwd, 4, "forward");
      if (uses_fwd_ig) check_comm(layer, layer.ig, 7, "input-gradient");
      if (uses_wg) check_comm(layer, layer.wg, 10, "weight-gradient");
    }
  }
  void check_comm(const Layer& layer, const Phase& phase, int field, const char* what) const {
    text::check_comm_type(source_, layer, phase, field, what);
  }

  const std::string& source_;
  std::vector<std::string_view> lines_;  // line n is lines_[n - 1]
};

// The nodes of one layer in the current pass; until they are made again they are the previous
// pass's, which is what the forward pass depends on.
struct LayerNodes {
  std::optional<Id> fwd, fwd_comm, ig, ig_comm, wg, wg_comm;
};

void add_dep(Deps& deps, std::optional<Id> id) {
  if (id) deps.push_back(*id);
}

// Writes one rank's passes into a TraceBuilder, in the reference's node order.
class RankWriter {
 public:
  RankWriter(const Workload& w, chakra::TraceBuilder& out) : w_(w), out_(out), nodes_(w.layers.size()) {}

  void pass() {
    switch (w_.kind) {
      case Parallelism::kMicro: return micro();
      case Parallelism::kData: return data();
      case Parallelism::kModel: return model();
      case Parallelism::kHybridDataModel: return hybrid("_IG_COMM_");
      case Parallelism::kHybridModelData: return hybrid("");
      case Parallelism::kHybridDlrm: return dlrm();
      case Parallelism::kHybrid: return;  // text::convert_hybrid writes these; never here
    }
  }

 private:
  Id comp(const Layer& l, const char* phase, std::uint64_t micros, const Deps& deps) {
    chakra::Node& node = out_.add(chakra::NodeType::kComp, "COMP_NODE_" + l.name + "_" + phase);
    for (Id d : deps) node.add_data_deps(d);
    node.set_duration_micros(micros);
    return node.id();
  }

  // A collective named after `label`, or nothing for NONE (outside DATA: see the file's top).
  std::optional<Id> comm(const std::string& label, const Phase& phase, const Deps& deps) {
    if (phase.comm_type == "NONE" && w_.kind != Parallelism::kData) return std::nullopt;
    const chakra::CommType type = text::comm_type_of(phase.comm_type).value_or(chakra::CommType::kAllReduce);
    chakra::Node& node = out_.add(chakra::NodeType::kCommColl, "COMM_COLL_NODE_" + label + "_" + phase.comm_type);
    for (Id d : deps) node.add_data_deps(d);
    *node.add_attr() = chakra::make_int64("comm_type", static_cast<std::int64_t>(type));
    *node.add_attr() = chakra::make_int64("comm_size", phase.comm_bytes);
    return node.id();
  }

  std::size_t size() const { return w_.layers.size(); }
  const Layer& layer(std::size_t i) const { return w_.layers[i]; }
  // A comm's node, or where it was NONE, the compute that would have fed it.
  static std::optional<Id> comm_or(std::optional<Id> comm, std::optional<Id> compute) { return comm ? comm : compute; }

  void micro() {
    for (const Layer& l : w_.layers) comm(l.name, l.wg, {});
  }

  // FWD(i) <- FWD(i-1), WGCOMM(i) of the last pass; backward from the last layer:
  // WG(i) <- last FWD or IG(i+1); WGCOMM(i) <- WG(i); IG(i) <- WG(i) for i > 0.
  void data() {
    for (std::size_t i = 0; i < size(); ++i) {
      Deps deps;
      if (i > 0) add_dep(deps, nodes_[i - 1].fwd);
      add_dep(deps, nodes_[i].wg_comm);
      nodes_[i].fwd = comp(layer(i), "FWD", layer(i).fwd.compute_micros, deps);
    }
    for (std::size_t i = size(); i-- > 0;) {
      LayerNodes& n = nodes_[i];
      n.wg = comp(layer(i), "BWD_WG", layer(i).wg.compute_micros, {*(i + 1 == size() ? n.fwd : nodes_[i + 1].ig)});
      n.wg_comm = comm(layer(i).name, layer(i).wg, {*n.wg});
      if (i > 0) n.ig = comp(layer(i), "BWD_IG", layer(i).ig.compute_micros, {*n.wg});
    }
  }

  // The backward pass MODEL and the HYBRID modes share: IG(i) <- FWDCOMM of the last layer, or
  // WG(i+1) and IGCOMM(i+1); IGCOMM(i) <- IG(i) for i > 0; WG(i) <- IG(i); then, with
  // `wg_comm`, WGCOMM(i) <- WG(i).
  void model_backward(const std::string& ig_comm_suffix, bool wg_comm) {
    for (std::size_t i = size(); i-- > 0;) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      if (i + 1 == size()) {
        add_dep(deps, comm_or(n.fwd_comm, n.fwd));
      } else {
        add_dep(deps, nodes_[i + 1].wg);
        add_dep(deps, nodes_[i + 1].ig_comm);
      }
      n.ig = comp(layer(i), "BWD_IG", layer(i).ig.compute_micros, deps);
      // The reference skips the first layer's IGCOMM by testing against line 2's count, which
      // must here equal the layer lines.
      n.ig_comm = i > 0 ? comm(layer(i).name + ig_comm_suffix, layer(i).ig, {*n.ig}) : std::nullopt;
      n.wg = comp(layer(i), "BWD_WG", layer(i).wg.compute_micros, {*n.ig});
      if (wg_comm) n.wg_comm = comm(layer(i).name, layer(i).wg, {*n.wg});
    }
  }

  // FWD(i) <- FWDCOMM(i-1), WG(i) of the last pass; FWDCOMM(i) <- FWD(i).
  void model() {
    for (std::size_t i = 0; i < size(); ++i) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      if (i > 0) add_dep(deps, comm_or(nodes_[i - 1].fwd_comm, nodes_[i - 1].fwd));
      add_dep(deps, n.wg);
      n.fwd = comp(layer(i), "FWD", layer(i).fwd.compute_micros, deps);
      n.fwd_comm = comm(layer(i).name, layer(i).fwd, {*n.fwd});
    }
    model_backward("", false);
  }

  // As MODEL, but FWD(i) waits on WGCOMM(i) of the last pass first, and WG comms are made.
  void hybrid(const std::string& ig_comm_suffix) {
    for (std::size_t i = 0; i < size(); ++i) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      add_dep(deps, comm_or(n.wg_comm, n.wg));
      if (i > 0) add_dep(deps, comm_or(nodes_[i - 1].fwd_comm, nodes_[i - 1].fwd));
      n.fwd = comp(layer(i), "FWD", layer(i).fwd.compute_micros, deps);
      n.fwd_comm = comm(layer(i).name, layer(i).fwd, {*n.fwd});
    }
    model_backward(ig_comm_suffix, true);
  }

  // B = last bottom layer. FWD(i) <- WGCOMM(i) (else WG(i)) of the last pass, FWD(i-1), and for
  // i == B the first layer's forward all-to-all; only ALLTOALL forward comms are made.
  // Backward: WG(i) <- last FWD, or IG(i+1) and the IGCOMM stored on layer i; WGCOMM(i) <- WG(i);
  // IG(i) <- WG(i) for i > 0; at i == B+1 the first layer's backward all-to-all <- IG(i).
  void dlrm() {
    const std::size_t bottom = w_.last_bottom_layer;
    for (std::size_t i = 0; i < size(); ++i) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      add_dep(deps, comm_or(n.wg_comm, n.wg));
      if (i > 0) add_dep(deps, nodes_[i - 1].fwd);
      // Fix: the reference crashes here when the first layer made no all-to-all.
      if (i == bottom) add_dep(deps, nodes_[0].fwd_comm);
      n.fwd = comp(layer(i), "FWD", layer(i).fwd.compute_micros, deps);
      if (layer(i).fwd.comm_type == "ALLTOALL") n.fwd_comm = comm(layer(i).name, layer(i).fwd, {*n.fwd});
    }
    for (std::size_t i = size(); i-- > 0;) {
      LayerNodes& n = nodes_[i];
      Deps deps;
      if (i + 1 == size()) {
        add_dep(deps, n.fwd);
      } else {
        add_dep(deps, nodes_[i + 1].ig);
        add_dep(deps, n.ig_comm);
      }
      n.wg = comp(layer(i), "BWD_WG", layer(i).wg.compute_micros, deps);
      n.wg_comm = comm(layer(i).name, layer(i).wg, {*n.wg});
      if (i > 0) n.ig = comp(layer(i), "BWD_IG", layer(i).ig.compute_micros, {*n.wg});
      if (i == bottom + 1) nodes_[0].ig_comm = comm(layer(0).name, layer(0).ig, {*n.ig});
    }
  }

  const Workload& w_;
  chakra::TraceBuilder& out_;
  std::vector<LayerNodes> nodes_;
};

void check_counts(const TextOptions& options) {
  if (options.npus < 1) fail("--npus is {}; expected at least 1 NPU", options.npus);
  if (options.passes < 1) fail("--passes is {}; expected at least 1 pass", options.passes);
}

}  // namespace

namespace text {

std::optional<std::uint64_t> parse_count(std::string_view word) {
  if (!word.empty() && word.front() == '+') word.remove_prefix(1);  // as Python's int() allows
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

std::optional<chakra::CommType> comm_type_of(std::string_view keyword) {
  if (keyword == "NONE") return std::nullopt;
  for (const CommName& c : kCommTypes) {
    if (keyword == c.keyword) return c.type;
  }
  return std::nullopt;
}

void check_comm_type(const std::string& source, const Layer& layer, const Phase& phase, int field, const char* what) {
  for (const CommName& c : kCommTypes) {
    if (phase.comm_type == c.keyword) return;
  }
  // Fix: the reference writes any unknown type as ALL_REDUCE.
  fail("{}: line {}: layer \"{}\": field {} ({} comm type) is \"{}\"; expected ALLREDUCE, ALLGATHER, "
       "REDUCESCATTER, ALLTOALL or NONE",
       source, layer.line, layer.name, field, what, phase.comm_type);
}

// Refuses runs whose traces would not fit in memory, or whose ids would not fit in 64 bits.
void check_trace_size(const TextOptions& options, std::size_t layers, std::uint64_t nodes_per_pass) {
  // A protobuf node with its name and dependencies takes about this much memory.
  constexpr std::uint64_t kBytesPerNode = 256;
  const std::uint64_t available = available_memory_bytes();
  const auto passes = static_cast<std::uint64_t>(options.passes);
  if (passes > available / kBytesPerNode / nodes_per_pass) {
    fail("--passes {}: one rank's trace ({} layers x {} passes) would need more than the {} of memory "
         "available; expected at most {} passes",
         options.passes, layers, options.passes, format_bytes(available), available / kBytesPerNode / nodes_per_pass);
  }
  const auto npus = static_cast<std::uint64_t>(options.npus);
  if (npus > std::numeric_limits<std::uint64_t>::max() / (passes * nodes_per_pass)) {
    fail("--npus {} x --passes {}: the node ids, which run on across rank files, would not fit in 64 bits",
         options.npus, options.passes);
  }
}

}  // namespace text

std::string convert_text_each(const std::string& raw_text, const std::string& source, const TextOptions& options,
                              const TextRankSink& sink) {
  check_counts(options);
  const std::string text = universal_newlines(raw_text);
  check_utf8(text, source);
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // a byte-order mark is no part of line 1
  const Workload workload = Parser(body, source).parse();

  chakra::GlobalMetadata metadata;
  *metadata.add_attr() = chakra::make_string("schema", kTextSchema);
  *metadata.add_attr() = chakra::make_string("input_file", text);
  if (workload.kind == Parallelism::kHybrid) {
    return text::convert_hybrid(workload.head, workload.layers, source, options, metadata, sink);
  }
  if (options.model_parallel_group != 0) {
    fail("{}: --model-parallel-group {} applies to {} only; {} has no model-parallel groups", source,
         options.model_parallel_group, text::kHybridList, workload.head[0]);
  }
  // At most a compute and a comm per phase.
  text::check_trace_size(options, workload.layers.size(), 6 * std::uint64_t{workload.layers.size()});
  Id next_id = 0;
  for (std::size_t rank = 0; rank < static_cast<std::size_t>(options.npus); ++rank) {
    chakra::TraceBuilder builder("");
    builder.trace().metadata = metadata;
    builder.set_next_id(next_id);  // the reference keeps one id counter for all rank files
    RankWriter writer(workload, builder);
    for (std::int64_t p = 0; p < options.passes; ++p) writer.pass();
    next_id = builder.next_id();
    sink(rank, builder.trace());
  }
  return {};
}

std::vector<chakra::Trace> convert_text(const std::string& text, const std::string& source,
                                        const TextOptions& options) {
  std::vector<chakra::Trace> traces;
  convert_text_each(text, source, options, [&](std::size_t, const chakra::Trace& t) { traces.push_back(t); });
  return traces;
}

std::string text_groups_path(const std::string& prefix) { return prefix + ".groups.json"; }

TextFiles convert_text_file(const std::string& text_path, const std::string& prefix, const TextOptions& options) {
  check_counts(options);
  const std::string text = read_file(text_path, "text workload", "an ASTRA-sim 1.0 text workload file");
  TextFiles files;
  const std::string groups = convert_text_each(text, text_path, options, [&](std::size_t rank, const chakra::Trace& trace) {
    chakra::write_trace(chakra::rank_path(prefix, rank), trace);
    ++files.ranks;
  });
  if (!groups.empty()) {
    files.groups_path = text_groups_path(prefix);
    std::ofstream out(files.groups_path, std::ios::binary | std::ios::trunc);
    if (!out) fail("{}: cannot create the communicator-group file (does the directory exist?)", files.groups_path);
    out << groups;
    if (!out) fail("{}: error while writing the communicator-group file", files.groups_path);
  }
  return files;
}

}  // namespace chakrasim::tools
