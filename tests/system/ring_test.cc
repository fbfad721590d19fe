// Tests of RingState (docs/astra-sim-model.md §5) driven through a recording Io: the exact
// call sequence, message counts and sizes, reducing steps, one finish, and the closed-form
// phase times, alone and with the planner and the congestion-unaware delays.
#include "system/ring.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/event_queue.h"
#include "network/analytical/congestion_unaware.h"
#include "system/collective_plan.h"

namespace chakrasim::system {
namespace {

constexpr std::uint64_t kMiB = 1048576;
constexpr CollectiveKind kAllKinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                        CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll};

// An Io that records every call and keeps a tiny timeline for one NPU of a symmetric ring:
// bundle() makes the step ready E (+ P if it reduces) later; a receive completes T after it is
// posted (every NPU sends its k-th message at the same time as its predecessor, so the k-th
// receive's message lands T after this NPU's k-th send). With `instant_receive` the message is
// already there and the receive completes inside receive(), as Mailbox::post_receive allows.
struct StepIo {
  enum class Next { kStepReady, kReceive };

  Tick endpoint_ns = 10;
  Tick network_ns = 0;
  Tick reduce_ns = 0;
  bool instant_receive = false;
  RingState* ring = nullptr;

  Tick now = 0;
  std::multimap<Tick, Next> pending;  // equal ticks run in insertion order
  // 'b' bundle, 'B' reducing bundle, 's' send, 'r' receive, 'f' finish.
  std::string calls;
  std::vector<std::uint64_t> bundle_bytes, send_bytes, receive_bytes;
  std::vector<NpuId> send_dst, receive_src;
  int finishes = 0;
  Tick finish_time = 0;
  std::size_t pending_at_finish = 0;

  void bundle(bool reduce, std::uint64_t bytes) {
    calls += reduce ? 'B' : 'b';
    bundle_bytes.push_back(bytes);
    pending.emplace(now + endpoint_ns + (reduce ? reduce_ns : 0), Next::kStepReady);
  }
  void send(NpuId dst, std::uint64_t bytes) {
    calls += 's';
    send_dst.push_back(dst);
    send_bytes.push_back(bytes);
  }
  void receive(NpuId src, std::uint64_t bytes) {
    calls += 'r';
    receive_src.push_back(src);
    receive_bytes.push_back(bytes);
    if (instant_receive) {
      ring->on_receive(*this);
    } else {
      pending.emplace(now + network_ns, Next::kReceive);
    }
  }
  void finish() {
    calls += 'f';
    ++finishes;
    finish_time = now;
    pending_at_finish = pending.size();
  }

  std::size_t count(char c) const { return static_cast<std::size_t>(std::count(calls.begin(), calls.end(), c)); }
};

// Configures a ring of `n` for one phase of `kind` over `bytes`, sending to `next` and
// receiving from `prev`, and runs it to the end; returns the Io with everything it saw.
StepIo drive(CollectiveKind kind, std::uint64_t bytes, std::uint32_t n, Tick t_ns, Tick p_ns,
             bool instant_receive = false, NpuId next = 5, NpuId prev = 3) {
  RingState ring;
  ring.configure(kind, bytes, n, next, prev);
  StepIo io;
  io.network_ns = t_ns;
  io.reduce_ns = p_ns;
  io.instant_receive = instant_receive;
  io.ring = &ring;
  ring.start(io);
  int guard = 0;
  while (!io.pending.empty() && ++guard < 100000) {
    const auto it = io.pending.begin();
    io.now = it->first;
    const StepIo::Next what = it->second;
    io.pending.erase(it);
    if (what == StepIo::Next::kStepReady) {
      ring.on_step_ready(io);
    } else {
      ring.on_receive(io);
    }
  }
  EXPECT_LT(guard, 100000) << "the ring never stopped";
  return io;
}

// §5 closed forms, E = endpoint delay, T = one message's network time, P = one reduction.
Tick closed_form(CollectiveKind kind, std::uint64_t n, Tick e, Tick t, Tick p) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return 2 * (n - 1) * (e + t) + (n - 1) * p + e;
    case CollectiveKind::kReduceScatter: return (n - 1) * (e + t) + (n - 1) * p + e;
    case CollectiveKind::kAllGather: return (n - 1) * (e + t) + e;
    case CollectiveKind::kAllToAll: return n * (n - 1) / 2 * (e + t) + e;
  }
  return 0;
}

// P(s) = 3 * floor(s / local-mem-bw), local-mem-bw in GB/s with GB = 10^9 (= bytes per ns).
Tick reduction_ns(std::uint64_t bytes, std::uint64_t mem_bw_gb_per_s) { return 3 * (bytes / mem_bw_gb_per_s); }

TEST(Ring, ExactCallSequenceOnFourNpus) {
  // n = 4 (b = bundle, B = reducing bundle, s = send, r = receive, f = finish):
  //   AR:  b, then 3 x (s r B) for the reduce-scatter round, 3 x (s r b) for the all-gather
  //        round, f: 6 sends, 7 bundles, 3 reducing.
  //   RS:  b, 3 x (s r B), f.    AG: b, 3 x (s r b), f.    A2A: b, 6 x (s r b), f.
  EXPECT_EQ(drive(CollectiveKind::kAllReduce, 4096, 4, 100, 7).calls, "b"
                                                                      "srBsrBsrB"
                                                                      "srbsrbsrb"
                                                                      "f");
  EXPECT_EQ(drive(CollectiveKind::kReduceScatter, 4096, 4, 100, 7).calls, "b"
                                                                          "srBsrBsrB"
                                                                          "f");
  EXPECT_EQ(drive(CollectiveKind::kAllGather, 4096, 4, 100, 7).calls, "b"
                                                                      "srbsrbsrb"
                                                                      "f");
  EXPECT_EQ(drive(CollectiveKind::kAllToAll, 4096, 4, 100, 7).calls, "b"
                                                                     "srbsrbsrbsrbsrbsrb"
                                                                     "f");
}

TEST(Ring, CountsSizesAndOneFinishForEveryKind) {
  // c = 262144, n = 4 and 8, next = 5, prev = 3, E = 10, T = 1110, P = 1965:
  //   sends: AR 2(n-1), RS n-1, AG n-1, A2A n(n-1)/2; each send and receive is c/n (c for AG);
  //   bundles = sends + 1; reducing bundles: n-1 for AR and RS, 0 for AG and A2A;
  //   finish() once, as the very last call, with nothing left pending; the time it happens
  //   is the §5 closed form.
  constexpr std::uint64_t c = 262144;
  for (std::uint32_t n : {4u, 8u}) {
    for (CollectiveKind kind : kAllKinds) {
      SCOPED_TRACE(::testing::Message() << collective_name(kind) << " n=" << n);
      const StepIo io = drive(kind, c, n, 1110, 1965);
      std::size_t sends = 0, reducing = 0;
      switch (kind) {
        case CollectiveKind::kAllReduce:
          sends = 2 * (n - 1);
          reducing = n - 1;
          break;
        case CollectiveKind::kReduceScatter:
          sends = n - 1;
          reducing = n - 1;
          break;
        case CollectiveKind::kAllGather: sends = n - 1; break;
        case CollectiveKind::kAllToAll: sends = n * (n - 1) / 2; break;
      }
      const std::uint64_t msg = kind == CollectiveKind::kAllGather ? c : c / n;
      EXPECT_EQ(io.count('s'), sends);
      EXPECT_EQ(io.count('r'), sends);
      EXPECT_EQ(io.count('b') + io.count('B'), sends + 1);
      EXPECT_EQ(io.count('B'), reducing);
      EXPECT_EQ(io.send_bytes, std::vector<std::uint64_t>(sends, msg));
      EXPECT_EQ(io.receive_bytes, std::vector<std::uint64_t>(sends, msg));
      EXPECT_EQ(io.bundle_bytes, std::vector<std::uint64_t>(sends + 1, msg));
      EXPECT_EQ(io.send_dst, std::vector<NpuId>(sends, 5));
      EXPECT_EQ(io.receive_src, std::vector<NpuId>(sends, 3));
      EXPECT_EQ(io.finishes, 1);
      EXPECT_EQ(io.calls.back(), 'f');
      EXPECT_EQ(io.pending_at_finish, 0u);
      EXPECT_EQ(io.finish_time, closed_form(kind, n, 10, 1110, 1965));
    }
  }
}

TEST(Ring, AllReduceOfTheTutorialChunkTakes29445) {
  // §5 worked check: Ring 8, c = 262144, c/n = 32768, E = 10, T = 1110, P = 3*floor(655.36)
  // = 1965. 15 bundles (7 reducing) and 14 sends: 14 * (10 + 1110) + 7 * 1965 + 10 = 29445.
  const StepIo io = drive(CollectiveKind::kAllReduce, 262144, 8, 1110, reduction_ns(32768, 50));
  EXPECT_EQ(reduction_ns(32768, 50), 1965u);
  EXPECT_EQ(io.finish_time, 29445u);
  EXPECT_EQ(io.count('s'), 14u);
  EXPECT_EQ(io.count('B'), 7u);
}

TEST(Ring, InstantReceivesKeepTheCountsAndFinishOnce) {
  // T = 0 and every receive completes inside receive() (its message already arrived), for
  // each kind and n = 4, 8: the same sends and bundles as above, finish() still exactly once
  // and last, at bundles * E + reducing * P (E = 10, P = 1965).
  for (std::uint32_t n : {4u, 8u}) {
    for (CollectiveKind kind : kAllKinds) {
      SCOPED_TRACE(::testing::Message() << collective_name(kind) << " n=" << n);
      const StepIo slow = drive(kind, 262144, n, 1110, 1965);
      const StepIo io = drive(kind, 262144, n, 0, 1965, /*instant_receive=*/true);
      EXPECT_EQ(io.calls, slow.calls);
      EXPECT_EQ(io.finishes, 1);
      EXPECT_EQ(io.calls.back(), 'f');
      EXPECT_EQ(io.finish_time, closed_form(kind, n, 10, 0, 1965));
    }
  }
}

// T for a message from NPU 0 to NPU `to` on `spec`, from the congestion-unaware backend.
Tick cu_delay(const network::TopologySpec& spec, NpuId to, std::uint64_t bytes) {
  struct NullSink final : network::ArrivalSink {
    void on_arrival(std::uint64_t) override {}
  } sink;
  EventQueue queue;
  const network::Topology topology(spec);
  const network::CongestionUnaware net(topology, queue, sink);
  return net.delay(0, to, bytes);
}

TEST(Ring, ReferenceAnchorsForOneMebibyteOnEightNpus) {
  // Ring 8 @ 50 GB/s, 500 ns, 1 MiB, splits 1, E = 10, local-mem-bw 50 (§9 anchors, CU):
  //   AR:  c/n = 131072, T = floor(500 + 2441.41) = 2941, P = 3*2621 = 7863:
  //        14 * 2951 + 7 * 7863 + 10 = 96365
  //   RS:  7 * 2951 + 7 * 7863 + 10 = 75708
  //   AG:  T(1 MiB) = floor(500 + 19531.25) = 20031: 7 * 20041 + 10 = 140297
  //   A2A: 28 * 2951 + 10 = 82638
  // and Ring 4, AR 1 MiB: c/n = 262144, T = floor(500 + 4882.81) = 5382, P = 3*5242 = 15726:
  //        6 * 5392 + 3 * 15726 + 10 = 79540.
  const network::TopologySpec ring8{{{network::DimensionKind::kRing, 8, 50, 500}}};
  const std::map<CollectiveKind, Tick> expected = {{CollectiveKind::kAllReduce, 96365},
                                                   {CollectiveKind::kReduceScatter, 75708},
                                                   {CollectiveKind::kAllGather, 140297},
                                                   {CollectiveKind::kAllToAll, 82638}};
  for (const auto& [kind, time] : expected) {
    const std::uint64_t msg = kind == CollectiveKind::kAllGather ? kMiB : kMiB / 8;
    const StepIo io = drive(kind, kMiB, 8, cu_delay(ring8, 1, msg), reduction_ns(msg, 50));
    EXPECT_EQ(io.finish_time, time) << collective_name(kind);
  }
  const network::TopologySpec ring4{{{network::DimensionKind::kRing, 4, 50, 500}}};
  const StepIo ar4 =
      drive(CollectiveKind::kAllReduce, kMiB, 4, cu_delay(ring4, 1, kMiB / 4), reduction_ns(kMiB / 4, 50));
  EXPECT_EQ(ar4.finish_time, 79540u);
}

// Runs every phase of `plan` back to back (one chunk, no contention) and returns each phase's
// time: T from the CU backend between NPU 0 and its ring successor, P from local-mem-bw 50.
std::vector<Tick> phase_times(const ChunkPlan& plan, const network::TopologySpec& spec) {
  std::vector<Tick> times;
  for (const PhasePlan& p : plan.phases) {
    const std::uint64_t msg = p.kind == CollectiveKind::kAllGather ? p.bytes : p.bytes / p.ring_size;
    const StepIo io = drive(p.kind, p.bytes, p.ring_size, cu_delay(spec, p.stride, msg), reduction_ns(msg, 50));
    EXPECT_EQ(io.finishes, 1);
    times.push_back(io.finish_time);
  }
  return times;
}

SystemSpec ring_system(std::size_t tokens, bool local_bw_aware, bool one_flat = false) {
  SystemSpec spec;
  spec.preferred_dataset_splits = 1;
  spec.collective_optimization =
      local_bw_aware ? CollectiveOptimization::kLocalBwAware : CollectiveOptimization::kBaseline;
  AlgorithmChoice choice;
  choice.one_flat = one_flat;
  for (auto& impl : spec.implementations) impl.assign(tokens, choice);
  return spec;
}

TEST(Ring, MultiDimensionalAllReduceMatchesTheReference) {
  // §5 multi-dim check, CU, 3-D [Ring 2 @ 200/50, FC 8 @ 100/500, Switch 4 @ 50/2000],
  // AR 1 MiB, splits 1, E = 10, local-mem-bw 50:
  //   localBWAware: RS(d0, 1 MiB)   T = floor(50 + 524288/214.75) = 2491, P = 31455: 33966
  //                 RS(d1, 512 KiB) T = floor(500 + 610.35) = 1110,     P = 3930:  35360
  //                 AR(d2, 64 KiB)  T = floor(4000 + 305.18) = 4305,    P = 981:   28843
  //                 AG(d1, 64 KiB)  T = 1110: 7 * 1120 + 10 = 7850
  //                 AG(d0, 512 KiB) T = 2491: 2501 + 10 = 2511;  total 108530
  //   baseline:     AR(d0) 36467 + AR(d1) 79271 + AR(d2) 100540 = 216278
  //   oneRing:      one AR over 64 NPUs charged at dim 0: c/n = 16384, T = floor(50 + 76.29)
  //                 = 126, P = 981: 126 * 136 + 63 * 981 + 10 = 78949
  const network::TopologySpec spec{{{network::DimensionKind::kRing, 2, 200, 50},
                                    {network::DimensionKind::kFullyConnected, 8, 100, 500},
                                    {network::DimensionKind::kSwitch, 4, 50, 2000}}};
  const network::Topology topology(spec);

  const ChunkPlan aware = plan_collective(ring_system(3, true), topology, CollectiveKind::kAllReduce, kMiB, ~0u);
  const std::vector<Tick> aware_times = phase_times(aware, spec);
  EXPECT_EQ(aware_times, (std::vector<Tick>{33966, 35360, 28843, 7850, 2511}));
  Tick total = 0;
  for (Tick t : aware_times) total += t;
  EXPECT_EQ(total, 108530u);

  const ChunkPlan base = plan_collective(ring_system(3, false), topology, CollectiveKind::kAllReduce, kMiB, ~0u);
  const std::vector<Tick> base_times = phase_times(base, spec);
  EXPECT_EQ(base_times, (std::vector<Tick>{36467, 79271, 100540}));
  total = 0;
  for (Tick t : base_times) total += t;
  EXPECT_EQ(total, 216278u);

  const ChunkPlan flat = plan_collective(ring_system(3, true, true), topology, CollectiveKind::kAllReduce, kMiB, ~0u);
  EXPECT_EQ(phase_times(flat, spec), (std::vector<Tick>{78949}));
}

}  // namespace
}  // namespace chakrasim::system
