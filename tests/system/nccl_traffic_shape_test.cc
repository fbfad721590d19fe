// The shapes NCCL calls take as traffic (system/nccl/traffic_shape.h): every send a member makes
// meets one receive its peer posts with the same label and bytes, and each form moves the bytes
// NCCL's algorithm moves (derivations above each assertion).
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "system/nccl/traffic_shape.h"

namespace chakrasim::system::nccl {
namespace {

constexpr double kMiB = 1 << 20;

std::vector<NpuId> first_npus(std::uint32_t n) {
  std::vector<NpuId> out(n);
  for (std::uint32_t i = 0; i < n; ++i) out[i] = i;
  return out;
}

// Every member's moves over all streams and steps, paired: a send of (from, to, label) must meet
// a receive of the same bytes at `to` from `from`, once. Returns each member's bytes sent to
// members of its own node (first) and of others (second), `gpus_per_node` apart.
std::vector<std::pair<double, double>> sent_bytes(const TrafficShape& shape, std::uint32_t members,
                                                  std::uint32_t gpus_per_node) {
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<double>> sends, receives;
  std::vector<std::pair<double, double>> sent(members);
  std::vector<Move> moves;
  for (std::uint32_t m = 0; m < members; ++m) {
    for (std::uint32_t stream = 0; stream < shape.streams(); ++stream) {
      for (std::uint32_t step = 0; step < shape.steps(); ++step) {
        moves.clear();
        shape.moves(m, stream, step, moves);
        for (const Move& move : moves) {
          EXPECT_NE(move.peer, m);
          EXPECT_LT(move.label, 1u << kLabelBits);
          if (move.send) {
            sends[{m, move.peer, move.label}].push_back(move.bytes);
            (m / gpus_per_node == move.peer / gpus_per_node ? sent[m].first : sent[m].second) += move.bytes;
          } else {
            receives[{move.peer, m, move.label}].push_back(move.bytes);
          }
        }
      }
    }
  }
  EXPECT_EQ(sends, receives);
  for (const auto& [key, bytes] : sends) EXPECT_EQ(bytes.size(), 1u) << "a label used twice on one pair";
  return sent;
}

TEST(NcclTrafficShape, ARingMovesTheBusFactorOfTheBuffer) {
  // An all-reduce's ring sends 2(n-1)/n of the buffer from every member, an all-gather's (n-1)/n
  // of its output; a broadcast's pipeline the buffer once. 2 nodes of 8, 8 channels.
  const double b = 64 * kMiB;
  for (const auto& [c, factor] : std::vector<std::pair<Collective, double>>{{Collective::kAllReduce, 2.0 * 15 / 16},
                                                                            {Collective::kAllGather, 15.0 / 16},
                                                                            {Collective::kBroadcast, 1}}) {
    const TrafficShape ring = TrafficShape::ring(c, b, first_npus(16), 8, 8);
    EXPECT_EQ(ring.streams(), 64u);
    for (const auto& [node, net] : sent_bytes(ring, 16, 8)) EXPECT_NEAR(node + net, factor * b, 1e-6 * b);
  }
}

// Per stream, each member's peer at a ring's first step: the ring's order, read from its moves,
// which must be one cycle through every member.
std::vector<std::vector<std::uint32_t>> ring_successors(const TrafficShape& ring, std::uint32_t members) {
  std::vector<std::vector<std::uint32_t>> next(ring.streams(), std::vector<std::uint32_t>(members, members));
  std::vector<Move> moves;
  for (std::uint32_t m = 0; m < members; ++m) {
    for (std::uint32_t stream = 0; stream < ring.streams(); ++stream) {
      moves.clear();
      ring.moves(m, stream, 0, moves);
      for (const Move& move : moves) {
        if (move.send) next[stream][m] = move.peer;
      }
    }
  }
  for (std::uint32_t stream = 0; stream < ring.streams(); ++stream) {
    std::uint32_t at = 0;
    for (std::uint32_t hop = 0; hop < members; ++hop) {
      at = next[stream][at];
      if (at >= members) {
        ADD_FAILURE() << "a member sends to no one in stream " << stream;
        return next;
      }
      EXPECT_TRUE(hop == members - 1 ? at == 0 : at != 0) << "not one cycle through all " << members;
    }
  }
  return next;
}

TEST(NcclTrafficShape, ARingCrossesBetweenNodesOnOneRail) {
  // NCCL's ring leaves a node and enters the next by NICs of one rail, so its hop between nodes
  // loads no GPU's links: each channel's hop joins the members of one place in their nodes, and a
  // member's links carry 7 of the 8 hops a ring makes in its node. With an odd count of nodes the
  // last two close the ring on the rails too; with 2 members a node they cannot, and the hop back
  // to the first node changes rail once. Each channel enters a node at another member, so that
  // every member of every node leaves it in as many channels. And each stream's order is one
  // cycle through every member.
  struct Case {
    std::uint32_t nodes, gpus, channels, off_rail;
  };
  for (const Case& k : std::vector<Case>{{2, 8, 8, 0},
                                         {3, 8, 8, 0},
                                         {4, 8, 8, 0},
                                         {5, 8, 8, 0},
                                         {3, 4, 4, 0},
                                         {3, 2, 2, 1},
                                         {5, 3, 3, 0}}) {
    const std::uint32_t n = k.nodes * k.gpus;
    const TrafficShape ring = TrafficShape::ring(Collective::kAllGather, 64 * kMiB, first_npus(n), k.gpus, k.channels);
    const auto next = ring_successors(ring, n);
    std::vector<std::uint32_t> exits(n, 0);
    for (std::uint32_t stream = 0; stream < ring.streams(); ++stream) {
      std::uint32_t off_rail = 0;
      for (std::uint32_t at = 0; at < n; ++at) {
        const std::uint32_t to = next[stream][at];
        if (to / k.gpus != at / k.gpus) {
          ++exits[at];
          if (to % k.gpus != at % k.gpus) ++off_rail;
        }
      }
      EXPECT_EQ(off_rail, k.off_rail) << k.nodes << " nodes of " << k.gpus;
    }
    for (const std::uint32_t e : exits) EXPECT_EQ(e, ring.streams() / k.gpus) << k.nodes << " nodes of " << k.gpus;
  }
  // Fewer channels than GPUs (NICs): the exits fall on as many members of each node.
  const TrafficShape four = TrafficShape::ring(Collective::kAllGather, 64 * kMiB, first_npus(16), 8, 4);
  const auto next = ring_successors(four, 16);
  std::vector<std::uint32_t> exits(16, 0);
  for (std::uint32_t stream = 0; stream < four.streams(); ++stream) {
    for (std::uint32_t m = 0; m < 16; ++m) exits[m] += next[stream][m] / 8 != m / 8;
  }
  EXPECT_EQ(std::count(exits.begin(), exits.end(), 0u), 8);
  // Nodes holding different counts of the call's members (a group): still one cycle.
  const std::vector<NpuId> uneven = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  ring_successors(TrafficShape::ring(Collective::kAllGather, 64 * kMiB, uneven, 8, 3), 11);
}

TEST(NcclTrafficShape, PatMovesTheRingsBytesInLog2Steps) {
  // PAT (one GPU a node): ceil(log2 n) steps carrying Bruck's n - 1 blocks in all, each member
  // sending (n-1)/n of the buffer, as a ring; the all-gather's first step goes farthest with one
  // block, the reduce-scatter's last.
  for (const std::uint32_t n : {2u, 6u, 8u, 13u}) {
    for (const Collective c : {Collective::kAllGather, Collective::kReduceScatter}) {
      const TrafficShape pat = TrafficShape::pat(c, 64 * kMiB, n);
      std::uint32_t levels = 0;
      while ((1u << levels) < n) ++levels;
      EXPECT_EQ(pat.steps(), levels);
      for (const auto& [node, net] : sent_bytes(pat, n, 1)) {
        EXPECT_EQ(node, 0);
        EXPECT_NEAR(net, 64 * kMiB * (n - 1) / n, 1e-3);
      }
      std::vector<Move> moves;
      pat.moves(0, 0, c == Collective::kAllGather ? 0 : levels - 1, moves);
      ASSERT_EQ(moves.size(), 2u);
      EXPECT_EQ(moves[1].peer, 1u << (levels - 1));  // the send goes 2^(levels-1) ahead
      EXPECT_DOUBLE_EQ(moves[1].bytes, 64 * kMiB / n / 8);
    }
  }
}

TEST(NcclTrafficShape, TreesSendEachChunkUpAndDownEveryEdge) {
  // NCCL's trees: every edge of every tree (a channel's two, (n - 1) edges each) carries its half
  // of the buffer once each way: 2 x channels x 2 (n - 1) x half / channels bytes in all.
  const double b = 96 * kMiB;
  for (const std::uint32_t n : {16u, 24u, 32u}) {
    const TrafficShape tree = TrafficShape::tree(b, first_npus(n), 8, 8);
    double total = 0;
    for (const auto& [node, net] : sent_bytes(tree, n, 8)) total += node + net;
    EXPECT_NEAR(total, 2.0 * (n - 1) * b, 1e-6 * b) << n;
  }
}

TEST(NcclTrafficShape, TheTreesAreNcclsDoubleBinaryTree) {
  // NCCL's trees over 4 nodes of one GPU: the first in order, 0 -> 2 -> {1, 3}; the second its
  // mirror, 3 -> 1 -> {2, 0}. So node 2 sends a chunk up and two down in the first tree and is a
  // leaf in the second: its NIC carries twice its share, not the 1.5 of a heap-ordered tree.
  // Seen from the moves: a chunk's first up step, receives from the children; stream 0 is the
  // first tree's up stream, stream 2 x 4 the second's.
  const TrafficShape tree = TrafficShape::tree(8 * kMiB, first_npus(4), 1, 1);
  auto children = [&tree](std::uint32_t member, std::uint32_t stream) {
    std::vector<Move> moves;
    tree.moves(member, stream, 0, moves);
    std::vector<std::uint32_t> out;
    for (const Move& m : moves) out.push_back(m.peer);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(children(0, 0), (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(children(2, 0), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ(children(3, 8), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(children(1, 8), (std::vector<std::uint32_t>{0, 2}));
  EXPECT_TRUE(children(1, 0).empty());
  // Odd counts shift the first tree by one: over 5, the first is 0 -> 4 -> 2 -> {1, 3}, the
  // second 1 -> 0 -> 3 -> {2, 4}.
  const TrafficShape odd = TrafficShape::tree(8 * kMiB, first_npus(5), 1, 1);
  std::vector<Move> moves;
  odd.moves(3, 8, 0, moves);
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].peer + moves[1].peer, 6u);
}

TEST(NcclTrafficShape, StagedFormsLoadPortsAndNicsAsNcclDoes) {
  // Over N nodes of G (b the buffer, b / G a GPU's share):
  //  * NVLS inside a node: each GPU sends b x (1 + 1/G) to the switch over the two node stages;
  //    a direct exchange (CollNet): the others' shares, twice, 2 b (G-1)/G.
  //  * The network reducing (CollNet, NVLS with SHARP): each GPU's NIC sends its share once.
  //  * NVLS-tree: each share crosses every edge of its tree once each way: the GPUs of a place
  //    send 2 (N-1) x b / G in all over the two trees (each tree half of the chunks).
  const double b = 40 * kMiB;  // 3 chunks a stream
  for (const std::uint32_t nodes : {2u, 3u, 4u, 7u}) {
    for (const std::uint32_t g : {1u, 4u, 8u}) {
      const std::uint32_t n = nodes * g;
      for (const bool in_switch : {false, true}) {
        for (const bool by_trees : {false, true}) {
          const TrafficShape staged = TrafficShape::staged(b, first_npus(n), g, in_switch, by_trees);
          EXPECT_EQ(staged.streams(), 2u * (by_trees ? 6 : 3));  // two lanes, a stream a stage
          double total_net = 0;
          for (const auto& [node, net] : sent_bytes(staged, n, g)) {
            const double expected_node = g == 1 ? 0 : in_switch ? b * (1 + 1.0 / g) : 2 * b * (g - 1) / g;
            EXPECT_NEAR(node, expected_node, 1e-6 * b) << nodes << "x" << g;
            if (!by_trees) {
              EXPECT_NEAR(net, b / g, 1e-6 * b) << nodes << "x" << g;
            }
            total_net += net;
          }
          const double expected_total = by_trees ? 2.0 * (nodes - 1) * b : b * nodes;
          EXPECT_NEAR(total_net, expected_total, 1e-6 * b) << nodes << "x" << g << " trees " << by_trees;
        }
      }
    }
  }
}

TEST(NcclTrafficShape, PxnKeepsTheNetworkOnRails) {
  // An all-to-all through PXN over N nodes of G: a GPU sends (G-1)/G of its buffer over NVLink
  // (its own pieces for its node and the pieces for the other rails, to their rail's GPU) and
  // (N-1)/N through its NIC (its rail's pieces for the other nodes, its node's G GPUs' worth),
  // as a direct all-to-all would; but every message between nodes joins two GPUs of one rail.
  const double b = 24 * kMiB;
  for (const auto& [nodes, g] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{2, 8}, {3, 4}, {4, 2}}) {
    const std::uint32_t n = nodes * g;
    const TrafficShape pxn = TrafficShape::relayed_all_to_all(b, first_npus(n), g);
    for (const auto& [node, net] : sent_bytes(pxn, n, g)) {
      EXPECT_NEAR(node, b * (g - 1) / g, 1e-6 * b);
      EXPECT_NEAR(net, b * (nodes - 1) / nodes, 1e-6 * b);
    }
    // Either inside the node or along the rail.
    std::vector<Move> moves;
    for (std::uint32_t m = 0; m < n; ++m) {
      for (std::uint32_t stream = 0; stream < pxn.streams(); ++stream) {
        moves.clear();
        pxn.moves(m, stream, 0, moves);
        for (const Move& move : moves) EXPECT_TRUE(move.peer / g == m / g || move.peer % g == m % g);
      }
    }
  }
}

TEST(NcclTrafficShape, AnExchangeMeetsEveryOtherMember) {
  const TrafficShape e = TrafficShape::exchange(kMiB, 5);
  EXPECT_EQ(e.streams(), 1u);
  for (const auto& [node, net] : sent_bytes(e, 5, 8)) EXPECT_DOUBLE_EQ(node + net, 4 * kMiB);
}

}  // namespace
}  // namespace chakrasim::system::nccl
