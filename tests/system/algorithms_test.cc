// Tests of the direct, halving-doubling and double-binary-tree state machines
// (docs/astra-sim-model.md §5), each NPU of a ring driven through a recording Io over a tiny
// fake network: uniform network time T per message, E per step, P(s) = 3 floor(s / 50) per
// reducing step, messages matched by (src, dst, bytes) in order. The checks: who sends what to
// whom, which steps reduce and on what size, one finish per NPU, and the §5 closed forms.
// Also the planner rules these algorithms add (collective_plan.h).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "system/collective_plan.h"
#include "system/direct.h"
#include "system/double_binary_tree.h"
#include "system/halving_doubling.h"

namespace chakrasim::system {
namespace {

constexpr std::uint64_t kMiB = 1048576;
constexpr Tick kE = 10;

Tick reduction_ns(std::uint64_t bytes) { return 3 * (bytes / 50); }

// n NPUs 0..n-1 (NPU i at ring position i), each running a `State`. What one NPU did:
struct NpuLog {
  std::string calls;  // 'b' bundle, 'B' reducing bundle, 's' send, 'r' receive, 'f' finish
  std::vector<std::pair<NpuId, std::uint64_t>> sends, receives;
  std::vector<std::uint64_t> reduce_bytes;  // sizes the reducing bundles were charged on
  int finishes = 0;
  Tick finish_time = 0;
};

template <class State>
class Cluster {
 public:
  struct Io {
    Cluster* cluster;
    NpuId npu;
    void bundle(bool reduce, std::uint64_t bytes) {
      NpuLog& log = cluster->logs[npu];
      log.calls += reduce ? 'B' : 'b';
      if (reduce) log.reduce_bytes.push_back(bytes);
      cluster->at(cluster->now + kE + (reduce ? reduction_ns(bytes) : 0), {kStepReady, npu, 0, 0});
    }
    void send(NpuId dst, std::uint64_t bytes) {
      cluster->logs[npu].calls += 's';
      cluster->logs[npu].sends.emplace_back(dst, bytes);
      cluster->at(cluster->now + cluster->network_ns, {kArrival, dst, npu, bytes});
    }
    void receive(NpuId src, std::uint64_t bytes) {
      cluster->logs[npu].calls += 'r';
      cluster->logs[npu].receives.emplace_back(src, bytes);
      Slot& slot = cluster->slots[{src, npu, bytes}];
      if (slot.arrived > 0) {  // already here: completes inside receive(), as Mailbox allows
        --slot.arrived;
        cluster->states[npu].on_receive(*this);
      } else {
        ++slot.waiting;
      }
    }
    void finish() {
      NpuLog& log = cluster->logs[npu];
      log.calls += 'f';
      ++log.finishes;
      log.finish_time = cluster->now;
    }
  };

  // `setup(state, npu)` configures NPU `npu`'s state machine.
  template <class Setup>
  Cluster(std::uint32_t n, Tick t_ns, Setup setup) : network_ns(t_ns), states(n), logs(n) {
    for (NpuId i = 0; i < n; ++i) setup(states[i], i);
  }

  void run() {
    for (NpuId i = 0; i < states.size(); ++i) {
      Io io{this, i};
      states[i].start(io);
    }
    int guard = 0;
    while (!pending.empty() && ++guard < 1000000) {
      const auto it = pending.begin();
      now = it->first;
      const Event e = it->second;
      pending.erase(it);
      Io io{this, e.npu};
      if (e.kind == kStepReady) {
        states[e.npu].on_step_ready(io);
      } else {
        Slot& slot = slots[{e.src, e.npu, e.bytes}];
        if (slot.waiting > 0) {
          --slot.waiting;
          states[e.npu].on_receive(io);
        } else {
          ++slot.arrived;
        }
      }
    }
    EXPECT_LT(guard, 1000000) << "the algorithm never stopped";
    for (const auto& [key, slot] : slots) {
      EXPECT_EQ(slot.arrived + slot.waiting, 0u)
          << "unmatched message " << std::get<0>(key) << " -> " << std::get<1>(key) << ", " << std::get<2>(key) << " B";
    }
  }

  Tick network_ns;
  std::vector<State> states;
  std::vector<NpuLog> logs;

 private:
  enum Kind { kStepReady, kArrival };
  struct Event {
    Kind kind;
    NpuId npu;
    NpuId src;
    std::uint64_t bytes;
  };
  struct Slot {
    std::uint32_t arrived = 0;
    std::uint32_t waiting = 0;
  };
  void at(Tick time, Event e) { pending.emplace(time, e); }  // equal times run in insertion order

  Tick now = 0;
  std::multimap<Tick, Event> pending;
  std::map<std::tuple<NpuId, NpuId, std::uint64_t>, Slot> slots;
};

RingLayout ring_of(std::uint32_t n, NpuId npu, const std::vector<NpuId>* members = nullptr) {
  RingLayout ring;
  ring.size = n;
  ring.index = npu;
  ring.members = members;
  return ring;
}

std::size_t count(const std::string& s, char c) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), c)); }

// ---------------------------------------------------------------------------------------------
// Direct

Cluster<DirectState> run_direct(CollectiveKind kind, std::uint32_t n, std::uint64_t bytes, Tick t_ns,
                                bool clockwise = true, std::uint32_t window = 0, bool group_ring = false) {
  Cluster<DirectState> c(n, t_ns, [&](DirectState& s, NpuId i) {
    s.configure(kind, bytes, ring_of(n, i), clockwise, window, group_ring);
  });
  c.run();
  return c;
}

TEST(Direct, AllReduceSendsEachPieceToEveryPeerTwice) {
  // 8 NPUs, c = 1 MiB, pieces c/8 = 131072 B, T = 2941 (FC8), E = 10, P = 7863. NPU i sends the
  // reduce-scatter half to i+1, ..., i+7 and the all-gather half again to i+1, ..., i+7, and
  // receives from i-1, ..., i-7 twice. Bundles: 7 fresh, 7 reducing (the pieces received in the
  // first half), 7 plain (second half). Closed form 3E + 2T + P = 30 + 5882 + 7863 = 13775.
  const auto c = run_direct(CollectiveKind::kAllReduce, 8, kMiB, 2941);
  for (NpuId i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    const NpuLog& log = c.logs[i];
    ASSERT_EQ(log.sends.size(), 14u);
    ASSERT_EQ(log.receives.size(), 14u);
    for (std::uint32_t k = 0; k < 14; ++k) {
      const std::uint32_t d = k % 7 + 1;
      EXPECT_EQ(log.sends[k], std::make_pair(static_cast<NpuId>((i + d) % 8), kMiB / 8));
      EXPECT_EQ(log.receives[k], std::make_pair(static_cast<NpuId>((i + 8 - d) % 8), kMiB / 8));
    }
    EXPECT_EQ(count(log.calls, 'b'), 14u);
    EXPECT_EQ(log.reduce_bytes, std::vector<std::uint64_t>(7, kMiB / 8));
    EXPECT_EQ(log.finishes, 1);
    EXPECT_EQ(log.calls.back(), 'f');
    EXPECT_EQ(log.finish_time, 13775u);
  }
  // The first seven calls prepare every reduce-scatter piece at once (window n - 1).
  EXPECT_EQ(c.logs[0].calls.substr(0, 7), "bbbbbbb");
}

TEST(Direct, AnticlockwiseMirrorsThePeers) {
  // Anticlockwise, NPU 0 sends to 7, 6, ..., 1 and receives from 1, 2, ..., 7.
  const auto c = run_direct(CollectiveKind::kReduceScatter, 8, kMiB, 2941, /*clockwise=*/false);
  for (std::uint32_t k = 0; k < 7; ++k) {
    EXPECT_EQ(c.logs[0].sends[k].first, 7 - k);
    EXPECT_EQ(c.logs[0].receives[k].first, k + 1);
  }
}

TEST(Direct, OneRoundCollectives) {
  // 8 NPUs, one message to each peer, 2E + T (+ P for reduce-scatter):
  //   RS  131072 B each, all 7 received pieces reduced: 20 + 2941 + 7863 = 10824
  //   AG  the whole 1 MiB shard each, T = 20031: 20 + 20031 = 20051
  //   A2A 131072 B each: 20 + 2941 = 2961
  struct Case {
    CollectiveKind kind;
    Tick t;
    std::uint64_t msg;
    std::size_t reducing;
    Tick expected;
  };
  for (const Case& k : {Case{CollectiveKind::kReduceScatter, 2941, kMiB / 8, 7, 10824},
                        Case{CollectiveKind::kAllGather, 20031, kMiB, 0, 20051},
                        Case{CollectiveKind::kAllToAll, 2941, kMiB / 8, 0, 2961}}) {
    SCOPED_TRACE(collective_name(k.kind));
    const auto c = run_direct(k.kind, 8, kMiB, k.t);
    for (const NpuLog& log : c.logs) {
      EXPECT_EQ(log.sends.size(), 7u);
      EXPECT_EQ(log.receives.size(), 7u);
      for (const auto& [peer, bytes] : log.sends) EXPECT_EQ(bytes, k.msg);
      EXPECT_EQ(count(log.calls, 'b') + count(log.calls, 'B'), 14u);
      EXPECT_EQ(log.reduce_bytes.size(), k.reducing);
      EXPECT_EQ(log.finishes, 1);
      EXPECT_EQ(log.finish_time, k.expected);
    }
  }
}

TEST(Direct, WindowLimitsMessagesPreparedAtOnce) {
  // direct4 on 8 NPUs, all-reduce: only 4 messages are prepared at the start, but the peers
  // still rotate (k mod 7) + 1, so the 14 messages reach every peer twice and the run ends
  // with every message matched and one finish per NPU.
  const auto c = run_direct(CollectiveKind::kAllReduce, 8, kMiB, 2941, true, /*window=*/4);
  for (NpuId i = 0; i < 8; ++i) {
    const NpuLog& log = c.logs[i];
    EXPECT_EQ(log.calls.substr(0, 5), "bbbbs");
    ASSERT_EQ(log.sends.size(), 14u);
    for (std::uint32_t k = 0; k < 14; ++k) EXPECT_EQ(log.sends[k].first, (i + k % 7 + 1) % 8);
    EXPECT_EQ(log.finishes, 1);
    EXPECT_EQ(log.calls.back(), 'f');
  }
  // A window above n - 1 is n - 1.
  DirectState s;
  s.configure(CollectiveKind::kAllReduce, kMiB, ring_of(8, 0), true, 100, false);
  EXPECT_EQ(s.in_flight, 7u);
}

TEST(Direct, GroupRingReducesBothHalvesOfAnAllReduce) {
  // On a communicator group's ring (the reference's "Local" dimension) the received steps are
  // counted (n-1) W at a time, so the all-gather half's receives are reduced too: 14 reducing
  // bundles and 3E + 2T + 2P = 30 + 5882 + 15726 = 21638 on 8 NPUs.
  const std::vector<NpuId> members = {0, 1, 2, 3, 4, 5, 6, 7};
  Cluster<DirectState> c(8, 2941, [&](DirectState& s, NpuId i) {
    s.configure(CollectiveKind::kAllReduce, kMiB, ring_of(8, i, &members), true, 0, true);
  });
  c.run();
  for (const NpuLog& log : c.logs) {
    EXPECT_EQ(log.reduce_bytes.size(), 14u);
    EXPECT_EQ(log.finish_time, 21638u);
  }
}

// ---------------------------------------------------------------------------------------------
// Halving-doubling

Cluster<HalvingDoublingState> run_hd(CollectiveKind kind, std::uint32_t n, std::uint64_t bytes, Tick t_ns) {
  Cluster<HalvingDoublingState> c(n, t_ns,
                                  [&](HalvingDoublingState& s, NpuId i) { s.configure(kind, bytes, ring_of(n, i)); });
  c.run();
  return c;
}

TEST(HalvingDoubling, AllReduceHalvesThenDoubles) {
  // 8 NPUs, c = 1 MiB, T = 1000 for every message (to keep the sum readable). NPU i exchanges
  // with i xor 1, i xor 2, i xor 4 (sizes c/2, c/4, c/8), then i xor 4, 2, 1 (c/8, c/4, c/2).
  // Bundles: b B B b b b b; the two reductions are charged on the next message's size (c/4 and
  // c/8), not on what was received (c/2, c/4), and the last reduce-scatter receive is not
  // reduced. Time: 7E + 6T + P(c/4) + P(c/8) = 70 + 6000 + 15726 + 7863 = 29659.
  const auto c = run_hd(CollectiveKind::kAllReduce, 8, kMiB, 1000);
  const std::uint32_t distances[] = {1, 2, 4, 4, 2, 1};
  const std::uint64_t sizes[] = {kMiB / 2, kMiB / 4, kMiB / 8, kMiB / 8, kMiB / 4, kMiB / 2};
  for (NpuId i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    const NpuLog& log = c.logs[i];
    EXPECT_EQ(log.calls, "b"
                         "srB"
                         "srB"
                         "srb"
                         "srb"
                         "srb"
                         "srb"
                         "f");
    ASSERT_EQ(log.sends.size(), 6u);
    for (int k = 0; k < 6; ++k) {
      EXPECT_EQ(log.sends[k], std::make_pair(i ^ distances[k], sizes[k]));
      EXPECT_EQ(log.receives[k], log.sends[k]);
    }
    EXPECT_EQ(log.reduce_bytes, (std::vector<std::uint64_t>{kMiB / 4, kMiB / 8}));
    EXPECT_EQ(log.finish_time, 29659u);
  }
}

TEST(HalvingDoubling, ReduceScatterAndAllGather) {
  // 8 NPUs, c = 1 MiB, T = 1000.
  //   RS: c/2, c/4, c/8 with i xor 1, 2, 4; reductions on c/4 and c/8, none after the last
  //       receive: 4E + 3T + 15726 + 7863 = 26629.
  //   AG: c, 2c, 4c with i xor 4, 2, 1; nothing reduced: 4E + 3T = 3040.
  const auto rs = run_hd(CollectiveKind::kReduceScatter, 8, kMiB, 1000);
  const auto ag = run_hd(CollectiveKind::kAllGather, 8, kMiB, 1000);
  for (NpuId i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(rs.logs[i].calls, "b"
                                "srB"
                                "srB"
                                "srb"
                                "f");
    EXPECT_EQ(rs.logs[i].sends,
              (std::vector<std::pair<NpuId, std::uint64_t>>{{i ^ 1, kMiB / 2}, {i ^ 2, kMiB / 4}, {i ^ 4, kMiB / 8}}));
    EXPECT_EQ(rs.logs[i].reduce_bytes, (std::vector<std::uint64_t>{kMiB / 4, kMiB / 8}));
    EXPECT_EQ(rs.logs[i].finish_time, 26629u);
    EXPECT_EQ(ag.logs[i].calls, "b"
                                "srb"
                                "srb"
                                "srb"
                                "f");
    EXPECT_EQ(ag.logs[i].sends,
              (std::vector<std::pair<NpuId, std::uint64_t>>{{i ^ 4, kMiB}, {i ^ 2, 2 * kMiB}, {i ^ 1, 4 * kMiB}}));
    EXPECT_EQ(ag.logs[i].finish_time, 3040u);
  }
}

TEST(HalvingDoubling, TwoNpusNeverReduce) {
  // n = 2: log2 n - 1 = 0 received steps per round, so an all-reduce is c/2 there and back
  // with no reduction: 3E + 2T.
  const auto c = run_hd(CollectiveKind::kAllReduce, 2, 4096, 100);
  for (const NpuLog& log : c.logs) {
    EXPECT_EQ(log.calls, "bsrbsrbf");
    EXPECT_EQ(log.finish_time, 230u);
  }
}

TEST(HalvingDoubling, LargerRingsPairByExclusiveOr) {
  // 16 and 32 NPUs: every message is an exchange with i xor d, d = 1, 2, ..., n/2 and back.
  for (std::uint32_t n : {16u, 32u}) {
    const auto c = run_hd(CollectiveKind::kAllReduce, n, kMiB, 500);
    for (NpuId i = 0; i < n; ++i) {
      const NpuLog& log = c.logs[i];
      ASSERT_EQ(log.sends.size(), 2 * static_cast<std::size_t>(std::countr_zero(n)));
      for (std::size_t k = 0; k < log.sends.size(); ++k) {
        const std::size_t up = std::min(k, log.sends.size() - 1 - k);
        EXPECT_EQ(log.sends[k].first, i ^ (1u << up));
      }
      EXPECT_EQ(log.finishes, 1);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Double binary tree

TEST(DoubleBinaryTree, TreesOfEightNpus) {
  // Max-root: 7 <- 3 <- {1 <- {0, 2}, 5 <- {4, 6}}. Min-root: 0 <- 4 <- {2 <- {1, 3}, 6 <- {5, 7}}.
  // {parent, left, right}, with - for none.
  const std::uint32_t x = TreeNode::kNone;
  const TreeNode max_root[] = {{1, x, x}, {3, 0, 2}, {1, x, x}, {7, 1, 5}, {5, x, x}, {3, 4, 6}, {5, x, x}, {x, 3, x}};
  const TreeNode min_root[] = {{x, x, 4}, {2, x, x}, {4, 1, 3}, {2, x, x}, {0, 2, 6}, {6, x, x}, {4, 5, 7}, {6, x, x}};
  for (std::uint32_t p = 0; p < 8; ++p) {
    SCOPED_TRACE(p);
    const TreeNode a = tree_node(8, p, false), b = tree_node(8, p, true);
    EXPECT_EQ(std::tie(a.parent, a.left, a.right), std::tie(max_root[p].parent, max_root[p].left, max_root[p].right));
    EXPECT_EQ(std::tie(b.parent, b.left, b.right), std::tie(min_root[p].parent, min_root[p].left, min_root[p].right));
  }
}

TEST(DoubleBinaryTree, TreesAreConsistentAndComplementary) {
  // For n = 2 .. 64: children point back to their parent, one root, depth log2 n, and every
  // position is a leaf in exactly one of the two trees (so the work evens out over chunks).
  for (std::uint32_t n = 2; n <= 64; n *= 2) {
    for (bool min_root : {false, true}) {
      int roots = 0;
      for (std::uint32_t p = 0; p < n; ++p) {
        const TreeNode node = tree_node(n, p, min_root);
        if (node.parent == TreeNode::kNone) ++roots;
        for (std::uint32_t child : {node.left, node.right}) {
          if (child != TreeNode::kNone) {
            EXPECT_EQ(tree_node(n, child, min_root).parent, p) << n;
          }
        }
        std::uint32_t depth = 0;
        for (std::uint32_t q = p; tree_node(n, q, min_root).parent != TreeNode::kNone;
             q = tree_node(n, q, min_root).parent)
          ++depth;
        EXPECT_LE(depth, static_cast<std::uint32_t>(std::countr_zero(n))) << n;
      }
      EXPECT_EQ(roots, 1) << n;
    }
    if (n < 4) continue;
    for (std::uint32_t p = 0; p < n; ++p) {
      const bool leaf_max =
          tree_node(n, p, false).left == TreeNode::kNone && tree_node(n, p, false).parent != TreeNode::kNone;
      const bool leaf_min =
          tree_node(n, p, true).right == TreeNode::kNone && tree_node(n, p, true).parent != TreeNode::kNone;
      EXPECT_NE(leaf_max, leaf_min) << "n " << n << " position " << p;
    }
  }
}

TEST(DoubleBinaryTree, AllReduceOnEightNpus) {
  // 8 NPUs, max-root tree, c = 1 MiB, T = 20031 (FC8), E = 10, P(c) = 62913, E + P = 62923.
  // Leaves: b s r b f. Inner nodes: r r B B s r B s s f. Root: r B s f. Every message is c.
  // Times: up the tree a leaf sends at 10, the first level reduces at 20041 + 62923, the top
  // at + T + 62923, the root at + T + 62923 = 248872 and ends; the top ends at
  // 248872 + T + 62923 = 331826, the first level at 414780, the leaves at + T + E = 434821
  // = 2E + 6T + 5(E + P).
  Cluster<DoubleBinaryTreeState> c(8, 20031,
                                   [&](DoubleBinaryTreeState& s, NpuId i) { s.configure(kMiB, ring_of(8, i), false); });
  c.run();
  const Tick expected[] = {434821, 414780, 434821, 331826, 434821, 414780, 434821, 248872};
  for (NpuId i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    const NpuLog& log = c.logs[i];
    const char* calls = i == 7 ? "rBsf" : i % 2 == 0 ? "bsrbf" : "rrBBsrBssf";
    EXPECT_EQ(log.calls, calls);
    for (const auto& [peer, bytes] : log.sends) EXPECT_EQ(bytes, kMiB);
    EXPECT_EQ(log.finishes, 1);
    EXPECT_EQ(log.finish_time, expected[i]);
  }
  EXPECT_EQ(c.logs[3].sends, (std::vector<std::pair<NpuId, std::uint64_t>>{{7, kMiB}, {1, kMiB}, {5, kMiB}}));
  EXPECT_EQ(c.logs[3].receives, (std::vector<std::pair<NpuId, std::uint64_t>>{{1, kMiB}, {5, kMiB}, {7, kMiB}}));
}

TEST(DoubleBinaryTree, MinRootTreeOnAGroupOfNpus) {
  // The tree is over ring positions: on a ring whose positions are NPUs 10, 20, ..., 80 the
  // min-root tree's root is NPU 10 and its only child NPU 50 (position 4).
  const std::vector<NpuId> members = {10, 20, 30, 40, 50, 60, 70, 80};
  DoubleBinaryTreeState root, top;
  root.configure(kMiB, ring_of(8, 0, &members), true);
  top.configure(kMiB, ring_of(8, 4, &members), true);
  EXPECT_EQ(root.role, DoubleBinaryTreeState::Role::kRoot);
  EXPECT_EQ(root.left, 50u);
  EXPECT_EQ(top.role, DoubleBinaryTreeState::Role::kInner);
  EXPECT_EQ(top.parent, 10u);
  EXPECT_EQ(top.left, 30u);
  EXPECT_EQ(top.right, 70u);
}

// ---------------------------------------------------------------------------------------------
// Planner rules for these algorithms

SystemSpec spec_with(const std::vector<AlgorithmChoice>& tokens, bool local_bw_aware = false) {
  SystemSpec spec;
  spec.preferred_dataset_splits = 1;
  spec.collective_optimization =
      local_bw_aware ? CollectiveOptimization::kLocalBwAware : CollectiveOptimization::kBaseline;
  for (auto& impl : spec.implementations) impl = tokens;
  return spec;
}

AlgorithmChoice token(AlgorithmKind kind, bool flat = false, std::uint32_t window = 0) {
  AlgorithmChoice c;
  c.kind = kind;
  c.one_flat = flat;
  c.window = window;
  return c;
}

std::string error_of(const SystemSpec& spec, const network::Topology& topo, CollectiveKind kind,
                     const std::vector<NpuId>* group = nullptr) {
  try {
    plan_collective(spec, topo, kind, kMiB, ~0u, group);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AlgorithmPlans, PhasesCarryTheAlgorithmAndWindow) {
  // [Ring 2, FC 8] with [ring, direct3]: reduce-scatter on d0 by ring, then on d1 by direct
  // with window 3 (1 MiB -> 512 KiB).
  const network::Topology topo(network::TopologySpec{
      {{network::DimensionKind::kRing, 2, 50, 500}, {network::DimensionKind::kFullyConnected, 8, 50, 500}}});
  const ChunkPlan plan =
      plan_collective(spec_with({token(AlgorithmKind::kRing), token(AlgorithmKind::kDirect, false, 3)}), topo,
                      CollectiveKind::kReduceScatter, kMiB, ~0u);
  ASSERT_EQ(plan.phases.size(), 2u);
  EXPECT_EQ(plan.phases[0].algorithm, AlgorithmKind::kRing);
  EXPECT_EQ(plan.phases[1].algorithm, AlgorithmKind::kDirect);
  EXPECT_EQ(plan.phases[1].window, 3u);
  EXPECT_EQ(plan.phases[1].bytes, kMiB / 2);
}

TEST(AlgorithmPlans, TreePhasesKeepTheirSize) {
  // The tree runs an all-reduce for any phase kind: baseline reduce-scatter on [Ring 2, Ring 4]
  // with doubleBinaryTree on d0 leaves 1 MiB (not 512 KiB) for d1.
  const network::Topology topo(network::TopologySpec{
      {{network::DimensionKind::kRing, 2, 50, 500}, {network::DimensionKind::kRing, 4, 50, 500}}});
  const ChunkPlan plan =
      plan_collective(spec_with({token(AlgorithmKind::kDoubleBinaryTree), token(AlgorithmKind::kRing)}), topo,
                      CollectiveKind::kReduceScatter, kMiB, ~0u);
  ASSERT_EQ(plan.phases.size(), 2u);
  EXPECT_EQ(plan.phases[1].bytes, kMiB);
  EXPECT_EQ(phase_output_bytes(AlgorithmKind::kDoubleBinaryTree, CollectiveKind::kAllGather, 100, 4), 100u);
  EXPECT_EQ(phase_output_bytes(AlgorithmKind::kDirect, CollectiveKind::kAllGather, 100, 4), 400u);
}

TEST(AlgorithmPlans, OneTokenLaterInTheListFlattensFromThere) {
  // [ring, oneDirect] on [Ring 2, Ring 4]: d0 a ring of 2, then d1 one flat ring of all 8.
  const network::Topology topo(network::TopologySpec{
      {{network::DimensionKind::kRing, 2, 50, 500}, {network::DimensionKind::kRing, 4, 50, 500}}});
  const ChunkPlan plan = plan_collective(spec_with({token(AlgorithmKind::kRing), token(AlgorithmKind::kDirect, true)}),
                                         topo, CollectiveKind::kAllToAll, kMiB, ~0u);
  ASSERT_EQ(plan.phases.size(), 2u);
  EXPECT_EQ(plan.phases[0].ring_size, 2u);
  EXPECT_FALSE(plan.phases[0].flat);
  EXPECT_EQ(plan.phases[1].ring_size, 8u);
  EXPECT_TRUE(plan.phases[1].flat);
  EXPECT_EQ(plan.phases[1].stride, 1u);
  EXPECT_EQ(plan.phases[1].algorithm, AlgorithmKind::kDirect);
}

TEST(AlgorithmPlans, UnrunnablePhasesAreErrors) {
  const network::Topology ring8(network::TopologySpec{{{network::DimensionKind::kRing, 8, 50, 500}}});
  const network::Topology ring6(network::TopologySpec{{{network::DimensionKind::kRing, 6, 50, 500}}});
  const auto hd = spec_with({token(AlgorithmKind::kHalvingDoubling)});
  const auto dbt = spec_with({token(AlgorithmKind::kDoubleBinaryTree)});
  EXPECT_THAT(error_of(hd, ring8, CollectiveKind::kAllToAll),
              ::testing::AllOf(::testing::HasSubstr("all-to-all"), ::testing::HasSubstr("halvingDoubling")));
  EXPECT_EQ(error_of(hd, ring8, CollectiveKind::kAllReduce), "");
  EXPECT_THAT(error_of(hd, ring6, CollectiveKind::kAllReduce), ::testing::HasSubstr("power of two"));
  EXPECT_THAT(error_of(dbt, ring6, CollectiveKind::kAllReduce), ::testing::HasSubstr("power of two"));
  const std::vector<NpuId> group = {0, 1, 2, 3};
  EXPECT_THAT(error_of(dbt, ring8, CollectiveKind::kAllReduce, &group), ::testing::HasSubstr("communicator group"));
  EXPECT_EQ(error_of(spec_with({token(AlgorithmKind::kDirect)}), ring6, CollectiveKind::kAllToAll), "");
}

}  // namespace
}  // namespace chakrasim::system
