#include "network/fabric/fabric_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/parse_number.h"
#include "core/read_file.h"

namespace chakrasim::network {
namespace {

struct Line {
  std::size_t number = 0;  // 1-based
  std::vector<std::string> words;
};

std::vector<Line> words_by_line(const std::string& text) {
  std::vector<Line> lines;
  std::istringstream in(text);
  std::string raw;
  for (std::size_t number = 1; std::getline(in, raw); ++number) {
    std::istringstream words(raw);
    Line line{number, {}};
    for (std::string w; words >> w;) line.words.push_back(w);
    if (!line.words.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

// A number followed by a unit from `units`: "0.0005ms" -> 0.0005 x the factor of "ms".
double with_unit(const std::string& text, const std::vector<std::pair<std::string, double>>& units,
                 const std::string& where, const char* what, const char* examples) {
  std::size_t split = 0;
  while (split < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[split])) || text[split] == '.' || text[split] == 'e' ||
          text[split] == 'E' || text[split] == '+' || text[split] == '-')) {
    ++split;
  }
  // "1e" of "1ebps" is no number: give the exponent back to the unit.
  while (split > 0 && (text[split - 1] == 'e' || text[split - 1] == 'E')) --split;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + split, value);
  const std::string unit = text.substr(split);
  const auto found = std::find_if(units.begin(), units.end(), [&](const auto& u) { return u.first == unit; });
  if (split == 0 || ec != std::errc() || end != text.data() + split || found == units.end() || !std::isfinite(value)) {
    fail("{}: {} \"{}\" is not a {}; expected a number and a unit, such as {}", where, what, text, what, examples);
  }
  return value * found->second;
}

}  // namespace

double parse_bandwidth_bytes_per_ns(const std::string& text, const std::string& where) {
  // Bits (b) or bytes (B) per second, with SI or binary prefixes, as ns-3's DataRate reads them.
  static const std::vector<std::pair<std::string, double>> kUnits = [] {
    std::vector<std::pair<std::string, double>> units;
    const std::vector<std::pair<std::string, double>> prefixes =
        {{"", 1},     {"k", 1e3},   {"K", 1e3},        {"M", 1e6},           {"G", 1e9},
         {"T", 1e12}, {"Ki", 1024}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}};
    for (const auto& [prefix, factor] : prefixes) {
      for (const char* suffix : {"bps", "b/s"}) units.emplace_back(prefix + suffix, factor / 8 / 1e9);
      for (const char* suffix : {"Bps", "B/s"}) units.emplace_back(prefix + suffix, factor / 1e9);
    }
    return units;
  }();
  const double bytes_per_ns = with_unit(text, kUnits, where, "bandwidth", "400Gbps, 50GBps or 100Mb/s");
  if (!(bytes_per_ns > 0)) fail("{}: bandwidth \"{}\" is invalid; expected a positive bandwidth", where, text);
  return bytes_per_ns;
}

double parse_latency_ns(const std::string& text, const std::string& where) {
  static const std::vector<std::pair<std::string, double>> kUnits = {{"s", 1e9},
                                                                     {"ms", 1e6},
                                                                     {"us", 1e3},
                                                                     {"ns", 1},
                                                                     {"ps", 1e-3}};
  const double ns = with_unit(text, kUnits, where, "latency", "0.0005ms, 500ns or 1us");
  if (!(ns >= 0)) fail("{}: latency \"{}\" is invalid; expected 0 or more", where, text);
  return ns;
}

Fabric parse_fabric_text(const std::string& text, const std::string& source) {
  const std::vector<Line> lines = words_by_line(text);
  if (lines.empty()) fail("{}: the topology file is empty; expected \"<nodes> <switches> <links>\" on line 1", source);
  const Line& head = lines.front();
  auto count = [&](std::size_t index, const char* what) {
    const auto value = parse_number<std::uint64_t>(head.words[index]);
    if (!value || *value > (1u << 26)) {  // 67M nodes: beyond any cluster, and a bound on what a header allocates
      fail("{}: line {}: {} \"{}\"; expected a whole number up to 67108864", source, head.number, what,
           head.words[index]);
    }
    return *value;
  };
  // ASTRA-sim and ns-3: nodes switches links. SimAI: nodes gpus-per-server nvswitches switches
  // links gpu-type [...].
  const bool simai = head.words.size() >= 6;
  if (head.words.size() != 3 && !simai) {
    fail("{}: line {} has {} fields; expected \"<nodes> <switches> <links>\" (ASTRA-sim, ns-3) or SimAI's \"<nodes> "
         "<gpus per server> <nvswitches> <switches> <links> <gpu type>\"",
         source, head.number, head.words.size());
  }
  const std::uint64_t nodes = count(0, "node count");
  const std::uint64_t scale_up = simai ? count(2, "NVSwitch count") : 0;
  const std::uint64_t switches = scale_up + count(simai ? 3 : 1, "switch count");
  const std::uint64_t links = count(simai ? 4 : 2, "link count");
  // Every node but a lone NPU has a link, and a link touches two nodes: a file of L lines holds
  // at most 2L + 1 nodes. Checked before anything is sized by the header.
  if (nodes > 2 * lines.size() + 1) {
    fail("{}: line {}: {} nodes, but the file has only {} lines; expected every node to have a link", source,
         head.number, nodes, lines.size());
  }
  if (switches >= nodes) {
    fail("{}: line {}: {} switches of {} nodes; expected fewer switches than nodes (the rest are NPUs)", source,
         head.number, switches, nodes);
  }

  // The switch ids, however they are spread over lines.
  std::vector<FabricNodeKind> kinds(nodes, FabricNodeKind::kNpu);
  std::size_t at = 1, word = 0;
  for (std::uint64_t k = 0; k < switches; ++k) {
    if (at < lines.size() && word == lines[at].words.size()) {
      ++at;
      word = 0;
    }
    if (at >= lines.size()) fail("{}: {} switch ids listed; expected {} after line 1", source, k, switches);
    const std::string& w = lines[at].words[word++];
    const auto id = parse_number<std::uint64_t>(w);
    if (!id || *id >= nodes) {
      fail("{}: line {}: switch id \"{}\"; expected a node id from 0 to {}", source, lines[at].number, w, nodes - 1);
    }
    if (kinds[*id] != FabricNodeKind::kNpu)
      fail("{}: line {}: switch {} is listed twice", source, lines[at].number, *id);
    kinds[*id] = k < scale_up ? FabricNodeKind::kScaleUpSwitch : FabricNodeKind::kScaleOutSwitch;
  }
  if (word != 0 && word < lines[at].words.size()) {
    fail("{}: line {}: \"{}\" after the {} switch ids; expected the links on the next line", source, lines[at].number,
         lines[at].words[word], switches);
  }
  if (word != 0) ++at;

  struct Cable {
    std::uint32_t a, b;
    double bytes_per_ns, latency_ns;
    std::size_t line;
  };
  std::vector<Cable> cables;
  for (; at < lines.size(); ++at) {
    const Line& l = lines[at];
    const std::string where = fmt::format("{}: line {}", source, l.number);
    if (l.words.size() < 4 || l.words.size() > 5) {
      fail("{} has {} fields; expected \"<src> <dst> <bandwidth> <latency> <error rate>\"", where, l.words.size());
    }
    const auto a = parse_number<std::uint64_t>(l.words[0]), b = parse_number<std::uint64_t>(l.words[1]);
    if (!a || !b || *a >= nodes || *b >= nodes) {
      fail("{}: link \"{} {}\"; expected two node ids from 0 to {}", where, l.words[0], l.words[1], nodes - 1);
    }
    if (*a == *b) fail("{}: link from node {} to itself; expected two distinct nodes", where, *a);
    cables.push_back({static_cast<std::uint32_t>(*a), static_cast<std::uint32_t>(*b),
                      parse_bandwidth_bytes_per_ns(l.words[2], where), parse_latency_ns(l.words[3], where), l.number});
  }
  if (cables.size() != links) {
    fail("{}: line 1 says {} links but the file lists {}; expected the two to agree", source, links, cables.size());
  }

  // Directed (both directions listed) or cables (one line each)?
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> listed;
  for (const Cable& c : cables) ++listed[{c.a, c.b}];
  std::size_t with_reverse = 0;
  const Cable* lonely = nullptr;
  for (const Cable& c : cables) {
    const auto reverse = listed.find({c.b, c.a});
    if (reverse != listed.end() && reverse->second == listed[{c.a, c.b}]) {
      ++with_reverse;
    } else if (lonely == nullptr) {
      lonely = &c;
    }
  }
  const bool directed = with_reverse == cables.size();
  if (!directed && with_reverse != 0) {
    fail("{}: line {}: the link {} -> {} is listed without its reverse, but other links list both directions; "
         "expected either every link in both directions (ASTRA-sim's Custom topology) or each cable once (ns-3, "
         "SimAI)",
         source, lonely->line, lonely->a, lonely->b);
  }

  Fabric fabric;
  for (FabricNodeKind kind : kinds) fabric.add_node(kind);
  fabric.set_npus_forward(switches == 0);  // without switches (a torus), NPUs must pass traffic on
  for (const Cable& c : cables) {
    if (directed) {
      fabric.add_link(c.a, c.b, c.bytes_per_ns, c.latency_ns);
    } else {
      fabric.add_cable(c.a, c.b, c.bytes_per_ns, c.latency_ns);
    }
  }
  fabric.finish(source);
  return fabric;
}

Fabric load_fabric_text(const std::string& path) {
  return parse_fabric_text(read_file(path, "topology file", "a topology text file"), path);
}

std::string fabric_text(const Fabric& fabric) {
  // Pair every link with a reverse of the same figures: the formats list cables.
  std::map<std::tuple<std::uint32_t, std::uint32_t, double, double>, std::vector<std::uint32_t>> open;
  std::vector<std::uint32_t> cables;  // the first link of each pair
  for (std::uint32_t id = 0; id < fabric.link_count(); ++id) {
    const FabricLink& l = fabric.link(id);
    auto reverse = open.find({l.to, l.from, l.bytes_per_ns, l.latency_ns});
    if (reverse != open.end() && !reverse->second.empty()) {
      cables.push_back(reverse->second.back());
      reverse->second.pop_back();
    } else {
      open[{l.from, l.to, l.bytes_per_ns, l.latency_ns}].push_back(id);
    }
  }
  for (const auto& [key, ids] : open) {
    if (!ids.empty()) {
      fail("the fabric's link {} has no reverse of the same bandwidth and latency; a topology file lists cables, so "
           "it cannot say that",
           fabric.link_name(ids.front()));
    }
  }
  std::sort(cables.begin(), cables.end());

  // Node numbering: as built, or for SimAI NPUs first, then scale-up, then scale-out switches.
  std::vector<std::uint32_t> order;  // new id -> node
  for (const FabricNodeKind kind :
       {FabricNodeKind::kNpu, FabricNodeKind::kScaleUpSwitch, FabricNodeKind::kScaleOutSwitch}) {
    for (std::uint32_t v = 0; v < fabric.node_count(); ++v) {
      if (fabric.kind(v) == kind) order.push_back(v);
    }
  }
  const std::uint32_t scale_up =
      static_cast<std::uint32_t>(std::count_if(order.begin(), order.end(), [&](std::uint32_t v) {
        return fabric.kind(v) == FabricNodeKind::kScaleUpSwitch;
      }));
  const bool simai = scale_up > 0;
  std::vector<std::uint32_t> id_of(fabric.node_count());
  for (std::uint32_t v = 0; v < fabric.node_count(); ++v) id_of[v] = v;
  if (simai) {
    for (std::uint32_t k = 0; k < order.size(); ++k) id_of[order[k]] = k;
  }
  const std::uint32_t npus = fabric.npu_count();
  const std::uint32_t switches = fabric.node_count() - npus;
  std::string out;
  if (simai) {
    // GPUs per server: the NPUs on the first scale-up switch.
    std::uint32_t per_server = 0;
    for (std::uint32_t id : fabric.out_links(order[npus]))
      per_server += fabric.kind(fabric.link(id).to) == FabricNodeKind::kNpu;
    out += fmt::format("{} {} {} {} {} GPU\n", fabric.node_count(), std::max(per_server, 1u), scale_up,
                       switches - scale_up, cables.size());
  } else {
    out += fmt::format("{} {} {}\n", fabric.node_count(), switches, cables.size());
  }
  std::string ids;
  for (std::uint32_t k = npus; k < order.size(); ++k)
    ids += fmt::format("{}{}", ids.empty() ? "" : " ", id_of[order[k]]);
  out += ids + "\n";
  for (std::uint32_t id : cables) {
    const FabricLink& l = fabric.link(id);
    out += fmt::format("{} {} {}Gbps {}ns 0\n", id_of[l.from], id_of[l.to], l.bytes_per_ns * 8, l.latency_ns);
  }
  return out;
}

}  // namespace chakrasim::network
