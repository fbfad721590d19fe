#include "tools/synthesize/synthesis_model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chakra/graph.h"
#include "core/error.h"
#include "core/json_input.h"

namespace chakrasim::tools {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kFormatVersion = 1;
constexpr std::uint64_t kMaxNpus = std::uint64_t{1} << 24;

struct KindName {
  SlotKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {SlotKind::kGpuCompute, "compute"},
    {SlotKind::kCpuCompute, "cpu_compute"},
    {SlotKind::kMemLoad, "memory_load"},
    {SlotKind::kMemStore, "memory_store"},
    {SlotKind::kCollective, "collective"},
    {SlotKind::kSend, "send"},
    {SlotKind::kRecv, "recv"},
    {SlotKind::kMetadata, "metadata"},
};

bool is_comm(SlotKind k) { return k == SlotKind::kCollective || k == SlotKind::kSend || k == SlotKind::kRecv; }

// Whole numbers (what traces hold) are written as integers.
Json number_json(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
  return v;
}

// Quantiles are rounded to 4 significant digits: the model shows a layer's size class, not its
// exact shape. Means are kept exact, so that generated totals match the original's.
Json rounded(double v) { return number_json(std::stod(fmt::format("{:.4g}", v))); }

Json distribution_json(const ValueDistribution& d) {
  if (d.constant()) return number_json(d.quantiles.front());
  Json j;
  j["mean"] = number_json(d.mean);
  Json q = Json::array();
  for (const double v : d.quantiles) q.push_back(rounded(v));
  j["quantiles"] = std::move(q);
  j["samples"] = d.samples;
  return j;
}

Json slot_json(const Slot& s) {
  Json j;
  j["node"] = slot_kind_name(s.kind);
  if (s.kind == SlotKind::kCollective) {
    j["collective"] = chakra::comm_type_name(s.comm_type);
    if (s.group_shape >= 0) j["group"] = s.group_shape;
    if (s.group_nth != 0) j["group_nth"] = s.group_nth;
    if (s.involved_dim) j["involved_dim"] = *s.involved_dim;
  }
  if (s.kind == SlotKind::kSend || s.kind == SlotKind::kRecv) j["peer"] = s.peer_offset;
  if (!s.data_deps.empty()) j["deps"] = s.data_deps;
  if (!s.ctrl_deps.empty()) j["ctrl_deps"] = s.ctrl_deps;
  if (s.duration_us) j["duration_us"] = distribution_json(*s.duration_us);
  if (s.num_ops) j["num_ops"] = distribution_json(*s.num_ops);
  if (s.tensor_size) j["tensor_size"] = distribution_json(*s.tensor_size);
  if (s.comm_size) j["size"] = distribution_json(*s.comm_size);
  return j;
}

// One line per slot, loops indented, so that a person reads the step's structure at a glance.
void write_program(const RankClass& c, const std::vector<ProgramItem>& program, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (std::size_t i = 0; i < program.size(); ++i) {
    const ProgramItem& item = program[i];
    const char* comma = i + 1 < program.size() ? "," : "";
    if (!item.is_loop()) {
      out += pad + slot_json(c.slots[static_cast<std::size_t>(item.slot)]).dump() + comma + "\n";
      continue;
    }
    out += fmt::format("{}{{\"repeat\": {},", pad, item.count);
    if (!item.correlation.empty()) {
      const std::size_t dim = static_cast<std::size_t>(std::lround(std::sqrt(item.correlation.size())));
      Json rows = Json::array();
      for (std::size_t r = 0; r < dim; ++r) {
        Json row = Json::array();
        for (std::size_t k = 0; k < dim; ++k) row.push_back(std::round(item.correlation[r * dim + k] * 1000) / 1000);
        rows.push_back(std::move(row));
      }
      out += " \"correlation\": " + rows.dump() + ",";
    }
    out += " \"body\": [\n";
    write_program(c, item.body, indent + 2, out);
    out += pad + "]}" + comma + "\n";
  }
}

// Reading: every accessor names where it is in the file.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void error(const std::string& where, const std::string& what) const {
    fail("{}: {}: {}", source_, where, what);
  }

  const Json& member(const Json& object, const std::string& where, const char* key) const {
    if (!object.is_object()) error(where, fmt::format("{} is not an object; expected one", json_excerpt(object)));
    const auto it = object.find(key);
    if (it == object.end()) error(where, fmt::format("\"{}\" is missing", key));
    return *it;
  }

  std::uint64_t uint(const Json& v, const std::string& where, std::uint64_t low, std::uint64_t high) const {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < low || v.get<std::uint64_t>() > high) {
      error(where, fmt::format("{} is invalid; expected an integer from {} to {}", json_excerpt(v), low, high));
    }
    return v.get<std::uint64_t>();
  }

  std::int64_t integer(const Json& v, const std::string& where) const {
    if (!v.is_number_integer()) error(where, fmt::format("{} is invalid; expected an integer", json_excerpt(v)));
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      error(where, fmt::format("{} is too large", json_excerpt(v)));
    }
    return v.get<std::int64_t>();
  }

  const Json& array(const Json& v, const std::string& where) const {
    if (!v.is_array()) error(where, fmt::format("{} is invalid; expected an array", json_excerpt(v)));
    return v;
  }

  double number(const Json& v, const std::string& where) const {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > 1.8e19) {
      error(where, fmt::format("{} is invalid; expected a number from 0 to 1.8e19", json_excerpt(v)));
    }
    return v.get<double>();
  }

  ValueDistribution distribution(const Json& v, const std::string& where) const {
    ValueDistribution d;
    if (v.is_number()) {
      d.mean = number(v, where);
      d.quantiles = {d.mean};
      d.samples = 1;
      return d;
    }
    if (!v.is_object()) {
      error(where, fmt::format("{} is invalid; expected a number or an object with \"mean\" and \"quantiles\"",
                               json_excerpt(v)));
    }
    d.mean = number(member(v, where, "mean"), where + ".mean");
    const Json& q = array(member(v, where, "quantiles"), where + ".quantiles");
    if (q.size() < 2) error(where + ".quantiles", "expected at least 2 values (a constant is written as a number)");
    for (std::size_t i = 0; i < q.size(); ++i) {
      d.quantiles.push_back(number(q[i], fmt::format("{}.quantiles[{}]", where, i)));
      if (i > 0 && d.quantiles[i] < d.quantiles[i - 1]) {
        error(fmt::format("{}.quantiles[{}]", where, i), "is below the one before; expected ascending quantiles");
      }
    }
    if (d.mean < d.quantiles.front() * (1 - 1e-3) || d.mean > d.quantiles.back() * (1 + 1e-3)) {
      error(where + ".mean", fmt::format("{} is outside the quantiles' range [{}, {}]", d.mean, d.quantiles.front(),
                                         d.quantiles.back()));
    }
    d.samples = v.contains("samples") ? uint(v["samples"], where + ".samples", 1, UINT64_MAX) : d.quantiles.size();
    return d;
  }

  std::vector<std::uint64_t> deps(const Json& v, const std::string& where) const {
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < array(v, where).size(); ++i) {
      out.push_back(uint(v[i], fmt::format("{}[{}]", where, i), 1, UINT32_MAX));
    }
    return out;
  }

  Slot slot(const Json& j, const std::string& where, std::size_t group_shapes, std::uint64_t npus) const {
    Slot s;
    const Json& node = member(j, where, "node");
    const auto kind = std::find_if(std::begin(kKindNames), std::end(kKindNames), [&](const KindName& k) {
      return node.is_string() && node.get<std::string>() == k.name;
    });
    if (kind == std::end(kKindNames)) {
      error(where + ".node", fmt::format("{} is invalid; expected compute, cpu_compute, memory_load, memory_store, "
                                         "collective, send, recv or metadata",
                                         json_excerpt(node)));
    }
    s.kind = kind->kind;
    static const std::set<std::string> kCommon = {"node", "deps", "ctrl_deps"};
    std::set<std::string> allowed = kCommon;
    switch (s.kind) {
      case SlotKind::kGpuCompute:
      case SlotKind::kCpuCompute: allowed.insert({"duration_us", "num_ops", "tensor_size"}); break;
      case SlotKind::kMemLoad:
      case SlotKind::kMemStore: allowed.insert({"duration_us", "tensor_size"}); break;
      case SlotKind::kCollective: allowed.insert({"collective", "group", "group_nth", "involved_dim", "size"}); break;
      case SlotKind::kSend:
      case SlotKind::kRecv: allowed.insert({"peer", "size"}); break;
      case SlotKind::kMetadata: break;
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!allowed.count(it.key())) {
        error(where, fmt::format("key \"{}\" does not belong to a {} node", it.key(), slot_kind_name(s.kind)));
      }
    }
    if (j.contains("deps")) s.data_deps = deps(j["deps"], where + ".deps");
    if (j.contains("ctrl_deps")) s.ctrl_deps = deps(j["ctrl_deps"], where + ".ctrl_deps");
    if (j.contains("duration_us")) s.duration_us = distribution(j["duration_us"], where + ".duration_us");
    if (j.contains("num_ops")) s.num_ops = distribution(j["num_ops"], where + ".num_ops");
    if (j.contains("tensor_size")) s.tensor_size = distribution(j["tensor_size"], where + ".tensor_size");
    if (is_comm(s.kind)) s.comm_size = distribution(member(j, where, "size"), where + ".size");
    if (s.kind == SlotKind::kCollective) {
      const Json& type = member(j, where, "collective");
      const auto parsed = type.is_string() ? chakra::comm_type_from_name(type.get<std::string>()) : std::nullopt;
      if (!parsed) {
        error(where + ".collective",
              fmt::format("{} is invalid; expected a collective type such as \"ALL_REDUCE\"", json_excerpt(type)));
      }
      s.comm_type = static_cast<std::int32_t>(*parsed);
      if (j.contains("group")) {
        if (group_shapes == 0) error(where + ".group", "the model has no group_shapes");
        s.group_shape = static_cast<std::int64_t>(uint(j["group"], where + ".group", 0, group_shapes - 1));
      }
      if (j.contains("group_nth"))
        s.group_nth = static_cast<std::uint32_t>(uint(j["group_nth"], where + ".group_nth", 0, 1024));
      if (j.contains("involved_dim")) {
        const Json& dims = array(j["involved_dim"], where + ".involved_dim");
        std::vector<bool> flags;
        for (const Json& d : dims) {
          if (!d.is_boolean()) error(where + ".involved_dim", "expected a list of true/false");
          flags.push_back(d.get<bool>());
        }
        s.involved_dim = std::move(flags);
      }
    }
    if (s.kind == SlotKind::kSend || s.kind == SlotKind::kRecv) {
      s.peer_offset = integer(member(j, where, "peer"), where + ".peer");
      const std::int64_t n = static_cast<std::int64_t>(npus);
      if (s.peer_offset == 0 || s.peer_offset <= -n || s.peer_offset >= n) {
        error(where + ".peer", fmt::format("{} is invalid; expected another rank's offset, from {} to {} but not 0",
                                           s.peer_offset, 1 - n, n - 1));
      }
    }
    return s;
  }

  void program(const Json& items, const std::string& where, RankClass& c, std::vector<ProgramItem>& out,
               std::size_t group_shapes, std::uint64_t npus, int depth) const {
    if (depth > 64) error(where, "loops nest deeper than 64 levels");
    array(items, where);
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string at = fmt::format("{}[{}]", where, i);
      const Json& j = items[i];
      ProgramItem item;
      if (j.is_object() && j.contains("repeat")) {
        item.count = uint(j["repeat"], at + ".repeat", 1, UINT32_MAX);
        for (auto it = j.begin(); it != j.end(); ++it) {
          if (it.key() != "repeat" && it.key() != "body" && it.key() != "correlation") {
            error(at, fmt::format("key \"{}\" does not belong to a loop (repeat, body, correlation)", it.key()));
          }
        }
        program(member(j, at, "body"), at + ".body", c, item.body, group_shapes, npus, depth + 1);
        if (item.body.empty()) error(at + ".body", "is empty; expected the loop's nodes");
        std::size_t varying = 0;
        for (const ProgramItem& b : item.body) {
          if (!b.is_loop() && first_varying(c.slots[static_cast<std::size_t>(b.slot)])) ++varying;
        }
        if (j.contains("correlation")) {
          const Json& rows = array(j["correlation"], at + ".correlation");
          if (rows.size() != varying + 1) {
            error(at + ".correlation", fmt::format("has {} rows; expected {} (the repetition index and each of the "
                                                   "body's {} varying nodes)",
                                                   rows.size(), varying + 1, varying));
          }
          for (std::size_t r = 0; r < rows.size(); ++r) {
            const Json& row = array(rows[r], fmt::format("{}.correlation[{}]", at, r));
            if (row.size() != rows.size()) {
              error(fmt::format("{}.correlation[{}]", at, r), fmt::format("expected {} values", rows.size()));
            }
            for (std::size_t k = 0; k < row.size(); ++k) {
              const Json& v = row[k];
              if (!v.is_number() || !(std::fabs(v.get<double>()) <= 1)) {
                error(fmt::format("{}.correlation[{}][{}]", at, r, k),
                      fmt::format("{} is invalid; expected a correlation from -1 to 1", json_excerpt(v)));
              }
              item.correlation.push_back(v.get<double>());
            }
          }
        }
      } else {
        item.slot = static_cast<std::int64_t>(c.slots.size());
        c.slots.push_back(slot(j, at, group_shapes, npus));
      }
      out.push_back(std::move(item));
    }
  }

  static bool first_varying(const Slot& s) {
    for (const auto* d : {&s.duration_us, &s.num_ops, &s.tensor_size, &s.comm_size}) {
      if (*d && !(*d)->constant()) return true;
    }
    return false;
  }

 private:
  std::string source_;
};

}  // namespace

const char* slot_kind_name(SlotKind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "node";
}

std::vector<std::int64_t> group_shape(const std::vector<std::uint64_t>& members) {
  const std::uint64_t low = members.empty() ? 0 : *std::min_element(members.begin(), members.end());
  std::vector<std::int64_t> shape;
  for (const std::uint64_t m : members) shape.push_back(static_cast<std::int64_t>(m - low));
  return shape;
}

std::string model_json(const SynthesisModel& model) {
  std::string out = "{\n";
  out += fmt::format("\"chakrasim_synthesis_model\": {},\n", kFormatVersion);
  out += "\"about\": \"A training step's structure and value distributions, learned by `chakrasim chakra synthesize "
         "learn`; `synthesize generate` draws traces from it. See docs/chakra-tools.md.\",\n";
  out += fmt::format("\"npus\": {},\n", model.npus);
  out += "\"groups\": [";
  for (std::size_t g = 0; g < model.groups.size(); ++g) {
    out += fmt::format("{}\n  {}", g == 0 ? "" : ",", Json(model.groups[g]).dump());
  }
  out += model.groups.empty() ? "],\n" : "\n],\n";
  out += "\"group_shapes\": [";
  for (std::size_t g = 0; g < model.group_shapes.size(); ++g) {
    out += fmt::format("{}\n  {}", g == 0 ? "" : ",", Json(model.group_shapes[g]).dump());
  }
  out += model.group_shapes.empty() ? "],\n" : "\n],\n";
  out += "\"classes\": [\n";
  for (std::size_t k = 0; k < model.classes.size(); ++k) {
    const RankClass& c = model.classes[k];
    out += fmt::format("{{\"ranks\": {},\n \"program\": [\n", Json(c.ranks).dump());
    write_program(c, c.program, 2, out);
    out += fmt::format(" ]}}{}\n", k + 1 < model.classes.size() ? "," : "");
  }
  return out + "]\n}\n";
}

SynthesisModel parse_model(const std::string& text, const std::string& source) {
  const Json root = parse_json_input<Json>(text, source, "a synthesis model written by `chakra synthesize learn`");
  const Reader r(source);
  SynthesisModel m;
  const Json& version = r.member(root, "the model", "chakrasim_synthesis_model");
  if (version != kFormatVersion) {
    r.error("chakrasim_synthesis_model", fmt::format("{} is not a version this chakrasim reads; expected {}",
                                                     json_excerpt(version), kFormatVersion));
  }
  m.npus = r.uint(r.member(root, "the model", "npus"), "npus", 1, kMaxNpus);
  const Json& groups = r.array(r.member(root, "the model", "groups"), "groups");
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::string at = fmt::format("groups[{}]", g);
    std::vector<std::uint64_t> members;
    std::set<std::uint64_t> seen;
    for (const Json& v : r.array(groups[g], at)) {
      members.push_back(r.uint(v, at, 0, m.npus - 1));
      if (!seen.insert(members.back()).second) r.error(at, fmt::format("rank {} is listed twice", members.back()));
    }
    if (members.empty()) r.error(at, "is empty; expected the group's ranks");
    m.groups.push_back(std::move(members));
  }
  const Json& shapes = r.array(r.member(root, "the model", "group_shapes"), "group_shapes");
  for (std::size_t g = 0; g < shapes.size(); ++g) {
    const std::string at = fmt::format("group_shapes[{}]", g);
    std::vector<std::int64_t> shape;
    for (const Json& v : r.array(shapes[g], at)) shape.push_back(r.integer(v, at));
    m.group_shapes.push_back(std::move(shape));
  }
  const Json& classes = r.array(r.member(root, "the model", "classes"), "classes");
  std::vector<bool> covered(m.npus, false);
  for (std::size_t k = 0; k < classes.size(); ++k) {
    const std::string at = fmt::format("classes[{}]", k);
    RankClass c;
    for (const Json& v : r.array(r.member(classes[k], at, "ranks"), at + ".ranks")) {
      c.ranks.push_back(r.uint(v, at + ".ranks", 0, m.npus - 1));
      if (covered[c.ranks.back()]) r.error(at + ".ranks", fmt::format("rank {} is in two classes", c.ranks.back()));
      covered[c.ranks.back()] = true;
    }
    r.program(r.member(classes[k], at, "program"), at + ".program", c, c.program, m.group_shapes.size(), m.npus, 0);
    m.classes.push_back(std::move(c));
  }
  for (std::uint64_t rank = 0; rank < m.npus; ++rank) {
    if (!covered[rank])
      r.error("classes", fmt::format("rank {} is in no class; expected every rank of the {} in one", rank, m.npus));
  }
  return m;
}

}  // namespace chakrasim::tools
