#include "system/nccl/traffic_shape.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"

namespace chakrasim::system::nccl {
namespace {

// NCCL pipelines a channel's step in 8 slices (NCCL_STEPS), each moving on as soon as it
// arrives, so that the hops of a path overlap: a ring's slices are rings of their own.
constexpr std::uint32_t kSlices = 8;
// Trees: 4 chunks of 512 KiB in flight per tree and direction (NCCL's tree chunk size).
constexpr std::uint32_t kTreeWindows = 4;
constexpr double kTreeChunkBytes = 512 * 1024;
// Staged forms: two lanes (one a tree), each a pipeline of its stages, each stage a stream that
// takes the lane's chunks of up to 1 MiB of the buffer in order.
constexpr std::uint32_t kStagedLanes = 2;
// Steps in flight per stage: NCCL's proxy keeps several sends posted on a connection, so that
// the network's latency does not leave the link idle between chunks. Under a max-min share the
// steps in flight end together, so the next stage's window must leave room for a stage's whole
// window behind it (kPipelineDepth = 4 windows).
constexpr std::uint32_t kStagedWindow = 4;
constexpr double kStagedChunkBytes = 1 << 20;
// A bound on the chunks a call is cut into, so that the messages (and the run's time) stop
// growing with the bytes: past it (2 GiB a staged call, 4 GiB a tree channel) the chunks grow
// instead. The pipeline then fills with a few chunks of 1/1024 of a lane: under 1% of the call.
constexpr double kMaxStagedChunksPerLane = 1024;
constexpr double kMaxTreeChunksPerWindow = 256;

// The members' indices node by node (NPU r in node r / gpus_per_node), in their order.
std::vector<std::vector<std::uint32_t>> members_by_node(const std::vector<NpuId>& members,
                                                        std::uint32_t gpus_per_node) {
  std::vector<std::vector<std::uint32_t>> by_node;
  std::map<NpuId, std::size_t> node_index;
  for (std::uint32_t i = 0; i < members.size(); ++i) {
    const auto [at, added] = node_index.try_emplace(members[i] / gpus_per_node, by_node.size());
    if (added) by_node.emplace_back();
    by_node[at->second].push_back(i);
  }
  return by_node;
}

// The place in its node (among the call's members there) of the j-th member channel c's ring
// visits in node k of `nodes`, each of `size` members. Channel c enters each node at another
// place, so that the hops out of a node are spread over its GPUs. Its hop between two nodes goes
// NIC to NIC on one rail, which no GPU's links carry: NCCL's ring leaves a node and enters the
// next through NICs of one rail, each reading or writing its GPU over PCIe. A rail here is a
// place, so the nodes take turns: the even ones run from place c up to c-1, the odd ones from c-1
// down to c. With an odd count of nodes (3 or more, of 3 or more members) the last two close the
// ring instead: from c-1 down to c+2 then c and c+1, and from c+1 up to c. Every hop between
// nodes then joins two members of one place.
std::size_t ring_place(std::uint32_t c, std::size_t k, std::size_t nodes, std::size_t size, std::size_t j) {
  const auto wrap = [size](std::int64_t place) {
    const auto s = static_cast<std::int64_t>(size);
    return static_cast<std::size_t>(((place % s) + s) % s);
  };
  const auto up = static_cast<std::int64_t>(j), from = static_cast<std::int64_t>(c);
  const bool odd_close = nodes % 2 == 1 && nodes >= 3 && size >= 3;
  if (odd_close && k == nodes - 2) {
    const auto last = static_cast<std::int64_t>(size) - 2;
    return up < last ? wrap(from - 1 - up) : wrap(from + up - last);
  }
  if (odd_close && k == nodes - 1) return wrap(from + 1 + up);
  return k % 2 == 0 ? wrap(from + up) : wrap(from - 1 - up);
}

// NCCL's double binary tree over `count` positions (src/graph/trees.cc, read to learn it): the
// first tree in order, a position's height its lowest set bit, its parent the position with
// the next bit set above it (or cleared, past the end), 0 the root with one child; the second the
// first mirrored (an even count) or shifted by one (odd), so that each position inner in one is
// a leaf in the other. Returns each position's parent, -1 for the root.
std::vector<std::int32_t> nccl_tree_parents(std::size_t count, bool second) {
  auto first_parent = [count](std::size_t p) -> std::int64_t {
    if (p == 0) return -1;
    const std::size_t low = p & (~p + 1);
    const std::size_t up = (p ^ low) | (low << 1);
    return static_cast<std::int64_t>(up < count ? up : p ^ low);
  };
  std::vector<std::int32_t> parent(count, -1);
  for (std::size_t p = 0; p < count; ++p) {
    std::int64_t up = 0;
    if (!second) {
      up = first_parent(p);
    } else if (count % 2 == 0) {  // mirrored
      up = first_parent(count - 1 - p);
      if (up >= 0) up = static_cast<std::int64_t>(count) - 1 - up;
    } else {  // shifted by one
      up = first_parent((p + count - 1) % count);
      if (up >= 0) up = (up + 1) % static_cast<std::int64_t>(count);
    }
    parent[p] = static_cast<std::int32_t>(up);
  }
  return parent;
}

std::uint32_t label_of(std::uint32_t lane, std::uint32_t index) { return (lane << kLabelIndexBits) | index; }

void ring_moves(const shape::Ring& r, std::uint32_t member, std::uint32_t stream, std::uint32_t step,
                std::vector<Move>& out) {
  const std::vector<std::uint32_t>& order = r.order[stream];
  const auto n = static_cast<std::uint32_t>(order.size());
  const std::uint32_t at = r.place[stream][member], shift = r.shift[step] % n;
  const double bytes = r.piece_bytes * r.blocks[step];
  const std::uint32_t label = label_of(stream, step);
  out.push_back({order[(at + n - shift) % n], bytes, false, label});
  out.push_back({order[(at + shift) % n], bytes, true, label});
}

void tree_moves(const shape::Tree& t, std::uint32_t member, std::uint32_t stream, std::uint32_t step,
                std::vector<Move>& out) {
  // Stream = (tree x kTreeWindows + window) x 2 + direction. Up: each chunk from the children,
  // then to the parent; down: from the parent, then to the children. The root has no parent: its
  // up stream sends each chunk back down to its children, and its down stream has nothing to do.
  const std::uint32_t tree = stream / 2 / kTreeWindows;
  const bool up = stream % 2 == 0, second = step % 2 == 1;
  const std::int32_t parent = t.parent[tree][member];
  const std::vector<std::uint32_t>& children = t.children[tree][member];
  // Both ends label a chunk by its lane (the up and down streams' pair), its number and its
  // direction: toward the root up, away from it (the root's turn included) down.
  const std::uint32_t chunk = step / 2;
  const std::uint32_t label = label_of(stream / 2, up && (!second || parent >= 0) ? 2 * chunk : 2 * chunk + 1);
  const auto above = static_cast<std::uint32_t>(parent);
  if (up && !second) {
    for (std::uint32_t c : children) out.push_back({c, t.piece_bytes, false, label});
  } else if (up && second) {
    if (parent >= 0) {
      out.push_back({above, t.piece_bytes, true, label});
    } else {
      for (std::uint32_t c : children) out.push_back({c, t.piece_bytes, true, label});
    }
  } else if (parent >= 0 && !second) {
    out.push_back({above, t.piece_bytes, false, label});
  } else if (parent >= 0) {
    for (std::uint32_t c : children) out.push_back({c, t.piece_bytes, true, label});
  }
}

void staged_moves(const shape::Staged& s, std::uint32_t member, std::uint32_t stream, std::uint32_t chunk,
                  std::vector<Move>& out) {
  using Stage = shape::Staged::Stage;
  // Stream = lane x stages + stage; each lane's chunks cross one of the two trees.
  const auto stages = static_cast<std::uint32_t>(s.stages.size());
  const std::uint32_t lane = stream / stages, first = lane * stages;
  const Stage stage = s.stages[stream % stages];
  const std::uint32_t node = s.node_of[member], local = s.local_of[member];
  const auto n = static_cast<std::uint32_t>(s.by_node.size()), g = static_cast<std::uint32_t>(s.by_node[node].size());
  const std::uint32_t label = label_of(stream, chunk);
  auto exchange = [&out, label](std::uint32_t peer, double bytes) {
    out.push_back({peer, bytes, false, label});
    out.push_back({peer, bytes, true, label});
  };
  // A tree's messages are labelled by the stage that receives them: up by kTreeFromChildren (the
  // lane's 2nd stage), down by kTreeFromParent (its 4th).
  const std::uint32_t up_label = label_of(first + 1, chunk), down_label = label_of(first + 3, chunk);
  const std::size_t tree = lane % 2;
  const std::int32_t parent = s.node_parent[tree][node];
  auto same_place = [&s, local](std::size_t k) { return s.by_node[k][local]; };
  // Exchanges go round from the next member on, so that no member is everyone's first.
  switch (stage) {
    case Stage::kNodeExchange:
      for (std::uint32_t j = 1; j < g; ++j) exchange(s.by_node[node][(local + j) % g], s.node_piece_bytes);
      break;
    case Stage::kNetExchange:
      for (std::uint32_t k = 1; k < n; ++k) exchange(same_place((node + k) % n), s.net_piece_bytes);
      break;
    case Stage::kTreeFromChildren:
      for (std::uint32_t k : s.node_children[tree][node]) {
        out.push_back({same_place(k), s.tree_piece_bytes, false, up_label});
      }
      break;
    case Stage::kTreeToParent:
      if (parent >= 0) {
        out.push_back({same_place(static_cast<std::size_t>(parent)), s.tree_piece_bytes, true, up_label});
      }
      break;
    case Stage::kTreeFromParent:
      if (parent >= 0) {
        out.push_back({same_place(static_cast<std::size_t>(parent)), s.tree_piece_bytes, false, down_label});
      }
      break;
    case Stage::kTreeToChildren:
      for (std::uint32_t k : s.node_children[tree][node]) {
        out.push_back({same_place(k), s.tree_piece_bytes, true, down_label});
      }
      break;
  }
}

}  // namespace

TrafficShape TrafficShape::ring(Collective collective, double bytes, const std::vector<NpuId>& members,
                                std::uint32_t gpus_per_node, std::uint32_t channels) {
  const auto n = static_cast<std::uint32_t>(members.size());
  const bool all_reduce = collective == Collective::kAllReduce;
  const bool rooted = collective == Collective::kBroadcast || collective == Collective::kReduce;
  const std::uint32_t streams = channels * kSlices;
  if (streams > kMaxTrafficStreams) fail("internal error: {} ring streams, more than {}", streams, kMaxTrafficStreams);
  shape::Ring r;
  const std::uint32_t steps = all_reduce ? 2 * (n - 1) : n - 1;
  r.shift.assign(steps, 1);
  r.blocks.assign(steps, 1);
  r.piece_bytes = (rooted ? bytes / (n - 1) : bytes / n) / streams;
  const std::vector<std::vector<std::uint32_t>> by_node = members_by_node(members, gpus_per_node);
  r.order.assign(streams, {});
  r.place.assign(streams, std::vector<std::uint32_t>(n));
  for (std::uint32_t s = 0; s < streams; ++s) {
    const std::uint32_t c = s / kSlices;
    for (std::size_t k = 0; k < by_node.size(); ++k) {
      const std::vector<std::uint32_t>& node = by_node[k];
      for (std::size_t j = 0; j < node.size(); ++j) {
        const std::uint32_t i = node[ring_place(c, k, by_node.size(), node.size(), j)];
        r.place[s][i] = static_cast<std::uint32_t>(r.order[s].size());
        r.order[s].push_back(i);
      }
    }
  }
  TrafficShape out;
  out.shape_ = std::move(r);
  return out;
}

TrafficShape TrafficShape::pat(Collective collective, double bytes, std::uint32_t members) {
  const std::uint32_t n = members;
  std::uint32_t levels = 0;  // ceil(log2 n)
  while ((std::uint64_t{1} << levels) < n) ++levels;
  shape::Ring r;
  r.piece_bytes = bytes / n / kSlices;  // a block is a member's share of the buffer
  // Bruck's block counts (min(2^j, n - 2^j) at the j-th doubling, n - 1 in all), the all-gather
  // sending them over halving distances: the farthest peer first, with the fewest blocks.
  for (std::uint32_t j = 0; j < levels; ++j) {
    r.shift.push_back(1u << (levels - 1 - j));
    r.blocks.push_back(std::min(1u << j, n - (1u << j)));
  }
  if (collective == Collective::kReduceScatter) {
    std::reverse(r.shift.begin(), r.shift.end());
    std::reverse(r.blocks.begin(), r.blocks.end());
  }
  std::vector<std::uint32_t> identity(n);
  for (std::uint32_t i = 0; i < n; ++i) identity[i] = i;
  r.order.assign(kSlices, identity);
  r.place.assign(kSlices, identity);
  TrafficShape out;
  out.shape_ = std::move(r);
  return out;
}

TrafficShape TrafficShape::tree(double bytes, const std::vector<NpuId>& members, std::uint32_t gpus_per_node,
                                std::uint32_t channels) {
  const std::uint32_t streams = 2 * channels * kTreeWindows * 2;
  if (streams > kMaxTrafficStreams) fail("internal error: {} tree streams, more than {}", streams, kMaxTrafficStreams);
  shape::Tree t;
  // Half the buffer a tree, in chunks of NCCL's 512 KiB (fewer for small calls).
  const double per_window =
      std::clamp(std::ceil(bytes / 2 / channels / kTreeChunkBytes / kTreeWindows), 1.0, kMaxTreeChunksPerWindow);
  t.steps = static_cast<std::uint32_t>(2 * per_window);
  t.piece_bytes = bytes / 2 / channels / (per_window * kTreeWindows);
  const std::vector<std::vector<std::uint32_t>> by_node = members_by_node(members, gpus_per_node);
  const std::size_t nodes = by_node.size();
  t.parent.assign(2 * channels, std::vector<std::int32_t>(members.size(), -1));
  t.children.assign(2 * channels, std::vector<std::vector<std::uint32_t>>(members.size()));
  // Channel c's chains start at each node's c-th member, whose NIC then carries the channel.
  for (std::size_t k = 0; k < 2 * channels; ++k) {
    const std::size_t c = k / 2;
    auto link = [&t, k](std::uint32_t up, std::uint32_t down) {
      t.parent[k][down] = static_cast<std::int32_t>(up);
      t.children[k][up].push_back(down);
    };
    auto member = [&by_node, c](std::size_t node, std::size_t j) {
      const std::vector<std::uint32_t>& chain = by_node[node];
      return chain[(j + c) % chain.size()];
    };
    for (std::size_t node = 0; node < nodes; ++node) {
      for (std::size_t j = 1; j < by_node[node].size(); ++j) link(member(node, j - 1), member(node, j));
    }
    const std::vector<std::int32_t> heads = nccl_tree_parents(nodes, k % 2 == 1);
    for (std::size_t node = 0; node < nodes; ++node) {
      if (heads[node] >= 0) link(member(static_cast<std::size_t>(heads[node]), 0), member(node, 0));
    }
  }
  TrafficShape out;
  out.shape_ = std::move(t);
  return out;
}

TrafficShape TrafficShape::exchange(double piece_bytes, std::uint32_t members) {
  TrafficShape out;
  out.shape_ = shape::Exchange{members, piece_bytes};
  return out;
}

namespace {

// A staged form's members by node and place, its stages, its two trees over the nodes, and its
// chunks of `bytes` (two lanes of up to kStagedChunkBytes a chunk); the pieces are the caller's.
shape::Staged staged_frame(double bytes, const std::vector<NpuId>& members, std::uint32_t gpus_per_node,
                           std::vector<shape::Staged::Stage> stages) {
  shape::Staged s;
  s.by_node = members_by_node(members, gpus_per_node);
  const std::size_t per_node = s.by_node.front().size(), nodes = s.by_node.size();
  s.node_of.resize(members.size());
  s.local_of.resize(members.size());
  for (std::size_t k = 0; k < nodes; ++k) {
    if (s.by_node[k].size() != per_node) {
      fail("internal error: a staged NCCL call over nodes of {} and {} members", per_node, s.by_node[k].size());
    }
    for (std::size_t j = 0; j < per_node; ++j) {
      s.node_of[s.by_node[k][j]] = static_cast<std::uint32_t>(k);
      s.local_of[s.by_node[k][j]] = static_cast<std::uint32_t>(j);
    }
  }
  s.stages = std::move(stages);
  for (std::size_t t = 0; t < 2; ++t) {
    s.node_parent[t] = nccl_tree_parents(nodes, t == 1);
    s.node_children[t].assign(nodes, {});
    for (std::size_t k = 0; k < nodes; ++k) {
      if (s.node_parent[t][k] >= 0) {
        s.node_children[t][static_cast<std::size_t>(s.node_parent[t][k])].push_back(static_cast<std::uint32_t>(k));
      }
    }
  }
  s.chunks_per_lane = static_cast<std::uint32_t>(
      std::clamp(std::ceil(bytes / kStagedLanes / kStagedChunkBytes), 1.0, kMaxStagedChunksPerLane));
  return s;
}

}  // namespace

TrafficShape TrafficShape::staged(double bytes, const std::vector<NpuId>& members, std::uint32_t gpus_per_node,
                                  bool in_switch, bool by_trees) {
  using Stage = shape::Staged::Stage;
  std::vector<Stage> stages{Stage::kNodeExchange};
  if (by_trees) {
    stages.insert(stages.end(),
                  {Stage::kTreeFromChildren, Stage::kTreeToParent, Stage::kTreeFromParent, Stage::kTreeToChildren});
  } else {
    stages.push_back(Stage::kNetExchange);
  }
  stages.push_back(Stage::kNodeExchange);
  shape::Staged s = staged_frame(bytes, members, gpus_per_node, std::move(stages));
  const double chunk = bytes / (kStagedLanes * s.chunks_per_lane);
  const auto g = static_cast<double>(s.by_node.front().size()), n = static_cast<double>(s.by_node.size());
  const double share = chunk / g;  // what each GPU of a node holds of a chunk, reduced
  // NVLS: a GPU sends the chunk to the switch and receives its share reduced, then sends its
  // share and receives the chunk: chunk x (1 + 1/G) each way over the two stages, drawn as an
  // exchange with each other GPU of the node. A direct exchange: each other GPU's share.
  if (g > 1) s.node_piece_bytes = in_switch ? chunk * (1 + 1 / g) / 2 / (g - 1) : share;
  if (n > 1) s.net_piece_bytes = share / (n - 1);
  s.tree_piece_bytes = share;
  TrafficShape out;
  out.shape_ = std::move(s);
  return out;
}

TrafficShape TrafficShape::relayed_all_to_all(double bytes, const std::vector<NpuId>& members,
                                              std::uint32_t gpus_per_node) {
  using Stage = shape::Staged::Stage;
  shape::Staged s = staged_frame(bytes, members, gpus_per_node, {Stage::kNodeExchange, Stage::kNetExchange});
  const double chunk = bytes / (kStagedLanes * s.chunks_per_lane);
  const auto g = static_cast<double>(s.by_node.front().size()), n = static_cast<double>(s.by_node.size());
  const double piece = chunk / (g * n);  // a chunk's piece for one member
  // To the GPU of place j in its node, a GPU sends its piece for that GPU and those for place j
  // of every other node (N pieces); that GPU sends each other node's place j the pieces of its
  // node's G GPUs.
  s.node_piece_bytes = piece * n;
  s.net_piece_bytes = piece * g;
  TrafficShape out;
  out.shape_ = std::move(s);
  return out;
}

std::uint32_t TrafficShape::streams() const {
  struct Visit {
    std::uint32_t operator()(const shape::Ring& r) const { return static_cast<std::uint32_t>(r.order.size()); }
    std::uint32_t operator()(const shape::Tree& t) const {
      return static_cast<std::uint32_t>(t.parent.size()) * kTreeWindows * 2;
    }
    std::uint32_t operator()(const shape::Exchange&) const { return 1; }
    std::uint32_t operator()(const shape::Staged& s) const {
      return kStagedLanes * static_cast<std::uint32_t>(s.stages.size());
    }
  };
  return std::visit(Visit{}, shape_);
}

std::uint32_t TrafficShape::steps() const {
  struct Visit {
    std::uint32_t operator()(const shape::Ring& r) const { return static_cast<std::uint32_t>(r.shift.size()); }
    std::uint32_t operator()(const shape::Tree& t) const { return t.steps; }
    std::uint32_t operator()(const shape::Exchange&) const { return 1; }
    std::uint32_t operator()(const shape::Staged& s) const { return s.chunks_per_lane; }
  };
  return std::visit(Visit{}, shape_);
}

std::int32_t TrafficShape::before(std::uint32_t stream) const {
  const auto* s = std::get_if<shape::Staged>(&shape_);
  if (s == nullptr || stream % s->stages.size() == 0) return -1;
  return static_cast<std::int32_t>(stream) - 1;
}

std::int32_t TrafficShape::after(std::uint32_t stream) const {
  const auto* s = std::get_if<shape::Staged>(&shape_);
  if (s == nullptr || stream % s->stages.size() == s->stages.size() - 1) return -1;
  return static_cast<std::int32_t>(stream) + 1;
}

std::uint32_t TrafficShape::window() const { return std::holds_alternative<shape::Staged>(shape_) ? kStagedWindow : 1; }

void TrafficShape::moves(std::uint32_t member, std::uint32_t stream, std::uint32_t step, std::vector<Move>& out) const {
  if (const auto* r = std::get_if<shape::Ring>(&shape_)) {
    ring_moves(*r, member, stream, step, out);
  } else if (const auto* t = std::get_if<shape::Tree>(&shape_)) {
    tree_moves(*t, member, stream, step, out);
  } else if (const auto* s = std::get_if<shape::Staged>(&shape_)) {
    staged_moves(*s, member, stream, step, out);
  } else {
    const auto& e = std::get<shape::Exchange>(shape_);
    // Round from the next member on, so that no member is everyone's first.
    for (std::uint32_t j = 1; j < e.members; ++j) {
      const std::uint32_t peer = (member + j) % e.members;
      out.push_back({peer, e.piece_bytes, false, label_of(stream, step)});
      out.push_back({peer, e.piece_bytes, true, label_of(stream, step)});
    }
  }
}

}  // namespace chakrasim::system::nccl
