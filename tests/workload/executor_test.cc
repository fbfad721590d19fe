// The workload executor alone, against a stub system layer (no network): the slot rules, the
// order ready nodes are issued in, and zero-time nodes. Every communication operation the stub
// gets completes `kCommNs` later, so each test's times follow from the rules by hand.
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "chakra/attributes.h"
#include "chakra/trace_builder.h"
#include "core/event_queue.h"
#include "core/npu_timers.h"
#include "memory/remote_memory.h"
#include "system/comm.h"
#include "workload/executor.h"

namespace chakrasim::test {
namespace {

using chakra::NodeType;
constexpr Tick kCommNs = 3000;

// Completes every operation kCommNs after it was asked for, through the executor's timers.
class StubComm final : public system::Comm {
 public:
  explicit StubComm(NpuTimers& timers) : timers_(timers) {}
  void start_collective(NpuId npu, const system::CollectiveRequest&, std::uint64_t token) override {
    later(npu, token);
  }
  void send(NpuId npu, NpuId, std::uint64_t, std::int64_t, std::uint64_t token) override { later(npu, token); }
  void receive(NpuId npu, NpuId, std::uint64_t, std::int64_t, std::uint64_t token) override { later(npu, token); }
  void register_group(NpuId, std::uint32_t, std::vector<NpuId>) override {}

 private:
  void later(NpuId npu, std::uint64_t token) { timers_.schedule(npu, kCommNs, TimerOwner::kSystem, 0, token); }
  NpuTimers& timers_;
};

struct Span {
  std::uint32_t node;
  Tick start;
  Tick end;
};

// Records node starts in the order they happen, with their ends.
class Recorder final : public workload::NodeObserver {
 public:
  void on_node_start(NpuId npu, std::uint32_t node, Tick now) override {
    if (npu == 0) spans.push_back({node, now, kNeverTick});
  }
  void on_node_end(NpuId npu, std::uint32_t node, Tick now) override {
    for (Span& s : spans) {
      if (npu == 0 && s.node == node) s.end = now;
    }
  }
  std::vector<Span> spans;  // NPU 0's, in start order
  const Span& of(std::uint32_t node) const {
    for (const Span& s : spans) {
      if (s.node == node) return s;
    }
    ADD_FAILURE() << "node " << node << " never started";
    return spans.front();
  }
};

// NPU 0 runs `trace`; NPU 1 (a peer for sends) runs nothing. Runs to the end.
struct StubRun {
  explicit StubRun(const chakra::Trace& trace) {
    graphs.push_back(std::make_shared<const chakra::Graph>(chakra::Graph::build(trace, "npu0")));
    graphs.push_back(std::make_shared<const chakra::Graph>(chakra::Graph::build(chakra::TraceBuilder().trace(), "npu"
                                                                                                                "1")));
    EventQueue queue;
    NpuTimers timers(queue, 2);
    memory::RemoteMemory memory({}, 2);
    workload::Executor executor(graphs, {}, memory, timers, queue);
    StubComm comm(timers);
    executor.attach(comm);
    executor.observe(&recorder);
    executor.start();
    while (!queue.empty()) {
      timers.fire(queue.pop(), [&](const TimerEntry& entry) {
        if (entry.owner == TimerOwner::kWorkload) executor.handle_timer(entry);
        else executor.on_comm_done(entry.npu, entry.arg);
      });
    }
    totals = executor.totals(0);
  }
  std::vector<std::shared_ptr<const chakra::Graph>> graphs;
  Recorder recorder;
  workload::NpuTotals totals;
};

TEST(Executor, EachSlotRunsOneNodeAndReceivesNeedNone) {
  // All six nodes are ready at 0. GPU slot: comp 0 (10 us), then comp 1. Comm slot: the
  // all-reduce 2, then send 3 when it completes (kCommNs). Receive 4 needs no slot, the CPU
  // comp 5 has a slot of its own: both start at 0.
  chakra::TraceBuilder b;
  b.comp("gpu a", 10);
  b.comp("gpu b", 10);
  b.collective("ar", chakra::CommType::kAllReduce, 1024);
  b.send("send", 1, 0, 64);
  b.recv("recv", 1, 0, 64);
  b.node(NodeType::kComp, "cpu").duration_micros(10).is_cpu_op(true);
  const StubRun run(b.trace());
  const Recorder& r = run.recorder;
  EXPECT_EQ(r.of(0).start, 0u);
  EXPECT_EQ(r.of(1).start, 10000u);  // after comp 0: one GPU node at a time
  EXPECT_EQ(r.of(2).start, 0u);
  EXPECT_EQ(r.of(3).start, kCommNs);  // after the all-reduce: one comm node at a time
  EXPECT_EQ(r.of(4).start, 0u);
  EXPECT_EQ(r.of(5).start, 0u);
  EXPECT_TRUE(run.totals.finished);
  EXPECT_EQ(run.totals.finish_ns, 20000u);
  EXPECT_EQ(run.totals.gpu_compute_ns, 20000u);
  EXPECT_EQ(run.totals.cpu_compute_ns, 10000u);
}

TEST(Executor, ReadyNodesGoInAscendingIdNotInTheOrderTheyBecameReady) {
  // Nodes 0 and 2 are ready at 0; 1 waits for 0. At 0 the GPU takes 0 (lowest id); at 10 us,
  // 1 (freed just now) and 2 (ready since 0) compete and 1 goes first: ids decide, not arrival.
  chakra::TraceBuilder b;
  b.comp("first", 10);
  b.comp("child of first", 1, {0});
  b.comp("ready early", 1);
  const StubRun run(b.trace());
  const auto& s = run.recorder.spans;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].node, 0u);
  EXPECT_EQ(s[1].node, 1u);
  EXPECT_EQ(s[1].start, 10000u);
  EXPECT_EQ(s[2].node, 2u);
  EXPECT_EQ(s[2].start, 11000u);
}

TEST(Executor, WithinATickLowerIdsStartFirstAcrossSlots) {
  // Node 0 (a collective) and node 1 (a compute) start at the same tick; the pass visits the
  // ready nodes of every slot in ascending id, so 0 starts before 1, and 2 (a receive) last.
  chakra::TraceBuilder b;
  b.collective("ar", chakra::CommType::kAllReduce, 1024);
  b.comp("c", 1);
  b.recv("recv", 1, 0, 64);
  const StubRun run(b.trace());
  const auto& s = run.recorder.spans;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].node, 0u);
  EXPECT_EQ(s[1].node, 1u);
  EXPECT_EQ(s[2].node, 2u);
  for (const Span& span : s) EXPECT_EQ(span.start, 0u);
}

TEST(Executor, ZeroTimeNodesFreeTheirChildrenInTheSamePass) {
  // INVALID -> METADATA -> comp: the two zero-time nodes complete while they are issued, and
  // the comp they free starts at 0 in the same pass (the reference would wait for another
  // completion that never comes). The NPU finishes when the comp does.
  chakra::TraceBuilder b;
  b.node(NodeType::kInvalid, "nothing");
  b.node(NodeType::kMetadata, "meta").data_deps({0});
  b.comp("work", 5, {1});
  const StubRun run(b.trace());
  const Recorder& r = run.recorder;
  EXPECT_EQ(r.of(0).end, 0u);
  EXPECT_EQ(r.of(1).end, 0u);
  EXPECT_EQ(r.of(2).start, 0u);
  EXPECT_EQ(run.totals.finish_ns, 5000u);
  EXPECT_EQ(run.totals.nodes_done, 3u);
}

TEST(Executor, ANodeWaitsForAllItsParents) {
  // 2 depends on 0 (a 10 us comp) and on 1 (a collective done at kCommNs): it starts at 10 us.
  chakra::TraceBuilder b;
  b.comp("long", 10);
  b.collective("ar", chakra::CommType::kAllReduce, 1024);
  b.comp("joins both", 1, {0, 1});
  const StubRun run(b.trace());
  EXPECT_EQ(run.recorder.of(2).start, 10000u);
  EXPECT_EQ(run.totals.finish_ns, 11000u);
}

}  // namespace
}  // namespace chakrasim::test
