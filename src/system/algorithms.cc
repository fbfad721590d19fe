#include "system/algorithms.h"

#include <fmt/format.h>

#include "core/error.h"

namespace chakrasim::system {
namespace {

void configure_ring(PhaseAlgorithm& state, const PhaseSetup& s) {
  RingState& r = state.emplace<RingState>();
  const NpuId up = s.ring.away(1, true);
  const NpuId down = s.ring.away(1, false);
  r.configure(s.phase->kind, s.phase->bytes, s.phase->ring_size, s.clockwise ? up : down, s.clockwise ? down : up);
}

void configure_direct(PhaseAlgorithm& state, const PhaseSetup& s) {
  state.emplace<DirectState>().configure(s.phase->kind, s.phase->bytes, s.ring, s.clockwise, s.phase->window,
                                         s.phase->members != nullptr);
}

void configure_halving_doubling(PhaseAlgorithm& state, const PhaseSetup& s) {
  state.emplace<HalvingDoublingState>().configure(s.phase->kind, s.phase->bytes, s.ring);
}

void configure_double_binary_tree(PhaseAlgorithm& state, const PhaseSetup& s) {
  state.emplace<DoubleBinaryTreeState>().configure(s.phase->bytes, s.ring, s.min_root_tree);
}

void configure_custom(PhaseAlgorithm& state, const PhaseSetup& s) {
  state.emplace<CustomState>().configure(*s.custom_algorithm);
}

std::vector<AlgorithmInfo> built_in_rows() {
  using K = CollectiveKind;
  std::vector<AlgorithmInfo> rows(5);
  AlgorithmInfo& ring = rows[static_cast<std::size_t>(AlgorithmKind::kRing)];
  ring.token = "ring";
  ring.flat_form = true;
  ring.symmetric_safe = true;
  ring.description = "each step sends 1/n of the data to the ring successor (system/ring.h)";
  ring.configure = configure_ring;

  AlgorithmInfo& direct = rows[static_cast<std::size_t>(AlgorithmKind::kDirect)];
  direct.token = "direct";
  direct.flat_form = true;
  direct.takes_window = true;
  direct.symmetric_safe = true;
  direct.description = "every NPU exchanges with every peer at once, a window at a time (system/direct.h)";
  direct.configure = configure_direct;

  AlgorithmInfo& hd = rows[static_cast<std::size_t>(AlgorithmKind::kHalvingDoubling)];
  hd.token = "halvingDoubling";
  hd.flat_form = true;
  hd.needs_power_of_two = true;
  hd.flip_safe = true;
  hd.kinds = {K::kAllReduce, K::kAllGather, K::kReduceScatter};
  hd.no_kind_note = "the reference exits with \"unknown communication type\"";
  hd.power_of_two_note = "the reference hangs or crashes otherwise";
  hd.description = "recursive halving then doubling of the distance between partners (system/halving_doubling.h)";
  hd.configure = configure_halving_doubling;

  AlgorithmInfo& tree = rows[static_cast<std::size_t>(AlgorithmKind::kDoubleBinaryTree)];
  tree.token = "doubleBinaryTree";
  tree.needs_power_of_two = true;
  tree.runs_on_groups = false;
  tree.keeps_size = true;
  tree.alternating_trees = true;
  tree.power_of_two_note = "the reference hangs or crashes otherwise";
  tree.no_groups_note = "groups are rings (the reference's behaviour is undefined)";
  tree.description = "reduce up and broadcast down two complementary binary trees (system/double_binary_tree.h)";
  tree.configure = configure_double_binary_tree;

  AlgorithmInfo& custom = rows[static_cast<std::size_t>(AlgorithmKind::kCustom)];
  custom.token = "custom";
  custom.in_lists = false;
  custom.description = "each NPU replays its algorithm ET (*-implementation-custom; system/custom_algorithm.h)";
  custom.configure = configure_custom;
  return rows;
}

std::vector<AlgorithmInfo>& rows() {
  static std::vector<AlgorithmInfo> table = built_in_rows();
  return table;
}

}  // namespace

const std::vector<AlgorithmInfo>& algorithms() { return rows(); }

const AlgorithmInfo& algorithm_info(AlgorithmKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  if (index >= rows().size()) fail("internal error: no collective algorithm has kind {}", index);
  return rows()[index];
}

AlgorithmKind register_algorithm(AlgorithmInfo row) {
  for (const AlgorithmInfo& r : rows()) {
    if (std::string(r.token) == row.token) fail("a collective algorithm named \"{}\" is already registered", row.token);
  }
  if (row.configure == nullptr && row.make == nullptr) {
    fail("collective algorithm \"{}\": its row has neither a configure function nor a factory", row.token);
  }
  if (rows().size() > 255) fail("too many collective algorithms (at most 256)");
  rows().push_back(std::move(row));
  return static_cast<AlgorithmKind>(rows().size() - 1);
}

bool runs_kind(const AlgorithmInfo& info, CollectiveKind kind) {
  for (const CollectiveKind k : info.kinds) {
    if (k == kind) return true;
  }
  return false;
}

namespace {

// "a", "a or b", "a, b or c"; with `final_comma`, "a, b, or c".
std::string join_or(const std::vector<std::string>& parts, bool final_comma) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += i + 1 < parts.size() ? ", " : (final_comma ? ", or " : " or ");
    text += parts[i];
  }
  return text;
}

std::string flat_token(const char* token) {
  std::string t = token;
  if (!t.empty()) t[0] = static_cast<char>(t[0] - 'a' + 'A');
  return "one" + t;
}

}  // namespace

std::string list_tokens_text() {
  std::vector<std::string> parts;
  for (const AlgorithmInfo& r : rows()) {
    if (!r.in_lists) continue;
    std::string part = r.token;
    if (r.flat_form) part += " or " + flat_token(r.token);
    if (r.takes_window) part += fmt::format(" (optionally with a window of at least 1, e.g. {}4)", r.token);
    parts.push_back(part);
  }
  return join_or(parts, true);
}

std::string tokens_where(const std::function<bool(const AlgorithmInfo&)>& pick) {
  std::vector<std::string> parts;
  for (const AlgorithmInfo& r : rows()) {
    if (r.in_lists && pick(r)) parts.emplace_back(r.token);
  }
  return join_or(parts, false);
}

void configure_phase_state(PhaseAlgorithm& state, const PhaseSetup& setup) {
  const AlgorithmInfo& info = algorithm_info(setup.phase->algorithm);
  if (info.configure != nullptr) {
    info.configure(state, setup);
  } else {
    state.emplace<PluggedState>(info.make(setup));
  }
}

}  // namespace chakrasim::system
