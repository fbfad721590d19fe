// The double binary tree all-reduce ("doubleBinaryTree") as a state machine, step for step the
// reference's DoubleBinaryTreeAllReduce (docs/astra-sim-model.md §5). It runs an all-reduce of
// the whole phase data c whatever the phase's kind, so its data keeps its size.
//
// The trees, over ring positions 0..n-1 (n a power of two; the planner checks): a root with a
// single child, the top of a perfect binary tree of the other n-1 positions numbered in order.
// The max-root tree has position n-1 as root; the min-root tree has position 0. The two trees
// are not split within a chunk: successive chunks (successive phases on the dimension, per NPU
// and collective kind) alternate between them, the max-root tree first.
//
// Every node moves the full c: a leaf pays E, sends c to its parent and waits; an inner node
// reduces each child's c (E + P), sends up once both are done, reduces the parent's answer
// (E + P) and sends it to both children; the root reduces its child's c and sends it back.
// A leaf ends after a last E; inner nodes and the root end when they have sent. Without
// contention, with depth d = log2 n and T the network time of c between tree neighbours:
//   2E + 2d T(c) + (2d - 1)(E + P(c))      n = 8: 2E + 6T + 5(E + P) = 434821 on FC8, 1 MiB
//
// Same Io as RingState (ring.h): bundle(reduce, bytes), send(dst, bytes), receive(src, bytes),
// finish().
#pragma once

#include <bit>
#include <cstdint>

#include "core/types.h"
#include "system/ring_layout.h"

namespace chakrasim::system {

// This position's neighbours in one of the two trees over n positions (n a power of two).
struct TreeNode {
  static constexpr std::uint32_t kNone = ~0u;
  std::uint32_t parent = kNone;
  std::uint32_t left = kNone;
  std::uint32_t right = kNone;
};

inline TreeNode tree_node(std::uint32_t n, std::uint32_t position, bool min_root) {
  // The perfect tree of the n-1 non-root positions starts at `first`; its in-order rank r
  // (1-based) has height h = trailing zeros of r, children r -/+ 2^(h-1), and is a left child
  // exactly when bit h+1 of r is clear.
  const std::uint32_t root = min_root ? 0 : n - 1;
  const std::uint32_t first = min_root ? 1 : 0;
  const std::uint32_t top = first + n / 2 - 1;
  TreeNode node;
  if (position == root) {
    (min_root ? node.right : node.left) = top;
    return node;
  }
  const std::uint32_t r = position - first + 1;
  const std::uint32_t h = static_cast<std::uint32_t>(std::countr_zero(r));
  if (h > 0) {
    node.left = position - (1u << (h - 1));
    node.right = position + (1u << (h - 1));
  }
  if (position == top) {
    node.parent = root;
  } else {
    node.parent = ((r >> (h + 1)) & 1u) == 0 ? position + (1u << h) : position - (1u << h);
  }
  return node;
}

struct DoubleBinaryTreeState {
  enum class Role : std::uint8_t { kLeaf, kInner, kRoot };
  // The reference's states, in its names.
  enum class Step : std::uint8_t {
    kBegin,
    kWaitingForTwoChildren,
    kWaitingForOneChild,
    kSendingToParent,
    kWaitingForParent,
    kSendingToChildren,
    kEnd
  };

  std::uint64_t bytes = 0;
  NpuId parent = 0;
  NpuId left = 0;  // the root's only child is here
  NpuId right = 0;
  Role role = Role::kLeaf;
  Step step = Step::kBegin;
  bool first_reduction_done = false;  // the reference's `reductions` counter

  void configure(std::uint64_t phase_bytes, const RingLayout& ring, bool min_root) {
    bytes = phase_bytes;
    const TreeNode node = tree_node(ring.size, ring.index, min_root);
    if (node.parent == TreeNode::kNone) {
      role = Role::kRoot;
      left = ring.npu_at(node.left != TreeNode::kNone ? node.left : node.right);
    } else {
      parent = ring.npu_at(node.parent);
      role = node.left == TreeNode::kNone ? Role::kLeaf : Role::kInner;
      if (role == Role::kInner) {
        left = ring.npu_at(node.left);
        right = ring.npu_at(node.right);
      }
    }
  }

  template <class Io>
  void start(Io& io) {
    switch (role) {
      case Role::kLeaf:
        step = Step::kSendingToParent;
        io.bundle(false, bytes);
        return;
      case Role::kInner:
        // The step is set before the receives: either may complete at once.
        step = Step::kWaitingForTwoChildren;
        io.receive(left, bytes);
        io.receive(right, bytes);
        return;
      case Role::kRoot:
        step = Step::kWaitingForOneChild;
        io.receive(left, bytes);
        return;
    }
  }

  template <class Io>
  void on_receive(Io& io) {
    switch (role) {
      case Role::kLeaf:
        if (step == Step::kWaitingForParent) {
          step = Step::kEnd;
          io.bundle(false, bytes);
        }
        return;
      case Role::kInner:
        if (step == Step::kWaitingForTwoChildren) {
          step = Step::kWaitingForOneChild;
          io.bundle(true, bytes);
        } else if (step == Step::kWaitingForOneChild) {
          step = Step::kSendingToParent;
          io.bundle(true, bytes);
        } else if (step == Step::kWaitingForParent) {
          step = Step::kSendingToChildren;
          io.bundle(true, bytes);
        }
        return;
      case Role::kRoot:
        if (step == Step::kWaitingForOneChild) {
          step = Step::kSendingToChildren;
          io.bundle(true, bytes);
        }
        return;
    }
  }

  template <class Io>
  void on_step_ready(Io& io) {
    switch (role) {
      case Role::kLeaf:
        if (step == Step::kSendingToParent) {
          step = Step::kWaitingForParent;
          io.send(parent, bytes);
          io.receive(parent, bytes);
        } else if (step == Step::kEnd) {
          io.finish();
        }
        return;
      case Role::kInner:
        // The first child's reduction only counts; the second one sends up.
        if (!first_reduction_done) {
          first_reduction_done = true;
        } else if (step == Step::kSendingToParent) {
          step = Step::kWaitingForParent;
          io.send(parent, bytes);
          io.receive(parent, bytes);
        } else if (step == Step::kSendingToChildren) {
          io.send(left, bytes);
          io.send(right, bytes);
          io.finish();
        }
        return;
      case Role::kRoot:
        if (step == Step::kSendingToChildren) {
          io.send(left, bytes);
          io.finish();
        }
        return;
    }
  }
};

}  // namespace chakrasim::system
