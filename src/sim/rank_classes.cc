#include "sim/rank_classes.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "network/network.h"
#include "system/algorithms.h"
#include "system/folded_groups.h"
#include "workload/executor.h"

namespace chakrasim::sim {
namespace {

using network::Folding;

constexpr std::int64_t kNotAGroup = -1;

// Whether an algorithm keeps its roles when positions move by `moved` (positions 0..n-1).
bool keeps_roles(const system::AlgorithmInfo& info, const std::vector<std::uint32_t>& moved) {
  const auto n = static_cast<std::uint32_t>(moved.size());
  bool identity = true;
  bool shift = info.symmetric_safe;
  bool flip = info.flip_safe;
  for (std::uint32_t p = 0; p < n; ++p) {
    identity = identity && moved[p] == p;
    shift = shift && (moved[p] + n - p) % n == moved[0];
    flip = flip && (moved[p] ^ p) == moved[0];
  }
  return identity || shift || flip;
}

// Everything about the run the checks need, gathered once.
class Finder {
 public:
  Finder(const Inputs& inputs, const network::Topology& topology) : in_(inputs), topology_(topology) {}

  bool foldable();
  bool keeps(std::size_t dim, const Folding::Move& move);

 private:
  // The group each string of g names (kNotAGroup if none); every graph's is found by foldable(),
  // so that the checks may run on several threads.
  const std::vector<std::int64_t>& groups_of_strings(const chakra::Graph& g);
  const std::vector<std::int64_t>& known_groups_of_strings(const chakra::Graph& g) const {
    return string_groups_.at(&g);
  }
  const system::AlgorithmInfo& group_algorithm(system::CollectiveKind kind) const {
    const auto& choices = in_.system.implementations[static_cast<std::size_t>(kind)];
    return system::algorithm_info(choices.size() == 1 ? choices.front().kind : system::AlgorithmChoice{}.kind);
  }
  bool world_keeps_roles(std::size_t dim, const Folding::Move& move) const;
  // group id -> its image under the move (0 when it has none); false if a collective's group
  // loses its algorithm's roles.
  bool map_groups(std::size_t dim, const Folding::Move& move, std::unordered_map<std::uint32_t, std::uint32_t>& image);
  bool same_trace(NpuId r, NpuId s, std::size_t dim, const Folding::Move& move,
                  const std::unordered_map<std::uint32_t, std::uint32_t>& image);

  const Inputs& in_;
  const network::Topology& topology_;
  bool world_kinds_[system::kCollectiveKinds] = {};
  std::map<std::uint32_t, std::vector<system::CollectiveKind>> group_kinds_;  // groups collectives run on
  std::optional<system::GroupImages> images_;
  std::unordered_map<const chakra::Graph*, std::vector<std::int64_t>> string_groups_;
};

const std::vector<std::int64_t>& Finder::groups_of_strings(const chakra::Graph& g) {
  auto [it, added] = string_groups_.try_emplace(&g);
  if (added) {
    for (std::uint32_t s = 0; s < g.string_count(); ++s) {
      const std::optional<std::uint32_t> group = workload::group_of(g.string(s));
      it->second.push_back(group ? static_cast<std::int64_t>(*group) : kNotAGroup);
    }
  }
  return it->second;
}

bool Finder::foldable() {
  // A backend that charges links orders the messages entering a link at the same time by the
  // global order of events, which moves do not keep (the NPUs are started in rank order): the
  // full run's own class members can then differ, and no folding can match all of them.
  const network::BackendInfo& backend = network::find_backend(in_.backend);
  if (!backend.shift_invariant || backend.has_links) return false;
  if (in_.system.collectives != system::CollectiveModel::kAstraSim) return false;
  if (in_.graphs.size() != topology_.npu_count() || in_.graphs.size() < 2) return false;
  for (const auto& prefix : in_.system.custom_prefixes) {
    if (!prefix.empty()) return false;
  }
  images_.emplace(in_.groups);
  const NpuId npus = topology_.npu_count();
  std::vector<const chakra::Graph*> seen;
  for (const auto& graph : in_.graphs) {
    const chakra::Graph& g = *graph;
    if (std::find(seen.begin(), seen.end(), &g) != seen.end()) continue;
    if (seen.size() < 64) seen.push_back(&g);
    const std::vector<std::int64_t>& groups = groups_of_strings(g);
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const chakra::OpAttrs& a = g.attrs(i);
      switch (g.type(i)) {
        case chakra::NodeType::kComp:
        case chakra::NodeType::kInvalid:
        case chakra::NodeType::kCommSend:
        case chakra::NodeType::kCommRecv: break;
        case chakra::NodeType::kMetadata:
          if (a.has(chakra::OpAttrs::kInputsValues)) return false;  // defines groups at run time
          break;
        case chakra::NodeType::kCommColl: {
          const auto kind = workload::collective_of(a.comm_type, in_.system.broadcast_by_duration);
          if (!kind) break;
          const std::int64_t group = groups[a.pg_name];
          if (group == kNotAGroup) return false;
          const auto listed = in_.groups.find(static_cast<std::uint32_t>(group));
          if (group == 0 || (listed != in_.groups.end() && listed->second.size() == npus)) {
            world_kinds_[static_cast<std::size_t>(*kind)] = true;
          } else if (listed == in_.groups.end()) {
            return false;  // the run reports it
          } else {
            auto& kinds = group_kinds_[static_cast<std::uint32_t>(group)];
            if (std::find(kinds.begin(), kinds.end(), *kind) == kinds.end()) kinds.push_back(*kind);
          }
          break;
        }
        default: return false;  // remote memory, unknown types
      }
    }
  }
  return true;
}

bool Finder::world_keeps_roles(std::size_t dim, const Folding::Move& move) const {
  const std::uint32_t n = topology_.npus_in(dim);
  std::vector<std::uint32_t> moved(n);
  for (std::uint32_t x = 0; x < n; ++x) {
    moved[x] = move.kind == Folding::MoveKind::kRotate ? (x + move.step) % n : x ^ move.mask;
  }
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    if (!world_kinds_[k]) continue;
    const auto& choices = in_.system.implementations[k];
    for (std::size_t d = 0; d < choices.size(); ++d) {
      // A one* ring spans every NPU by rank: a move of one dimension of several is no shift of it.
      if (choices[d].one_flat) {
        if (topology_.dims() > 1 || !keeps_roles(system::algorithm_info(choices[d].kind), moved)) return false;
        break;
      }
      if (d == dim && !keeps_roles(system::algorithm_info(choices[d].kind), moved)) return false;
    }
  }
  return true;
}

bool Finder::map_groups(std::size_t dim, const Folding::Move& move,
                        std::unordered_map<std::uint32_t, std::uint32_t>& image) {
  for (const auto& [id, members] : in_.groups) {
    auto move_npu = [&](NpuId npu) { return Folding::moved(topology_, dim, move, npu); };
    const std::optional<std::uint32_t> found = images_->image(id, move_npu);
    const auto used = group_kinds_.find(id);
    if (!found) {
      if (used != group_kinds_.end()) return false;
      image[id] = 0;  // no trace may name it then
      continue;
    }
    image[id] = *found;
    if (used == group_kinds_.end()) continue;
    // Ring positions: where each member's image stands in the image group's ring.
    const std::vector<NpuId>& target = in_.groups.at(*found);
    std::unordered_map<NpuId, std::uint32_t> position;
    for (std::uint32_t p = 0; p < target.size(); ++p) position[target[p]] = p;
    std::vector<std::uint32_t> positions;
    for (const NpuId m : members) positions.push_back(position.at(move_npu(m)));
    for (const system::CollectiveKind kind : used->second) {
      if (!keeps_roles(group_algorithm(kind), positions)) return false;
    }
  }
  return true;
}

bool Finder::same_trace(NpuId r, NpuId s, std::size_t dim, const Folding::Move& move,
                        const std::unordered_map<std::uint32_t, std::uint32_t>& image) {
  const chakra::Graph& g = *in_.graphs[r];
  const chakra::Graph& h = *in_.graphs[s];
  if (!g.same_structure(h)) return false;
  const std::vector<std::int64_t>& g_groups = known_groups_of_strings(g);
  const std::vector<std::int64_t>& h_groups = known_groups_of_strings(h);
  const auto npus = static_cast<std::int64_t>(topology_.npu_count());
  auto peer_moves = [&](std::int64_t a, std::int64_t b) {
    if (a < 0 || a >= npus) return a == b;  // the run reports it
    return static_cast<std::int64_t>(Folding::moved(topology_, dim, move, static_cast<NpuId>(a))) == b;
  };
  // Whether the group named by string k of g moves onto the one named by string k' of h.
  auto group_moves = [&](std::uint32_t k, std::uint32_t k2) {
    const std::int64_t ga = g_groups[k];
    const std::int64_t gb = h_groups[k2];
    if (ga == kNotAGroup || gb == kNotAGroup || ga == 0 || gb == 0) {
      return (ga == 0 && gb == 0) || g.string(k) == h.string(k2);
    }
    const auto moved = image.find(static_cast<std::uint32_t>(ga));
    return moved != image.end() && moved->second == static_cast<std::uint32_t>(gb);
  };
  // The same record (a shared pool's) names its group by the same string index in both: each
  // index is checked once.
  std::vector<std::int8_t> same_index_moves(std::min(g.string_count(), h.string_count()), -1);
  constexpr std::uint16_t kPeers = chakra::OpAttrs::kCommSrc | chakra::OpAttrs::kCommDst;
  // Fields that index per-graph tables or name ranks: a shared record may still differ in them.
  constexpr std::uint16_t kRelabelled =
      kPeers | chakra::OpAttrs::kPgName | chakra::OpAttrs::kInputsValues | chakra::OpAttrs::kShape;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    if (!g.has_attrs(i)) continue;
    const chakra::OpAttrs& a = g.attrs(i);
    const chakra::OpAttrs& b = h.attrs(i);
    if (&a == &b && (a.present & kRelabelled) == 0) continue;
    if (&a == &b && (a.present & kRelabelled) == chakra::OpAttrs::kPgName) {
      std::int8_t& known = same_index_moves[a.pg_name];
      if (known < 0) known = group_moves(a.pg_name, a.pg_name) ? 1 : 0;
      if (known == 0) return false;
      continue;
    }
    chakra::OpAttrs a_rest = a;
    chakra::OpAttrs b_rest = b;
    a_rest.comm_src = b_rest.comm_src = 0;
    a_rest.comm_dst = b_rest.comm_dst = 0;
    a_rest.pg_name = b_rest.pg_name = 0;
    a_rest.shape = b_rest.shape = 0;  // indexes into each graph's own table: compared by value
    if (!(a_rest == b_rest)) return false;
    if (a.has(chakra::OpAttrs::kShape) && g.shape(a.shape) != h.shape(b.shape)) return false;
    if (a.has(chakra::OpAttrs::kCommSrc) && !peer_moves(a.comm_src, b.comm_src)) return false;
    if (a.has(chakra::OpAttrs::kCommDst) && !peer_moves(a.comm_dst, b.comm_dst)) return false;
    if (a.has(chakra::OpAttrs::kPgName) && !group_moves(a.pg_name, b.pg_name)) return false;
  }
  return true;
}

bool Finder::keeps(std::size_t dim, const Folding::Move& move) {
  if (move.kind == Folding::MoveKind::kFlip && topology_.spec().dims[dim].kind != network::DimensionKind::kSwitch)
    return false;
  if (!world_keeps_roles(dim, move)) return false;
  std::unordered_map<std::uint32_t, std::uint32_t> image;
  if (!map_groups(dim, move, image)) return false;
  // Every rank's trace against its image's, on all cores; the first mismatch stops them all.
  const NpuId npus = topology_.npu_count();
  std::atomic<NpuId> next{0};
  std::atomic<bool> mismatch{false};
  auto work = [&] {
    constexpr NpuId kBatch = 16;
    for (NpuId begin = next.fetch_add(kBatch); begin < npus && !mismatch; begin = next.fetch_add(kBatch)) {
      for (NpuId r = begin; r < std::min(npus, begin + kBatch) && !mismatch; ++r) {
        if (!same_trace(r, Folding::moved(topology_, dim, move, r), dim, move, image)) mismatch = true;
      }
    }
  };
  {
    std::vector<std::jthread> helpers;
    const unsigned threads = std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), npus / 64 + 1);
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
  }
  return !mismatch;
}

}  // namespace

std::optional<Folding> find_rank_classes(const Inputs& inputs, const network::Topology& topology) {
  Finder finder(inputs, topology);
  if (!finder.foldable()) return std::nullopt;
  std::vector<Folding::Move> moves;
  for (std::size_t d = 0; d < topology.dims(); ++d) {
    const std::uint32_t n = topology.npus_in(d);
    Folding::Move rotate{Folding::MoveKind::kRotate, n, 0};
    for (std::uint32_t step = 1; step < n; ++step) {
      if (n % step == 0 && finder.keeps(d, {Folding::MoveKind::kRotate, step, 0})) {
        rotate.step = step;
        break;
      }
    }
    Folding::Move flip{Folding::MoveKind::kFlip, 0, 0};
    if (n > 2 && std::has_single_bit(n)) {
      for (std::uint32_t bit = 1; bit < n; bit <<= 1) {
        if (finder.keeps(d, {Folding::MoveKind::kFlip, 0, bit})) flip.mask |= bit;
      }
    }
    // Rotations by multiples of step join n / step coordinates; flips 2^bits.
    const std::uint32_t rotated = n / rotate.step;
    const std::uint32_t flipped = 1u << std::popcount(flip.mask);
    moves.push_back(flipped > rotated ? flip : rotate);
  }
  Folding folding(topology, std::move(moves));
  if (folding.class_count() == topology.npu_count()) return std::nullopt;
  return folding;
}

}  // namespace chakrasim::sim
