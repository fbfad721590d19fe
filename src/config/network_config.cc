#include "config/network_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "config/fabric_keys.h"
#include "config/nearest_key.h"
#include "core/error.h"
#include "core/read_file.h"
#include "core/sim_time.h"
#include "network/fabric/fabric_text.h"
#include "network/network.h"

namespace chakrasim::config {
namespace {

// The parser events of a YAML text that parse_network refuses before building nodes. Documents
// without a value are not counted: yaml-cpp's event parser reports empty documents without end
// after some malformed text (parse_network stops asking after a few).
class DocumentShape : public YAML::EventHandler {
 public:
  int documents = 0;  // with a value
  std::optional<YAML::Mark> alias;
  std::optional<YAML::Mark> second_document;

  void OnDocumentStart(const YAML::Mark& mark) override {
    start_ = mark;
    has_value_ = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    if (!alias) alias = mark;
    value();
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { value(); }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    value();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    value();
  }
  void OnMapEnd() override {}

 private:
  // The first value of a document makes it count.
  void value() {
    if (has_value_) return;
    has_value_ = true;
    if (++documents == 2) second_document = start_;
  }
  YAML::Mark start_ = YAML::Mark::null_mark();
  bool has_value_ = false;
};

// One key of the network YAML: a list with one entry per dimension. `read` checks entry `i` and
// stores it in the dimension's spec.
struct Param {
  const char* key;
  const char* type;
  const char* unit;
  const char* default_text;
  const char* meaning;
  void (*read)(const YAML::Node& list, std::size_t i, const std::string& source, network::DimensionSpec& d);
};

double number_at(const YAML::Node& list, const char* key, std::size_t i, const std::string& source) {
  try {
    double v = list[i].as<double>();
    if (!std::isfinite(v)) throw YAML::Exception(YAML::Mark::null_mark(), "not finite");
    return v;
  } catch (const YAML::Exception&) {
    fail("{}: {}[{}]: value \"{}\" is not a number", source, key, i,
         list[i].IsScalar() ? list[i].Scalar() : std::string("(not a scalar)"));
  }
}

void read_topology(const YAML::Node& list, std::size_t i, const std::string& source, network::DimensionSpec& d) {
  const std::string name = list[i].IsScalar() ? list[i].Scalar() : "(not a scalar)";
  if (name == "Ring") {
    d.kind = network::DimensionKind::kRing;
  } else if (name == "FullyConnected") {
    d.kind = network::DimensionKind::kFullyConnected;
  } else if (name == "Switch") {
    d.kind = network::DimensionKind::kSwitch;
  } else {
    fail("{}: topology[{}]: value \"{}\" is not a topology; expected Ring, FullyConnected or "
         "Switch (case-sensitive), or [ Custom ] alone with a topology_file",
         source, i, name);
  }
}

void read_npus(const YAML::Node& list, std::size_t i, const std::string& source, network::DimensionSpec& d) {
  const double n = number_at(list, "npus_count", i, source);
  // One NPU is a valid dimension: a single-GPU baseline, or a dimension a sweep shrinks away.
  if (n < 1 || n != std::floor(n) || n > 1e9) {
    fail("{}: npus_count[{}]: value {} is invalid; expected an integer of at least 1", source, i, n);
  }
  d.npus = static_cast<std::uint32_t>(n);
}

void read_bandwidth(const YAML::Node& list, std::size_t i, const std::string& source, network::DimensionSpec& d) {
  d.bandwidth_gib_per_s = number_at(list, "bandwidth", i, source);
  if (d.bandwidth_gib_per_s <= 0) {
    fail("{}: bandwidth[{}]: value {} is invalid; expected a positive number in GB/s (the reference's GB = 2^30 B)",
         source, i, d.bandwidth_gib_per_s);
  }
}

void read_latency(const YAML::Node& list, std::size_t i, const std::string& source, network::DimensionSpec& d) {
  d.latency_ns = number_at(list, "latency", i, source);
  if (!(d.latency_ns >= 0)) {
    fail("{}: latency[{}]: value {} is invalid; expected a number of ns, 0 or more", source, i, d.latency_ns);
  }
  if (d.latency_ns > static_cast<double>(kMaxSimulatedNs)) {
    fail("{}: latency[{}]: value {} ns is beyond the simulated time limit of {}", source, i, d.latency_ns,
         simulated_time_limit_text());
  }
}

// The first key is the one whose length gives the number of dimensions; rows are read in this
// order, dimension by dimension, so the first bad entry is the one reported.
const std::vector<Param>& params() {
  static const std::vector<Param> kParams = {
      {"topology", "list of Ring | FullyConnected | Switch", "-", "required",
       "the kind of each dimension, dimension 0 first (spelled exactly so); its length is the number of dimensions",
       &read_topology},
      {"npus_count", "list of integers >= 2", "NPUs", "required",
       "NPUs along each dimension; the network has their product (at most 2^31), dimension 0 varying fastest",
       &read_npus},
      {"bandwidth", "list of numbers > 0", "GB/s, GB = 2^30 B", "required",
       "per link and per direction (in bytes per ns: bandwidth x 2^30 / 10^9)", &read_bandwidth},
      {"latency", "list of numbers >= 0", "ns", "required", "per link traversal (per hop)", &read_latency},
  };
  return kParams;
}

YAML::Node required_list(const YAML::Node& root, const char* key, const std::string& source,
                         const std::vector<std::string>& unknown) {
  YAML::Node node = root[key];
  if (!node) {
    std::string hint;
    if (const auto near = nearest_key(key, unknown)) hint = fmt::format(" (is \"{}\" a misspelling of it?)", *near);
    fail("{}: missing key \"{}\"; expected a list with one entry per dimension{}", source, key, hint);
  }
  if (!node.IsSequence() || node.size() == 0) {
    fail("{}: key \"{}\": expected a non-empty list with one entry per dimension", source, key);
  }
  return node;
}

// The dimension keys, for messages about a YAML of dimensions.
std::string key_list(const char* last_separator) {
  std::string out;
  std::vector<std::string> keys;
  for (const Param& p : params()) keys.emplace_back(p.key);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    out += (k == 0 ? "" : k + 1 == keys.size() ? last_separator : ", ") + keys[k];
  }
  return out;
}

// topology: [ Custom ] names a graph in a topology text file (network/fabric/fabric_text.h).
constexpr const char* kTopologyFileKey = "topology_file";

bool is_custom(const YAML::Node& root) {
  const YAML::Node t = root["topology"];
  return t && t.IsSequence() && t.size() == 1 && t[0].IsScalar() && t[0].Scalar() == "Custom";
}

// The graph of a Custom topology, read from topology_file (relative to the YAML's folder), and
// the one Switch dimension of its NPUs that the collective algorithms reason in: its bandwidth
// and latency those of NPU 0's first link.
network::TopologySpec parse_custom(const YAML::Node& root, const std::string& source,
                                   std::vector<std::string>* warnings) {
  const YAML::Node file = root[kTopologyFileKey];
  if (!file || !file.IsScalar() || file.Scalar().empty()) {
    fail("{}: topology is [ Custom ], so key \"{}\" must name the topology text file; expected a path such as "
         "\"topology.txt\"",
         source, kTopologyFileKey);
  }
  std::filesystem::path path(file.Scalar());
  if (path.is_relative()) path = std::filesystem::path(source).parent_path() / path;
  auto fabric = std::make_shared<const network::Fabric>(network::load_fabric_text(path.string()));
  for (const char* key : {"npus_count", "bandwidth", "latency"}) {
    if (root[key] && warnings != nullptr)
      warnings->push_back(fmt::format("{}: key \"{}\" ignored: a Custom topology's file gives the links", source, key));
  }
  const network::FabricLink& first = fabric->link(fabric->out_links(fabric->npu_node(0)).front());
  network::TopologySpec spec;
  spec.dims.push_back({network::DimensionKind::kSwitch, fabric->npu_count(),
                       first.bytes_per_ns * 1e9 / static_cast<double>(1u << 30), first.latency_ns});
  spec.fabric = std::move(fabric);
  read_fabric_keys(root, source, spec);
  return spec;
}

// The root's keys that the table does not know, in file order.
std::vector<std::string> unknown_keys(const YAML::Node& root) {
  const std::vector<std::string> known = network_keys();
  std::vector<std::string> unknown;
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "(not a scalar)";
    if (std::find(known.begin(), known.end(), key) == known.end()) unknown.push_back(key);
  }
  return unknown;
}

}  // namespace

std::vector<std::string> network_keys() {
  std::vector<std::string> keys;
  for (const Param& p : params()) keys.emplace_back(p.key);
  keys.emplace_back(kTopologyFileKey);
  for (const std::string& key : fabric_keys()) keys.push_back(key);
  return keys;
}

network::TopologySpec parse_network(const std::string& text, const std::string& source,
                                    std::vector<std::string>* warnings) {
  // The document's structure first, as parser events, before any node is built: yaml-cpp
  // shares aliased nodes, so an alias inside its own anchor makes a cycle, which leaks and which
  // no walk over the tree leaves; and Load reads only the first document, silently.
  DocumentShape shape;
  YAML::Node root;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    for (int asked = 0; shape.documents < 2 && asked < 16 && parser.HandleNextDocument(shape); ++asked) {}
    if (!shape.alias && shape.documents <= 1) root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail("{}: line {}, column {}: invalid YAML: {}; expected a YAML mapping with keys {}", source, e.mark.line + 1,
         e.mark.column + 1, e.msg, key_list(", "));
  }
  if (shape.alias) {
    fail("{}: line {}: a YAML alias (*name); expected plain values (anchors and aliases are not read)", source,
         shape.alias->line + 1);
  }
  if (shape.documents > 1) {
    fail("{}: line {}: a second YAML document (after \"---\"); expected one mapping of keys {}", source,
         shape.second_document->line + 1, key_list(", "));
  }
  if (!root.IsMap()) fail("{}: expected a YAML mapping with keys {}", source, key_list(", "));
  std::map<std::string, int> first_line;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    const auto [at, added] = first_line.emplace(key, entry.first.Mark().line + 1);
    if (!added) {
      fail("{}: line {}: key \"{}\" appears again (first on line {}); expected each key once", source,
           entry.first.Mark().line + 1, key, at->second);
    }
  }

  if (is_custom(root)) return parse_custom(root, source, warnings);
  const std::vector<std::string> unknown = unknown_keys(root);
  std::vector<YAML::Node> lists;
  for (const Param& p : params()) lists.push_back(required_list(root, p.key, source, unknown));
  const std::size_t dims = lists.front().size();
  for (std::size_t k = 1; k < lists.size(); ++k) {
    if (lists[k].size() != dims) {
      fail("{}: key \"{}\" has {} entries but \"{}\" has {}; expected one entry per dimension", source, params()[k].key,
           lists[k].size(), params().front().key, dims);
    }
  }

  network::TopologySpec spec;
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < dims; ++i) {
    network::DimensionSpec d;
    for (std::size_t k = 0; k < lists.size(); ++k) params()[k].read(lists[k], i, source, d);
    total *= d.npus;
    if (total > (1ull << 31)) {
      fail("{}: npus_count: the network has more than 2^31 NPUs; expected a product of at most {}", source, 1ull << 31);
    }
    spec.dims.push_back(d);
  }
  read_fabric_keys(root, source, spec);
  if (warnings != nullptr) {
    const std::vector<std::string> known = network_keys();
    for (const std::string& key : unknown) {
      const auto near = nearest_key(key, known);
      warnings->push_back(
          near ? fmt::format("{}: unknown key \"{}\" ignored; did you mean \"{}\"?", source, key, *near)
               : fmt::format("{}: unknown key \"{}\" ignored; the keys are {}", source, key, key_list(" and ")));
    }
  }
  return spec;
}

network::TopologySpec load_network(const std::string& path, std::vector<std::string>* warnings) {
  return parse_network(read_file(path, "network configuration", "the network configuration file"), path, warnings);
}

std::string describe_network_keys() {
  std::string out;
  auto readers_of = [](const char* key) {
    std::string readers;
    for (const network::BackendInfo& b : network::backends()) {
      if (std::find_if(b.params.begin(), b.params.end(), [&](const char* k) { return std::string(k) == key; }) !=
          b.params.end()) {
        readers += std::string(readers.empty() ? "" : ", ") + b.name;
      }
    }
    return readers.empty() ? std::string("no backend") : readers;
  };
  for (const Param& p : params()) {
    out += fmt::format("  {:<12} {:<40} {:<20} default {}\n      {}\n      read by: {}\n", p.key, p.type, p.unit,
                       p.default_text, p.meaning, readers_of(p.key));
  }
  out += fmt::format("  {:<12} {:<40} {:<20} default {}\n      {}\n      read by: {}\n", kTopologyFileKey, "path", "-",
                     "none",
                     "with topology: [ Custom ] alone: the network as a graph in a topology text file (ASTRA-sim's, "
                     "ns-3's or SimAI's form), relative to this file; the other keys are then ignored",
                     readers_of(kTopologyFileKey));
  out += describe_fabric_keys(readers_of);
  return out;
}

}  // namespace chakrasim::config
