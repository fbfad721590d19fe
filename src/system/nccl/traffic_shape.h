// What every member of one NCCL call does when the call runs as traffic (nccl_collectives.h):
// the streams it keeps in flight and, per stream and step, the pieces it sends to and receives
// from which members. A description only: nccl_collectives posts the moves on the system layer,
// charges them NCCL's efficiencies and tags them with the stream and the move's label.
//
// The forms, each as NCCL moves its bytes:
//  * Ring (Ring; PAT): per stream a ring through the members, node by node; at step k a member
//    sends blocks[k] pieces to the member shift[k] places ahead and receives as many from the one
//    as far behind. A ring's steps all move one piece one place; PAT's move more pieces further.
//  * Tree (Tree): NCCL's two trees a channel, a chain through each node under a binary tree over
//    the nodes; chunks go up and come down on streams of their own.
//  * Exchange (NVLS inside a node, all-to-all): one step, a piece to and from every other member.
//  * Relayed all-to-all (all-to-all across nodes with NCCL's PXN): an exchange inside the node
//    to the GPU on each destination's rail, then one between the GPUs of a rail.
//  * Staged (NVLS-tree, CollNet, NVLS across nodes): per chunk, a reduce-scatter inside the node
//    (each GPU then holds its share of the chunk), the shares reduced across nodes, by the
//    network (CollNet, NVLS with SHARP switches) or by two trees over the nodes (NVLS-tree), and
//    an all-gather inside the node. Each stage is a stream that takes the chunks in order, a
//    pipeline (before / after) as NCCL's warps for each role are, so that while one chunk
//    crosses the nodes the next is reduced in the node. (Streams that each took a chunk through
//    every stage would, under a max-min fair share, move in lockstep and never overlap.)
#pragma once

#include <array>
#include <cstdint>
#include <variant>
#include <vector>

#include "core/types.h"
#include "system/nccl/nccl_types.h"

namespace chakrasim::system::nccl {

// The streams one member may keep in flight (8 bits of nccl_collectives' tokens), and a
// message's label: its lane (the stream; a tree's pair of streams) above 21 bits of its number
// in the lane, 29 bits in all.
inline constexpr std::uint32_t kMaxTrafficStreams = 256;
inline constexpr std::uint32_t kLabelIndexBits = 21, kLabelBits = 29;
// How far a pipeline's stage may run ahead of the next: NCCL's 8 buffers a connection
// (NCCL_STEPS).
inline constexpr std::uint32_t kPipelineDepth = 16;

// One send or receive of a member's step.
struct Move {
  std::uint32_t peer = 0;  // the other member, by index
  double bytes = 0;        // before NCCL's efficiencies
  bool send = false;
  std::uint32_t label = 0;  // the two ends of a message label it alike, apart from the call's others
};

// The forms' data (the header comment says what each does).
namespace shape {

struct Ring {
  std::vector<std::vector<std::uint32_t>> order;  // per stream: member indices in ring order
  std::vector<std::vector<std::uint32_t>> place;  // per stream, per member: its place in `order`
  std::vector<std::uint32_t> shift, blocks;       // per step
  double piece_bytes = 0;
};
struct Tree {
  // Per tree (two a channel), per member: its parent (-1: the root) and its children.
  std::vector<std::vector<std::int32_t>> parent;
  std::vector<std::vector<std::vector<std::uint32_t>>> children;
  std::uint32_t steps = 0;  // 2 per chunk of a window
  double piece_bytes = 0;
};
struct Exchange {
  std::uint32_t members = 0;
  double piece_bytes = 0;
};
struct Staged {
  enum class Stage : std::uint8_t {
    kNodeExchange,      // with every other member of the node
    kNetExchange,       // with the member of the same place in every other node
    kTreeFromChildren,  // the share's tree over the nodes, toward the root...
    kTreeToParent,
    kTreeFromParent,  // ...and back
    kTreeToChildren,
  };
  std::vector<Stage> stages;
  std::vector<std::vector<std::uint32_t>> by_node;  // member indices node by node
  std::vector<std::uint32_t> node_of, local_of;     // per member: its node, its place there
  // Two trees over the nodes (a lane each): parent (-1: root), children.
  std::array<std::vector<std::int32_t>, 2> node_parent;
  std::array<std::vector<std::vector<std::uint32_t>>, 2> node_children;
  std::uint32_t chunks_per_lane = 1;
  double node_piece_bytes = 0, net_piece_bytes = 0, tree_piece_bytes = 0;
};

}  // namespace shape

class TrafficShape {
 public:
  // NCCL's ring for `collective` of `bytes` (nccl-tests' size): `channels` rings, each entering
  // every node at another member and crossing between nodes on one rail (traffic_shape.cc's
  // ring_place), each in NCCL's 8 slices.
  static TrafficShape ring(Collective collective, double bytes, const std::vector<NpuId>& members,
                           std::uint32_t gpus_per_node, std::uint32_t channels);
  // PAT's all-gather or reduce-scatter (one GPU a node) in NCCL's 8 slices: log2 steps, the
  // farthest peer first with one block, each step half as far with twice the blocks (the
  // reduce-scatter in the reverse order).
  static TrafficShape pat(Collective collective, double bytes, std::uint32_t members);
  // NCCL's two trees a channel, an all-reduce of `bytes` in 512 KiB chunks.
  static TrafficShape tree(double bytes, const std::vector<NpuId>& members, std::uint32_t gpus_per_node,
                           std::uint32_t channels);
  // One exchange: `piece_bytes` to and from every other member.
  static TrafficShape exchange(double piece_bytes, std::uint32_t members);
  // An all-reduce of `bytes` in stages; every node must hold as many members. `in_switch`: the
  // node's reduce-scatter and all-gather are NVLS's (each GPU sends the chunk and receives its
  // share, then the reverse), else a direct exchange of shares; `by_trees`: the shares cross
  // the nodes by NVLS-tree's two trees, else the network reduces them (one exchange with the
  // same GPU of every other node, which loads each NIC as SHARP does: the share out and in).
  static TrafficShape staged(double bytes, const std::vector<NpuId>& members, std::uint32_t gpus_per_node,
                             bool in_switch, bool by_trees);
  // An all-to-all of `bytes` (a member's buffer, a piece for each member) through PXN: each
  // piece for another node crosses first to the GPU of its destination's place in the sender's
  // node, which sends it, with its node's others for that destination, over its own NIC; the
  // network sees only traffic between GPUs of the same place (a rail). Nodes of equal
  // membership; the same two stages as a pipeline.
  static TrafficShape relayed_all_to_all(double bytes, const std::vector<NpuId>& members, std::uint32_t gpus_per_node);

  std::uint32_t streams() const;
  std::uint32_t steps() const;  // per stream; below 2^kLabelIndexBits (nccl_collectives checks)
  // Streams that go in step, as a pipeline's stages: stream s runs step k once before(s) has done
  // its step k, and while after(s) has done more than k - kPipelineDepth steps. -1: none.
  std::int32_t before(std::uint32_t stream) const;
  std::int32_t after(std::uint32_t stream) const;
  // Steps a stream keeps in flight, each started once the one `window` before it is done: a
  // pipeline's stages kPipelineDepth (NCCL's proxy keeps as many sends posted), others 1.
  std::uint32_t window() const;
  // Appends member `member`'s moves at `step` of `stream` to `out`.
  void moves(std::uint32_t member, std::uint32_t stream, std::uint32_t step, std::vector<Move>& out) const;

 private:
  std::variant<shape::Ring, shape::Tree, shape::Exchange, shape::Staged> shape_;
};

}  // namespace chakrasim::system::nccl
