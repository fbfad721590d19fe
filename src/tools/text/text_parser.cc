// Reading an ASTRA-sim 1.0 text workload: line 1 names the parallelism (and, for some kinds,
// settings), line 2 the layer count, then one line per layer with its three phases. The checks
// the reference lacks are listed at the top of text_converter.cc.
#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "tools/common/text_format.h"
#include "tools/text/text_workload.h"

namespace chakrasim::tools::text {
namespace {

struct ParallelismName {
  const char* keyword;
  Parallelism kind;
};
constexpr std::array<ParallelismName, 7> kParallelisms{{{"MICRO", Parallelism::kMicro},
                                                        {"DATA", Parallelism::kData},
                                                        {"MODEL", Parallelism::kModel},
                                                        {"HYBRID_DATA_MODEL", Parallelism::kHybridDataModel},
                                                        {"HYBRID_MODEL_DATA", Parallelism::kHybridModelData},
                                                        {"HYBRID_DLRM", Parallelism::kHybridDlrm},
                                                        {"HYBRID_DLRM_ENHANCED", Parallelism::kHybridDlrm}}};
constexpr const char* kSupportedList = "MICRO, DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_DLRM, "
                                       "HYBRID_DLRM_ENHANCED, "
                                       "HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD or HYBRID_CUSTOMIZED";

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
      fail("{}: line 2 is \"{}\"; expected the number of layers, a single non-negative integer", source_, line_text(2));
    }
    for (std::size_t n = 3; n <= lines_.size(); ++n) {
      // Fix: the reference fails on blank lines, e.g. a trailing empty line.
      if (split_words(lines_[n - 1]).empty()) continue;
      w.layers.push_back(parse_layer(n));
    }
    if (w.layers.empty()) {
      fail("{}: no layer lines after line 2; expected {} (a workload has at least one layer)", source_,
           *count == 0 ? std::string("at least one") : fmt::format("the {} line 2 gives", *count));
    }
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

}  // namespace

std::string with_universal_newlines(std::string_view raw) { return universal_newlines(raw); }

Workload parse_workload(const std::string& text, const std::string& source) {
  check_utf8(text, source);
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // a byte-order mark is no part of line 1
  return Parser(body, source).parse();
}

}  // namespace chakrasim::tools::text
