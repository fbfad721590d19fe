// The timeline (Chrome / Perfetto trace JSON) and the per-node CSV, parsed back and checked
// against the run's own results: slice counts, durations summing to the per-NPU totals, chunks
// and phases nested inside their collective, no improperly overlapping slices on a track, and
// the same output from a symmetric run as from the full run.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/attributes.h"
#include "report/node_log.h"
#include "report/timeline.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using network::DimensionKind;
using nlohmann::json;

struct Slice {
  std::string name, cat;
  std::uint64_t tid = 0;
  Tick start = 0, end = 0;
};

Tick ns(const json& micros) { return static_cast<Tick>(std::llround(micros.get<double>() * 1000)); }

// Slices of every NPU (pid), in file order.
std::map<NpuId, std::vector<Slice>> slices_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  const json doc = json::parse(in);
  std::map<NpuId, std::vector<Slice>> out;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    out[e.at("pid").get<NpuId>()].push_back(
        {e.at("name"), e.at("cat"), e.at("tid"), ns(e.at("ts")), ns(e.at("ts")) + ns(e.at("dur"))});
  }
  return out;
}

std::vector<Slice> of_cat(const std::vector<Slice>& all, const std::string& cat) {
  std::vector<Slice> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out), [&](const Slice& s) { return s.cat == cat; });
  return out;
}

Tick total(const std::vector<Slice>& slices) {
  Tick sum = 0;
  for (const Slice& s : slices) sum += s.end - s.start;
  return sum;
}

// Rank r: GPU "fwd" 3 us; CPU "host" 2 us; a 1 MiB all-reduce after fwd; GPU "bwd" 5 us after
// fwd (overlapping the all-reduce); a 64 KiB send to and a receive from its pair partner r^1.
chakra::Trace rank_trace(NpuId r) {
  chakra::TraceBuilder b;
  b.comp("fwd", 3);
  chakra::Node& host = b.add(chakra::NodeType::kComp, "host");
  host.set_duration_micros(2);
  *host.add_attr() = chakra::make_bool("is_cpu_op", true);
  b.collective("grads", chakra::CommType::kAllReduce, 1 << 20, {0});
  b.comp("bwd", 5, {0});
  for (const bool send : {true, false}) {
    chakra::Node& n =
        b.add(send ? chakra::NodeType::kCommSend : chakra::NodeType::kCommRecv, send ? "send" : "recv", {2});
    *n.add_attr() = chakra::make_int32(send ? "comm_dst" : "comm_src", static_cast<std::int32_t>(r ^ 1));
    *n.add_attr() = chakra::make_int64("comm_size", 64 * 1024);
    *n.add_attr() = chakra::make_int32("comm_tag", 9);
  }
  return b.trace();
}

sim::Inputs mixed_inputs() {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 2, 50, 500}, {DimensionKind::kSwitch, 2, 25, 700}});
  in.system = system_of("ring", 2, 2, 1);  // 2 chunks
  for (NpuId r = 0; r < 4; ++r) {
    in.graphs.push_back(std::make_shared<const chakra::Graph>(chakra::Graph::build(rank_trace(r), "rank")));
  }
  return in;
}

struct Written {
  sim::Result result;
  std::filesystem::path timeline, csv;
};

Written simulate_and_write(const sim::Inputs& in, const std::string& name, std::vector<NpuId> npus = {}) {
  const auto n = static_cast<NpuId>(in.graphs.size());
  if (npus.empty()) {
    for (NpuId r = 0; r < n; ++r) npus.push_back(r);
  }
  report::NodeLog log(n);
  Written w;
  w.result = report::simulate_recorded(in, log);
  const auto dir = temp_dir("timeline_" + name);
  w.timeline = dir / "timeline.json";
  w.csv = dir / "nodes.csv";
  report::write_timeline(w.timeline.string(), in, w.result, log, npus);
  report::write_node_csv(w.csv.string(), in, log, npus);
  return w;
}

TEST(Timeline, SlicesMatchTheRunsTotals) {
  const Written w = simulate_and_write(mixed_inputs(), "mixed");
  ASSERT_TRUE(w.result.all_finished());
  const auto npus = slices_of(w.timeline);
  ASSERT_EQ(npus.size(), 4u);
  for (const auto& [npu, slices] : npus) {
    SCOPED_TRACE("NPU " + std::to_string(npu));
    const sim::NpuResult& r = w.result.npus[npu];
    const auto gpu = of_cat(slices, "GPU compute");
    ASSERT_EQ(gpu.size(), 2u);
    EXPECT_EQ(total(gpu), r.gpu_compute_ns);
    EXPECT_EQ(total(gpu), 8000u);
    const auto cpu = of_cat(slices, "CPU compute");
    ASSERT_EQ(cpu.size(), 1u);
    EXPECT_EQ(total(cpu), r.cpu_compute_ns);
    EXPECT_EQ(of_cat(slices, "send/recv").size(), 2u);
    const auto collectives = of_cat(slices, "collectives");
    ASSERT_EQ(collectives.size(), 1u);
    EXPECT_EQ(collectives[0].start, 3000u);  // after fwd
    EXPECT_THAT(collectives[0].name, ::testing::StartsWith("all-reduce 1.0 MiB"));
    const auto chunks = of_cat(slices, "collective chunks");
    const auto phases = of_cat(slices, "collective phases");
    ASSERT_EQ(chunks.size(), 2u);
    ASSERT_EQ(phases.size(), 6u);  // reduce-scatter, all-reduce, all-gather over the 2 dimensions
    for (const Slice& c : chunks) {
      EXPECT_GE(c.start, collectives[0].start);
      EXPECT_LE(c.end, collectives[0].end);
      int inside = 0;
      for (const Slice& p : phases) inside += p.tid == c.tid && p.start >= c.start && p.end <= c.end;
      EXPECT_EQ(inside, 3) << c.name;
    }
    Tick last = 0;
    for (const Slice& s : slices) last = std::max(last, s.end);
    EXPECT_EQ(last, r.finish_ns);
    // On one track, slices either nest or do not meet.
    for (const Slice& a : slices) {
      for (const Slice& b : slices) {
        if (&a == &b || a.tid != b.tid) continue;
        const bool apart = a.end <= b.start || b.end <= a.start;
        const bool nested = (a.start <= b.start && b.end <= a.end) || (b.start <= a.start && a.end <= b.end);
        EXPECT_TRUE(apart || nested) << a.name << " and " << b.name << " overlap on track " << a.tid;
      }
    }
  }
}

// A collective of one chunk and one phase: the collective's slice says it all, so there is no
// chunk or phase slice repeating it; with one chunk of several phases the phases stay, without a
// chunk slice. Phase names read "ring on dimension 1 of 2 NPUs, 256.0 KiB".
TEST(Timeline, NoSliceRepeatsTheOneAboveIt) {
  for (const std::size_t dims : {1u, 2u}) {
    sim::Inputs in;
    in.network = dims == 1 ? network_of({{DimensionKind::kRing, 8, 50, 500}})
                           : network_of({{DimensionKind::kRing, 4, 50, 500}, {DimensionKind::kRing, 2, 50, 500}});
    in.system = system_of("ring", dims, 1, 1);
    in.graphs = same_trace(single_collective(chakra::CommType::kAllGather, 256 << 10), 8);
    report::NodeLog log(8);
    const sim::Result r = report::simulate_recorded(in, log);
    const auto file = temp_dir("timeline_one_chunk") / "t.json";
    report::write_timeline(file.string(), in, r, log, {0});
    const auto slices = slices_of(file).at(0);
    EXPECT_EQ(of_cat(slices, "collectives").size(), 1u);
    EXPECT_EQ(of_cat(slices, "collective chunks").size(), 0u) << dims << " dimensions";
    const auto phases = of_cat(slices, "collective phases");
    if (dims == 1) {
      EXPECT_EQ(phases.size(), 0u);
    } else {
      ASSERT_EQ(phases.size(), 2u);
      EXPECT_EQ(phases[0].name, "phase 1: ring on dimension 1 of 2 NPUs, 256.0 KiB");  // localBWAware: highest first
    }
  }
}

// Only slices that overlap the window are written.
TEST(Timeline, WindowKeepsWhatOverlapsIt) {
  sim::Inputs in = mixed_inputs();
  report::NodeLog log(4);
  const sim::Result r = report::simulate_recorded(in, log);
  const auto file = temp_dir("timeline_window") / "t.json";
  report::write_timeline(file.string(), in, r, log, {0}, {0, 3000});
  const auto slices = slices_of(file).at(0);
  ASSERT_FALSE(slices.empty());
  for (const Slice& s : slices) EXPECT_LT(s.start, 3000u) << s.name;
  EXPECT_TRUE(of_cat(slices, "collectives").empty());  // the all-reduce starts at 3 us
}

// The size warning: what the estimate counts, and the advice it gives.
TEST(Timeline, LargeTimelinesAreAnnouncedWithTheWayToNarrowThem) {
  const sim::Inputs in = mixed_inputs();
  const std::uint64_t one = report::estimate_timeline_bytes(in, {0});
  EXPECT_GT(one, 0u);
  EXPECT_EQ(report::estimate_timeline_bytes(in, {0, 1, 2, 3}), 4 * one);
  EXPECT_EQ(report::timeline_size_warning(report::kLargeTimelineBytes, 4), "");
  EXPECT_EQ(report::timeline_size_warning(150'000'000, 256), "the timeline of 256 NPUs will be about 143.1 MiB, slow "
                                                             "to open; narrow it with --timeline-npus (e.g. "
                                                             "0-7) or --timeline-window (e.g. 0ms:50ms)");
  const CommandResult bad =
      run_binary({"run", "--workload", "x", "--system", "s", "--network", "n", "--timeline",
                  (temp_dir("timeline_bad_window") / "t.json").string(), "--timeline-window", "5ms"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, ::testing::HasSubstr("--timeline-window: \"5ms\" has no ':'; expected FROM:TO"));
}

TEST(Timeline, CsvHasARowPerNodeAndTheTotals) {
  const Written w = simulate_and_write(mixed_inputs(), "csv");
  std::ifstream in(w.csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "npu,id,name,type,start_ns,end_ns,duration_ns,bytes,group");
  std::map<NpuId, Tick> gpu, last;
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::vector<std::string> f;
    for (std::string field; std::getline(row, field, ',');) f.push_back(field);
    if (f.size() == 8) f.emplace_back();  // an empty group at the end of the line
    ASSERT_EQ(f.size(), 9u) << line;
    const auto npu = static_cast<NpuId>(std::stoul(f[0]));
    const Tick start = std::stoull(f[4]), end = std::stoull(f[5]);
    EXPECT_EQ(std::stoull(f[6]), end - start);
    if (f[2] == "fwd" || f[2] == "bwd") gpu[npu] += end - start;
    if (f[2] == "grads") {
      EXPECT_EQ(f[7], "1048576");
    }
    last[npu] = std::max(last[npu], end);
    ++rows;
  }
  EXPECT_EQ(rows, 4u * 6u);
  for (NpuId r = 0; r < 4; ++r) {
    EXPECT_EQ(gpu[r], w.result.npus[r].gpu_compute_ns);
    EXPECT_EQ(last[r], w.result.npus[r].finish_ns);
  }
}

TEST(Timeline, SymmetricRunWritesWhatTheFullRunWrites) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 4, 50, 500}, {DimensionKind::kSwitch, 2, 25, 700}});
  in.system = system_of("ring", 2, 4, 2);
  chakra::TraceBuilder b;
  b.comp("fwd", 4);
  b.collective("ar", chakra::CommType::kAllReduce, 3 << 20, {0});
  b.collective("ag", chakra::CommType::kAllGather, 1 << 20, {0});
  in.graphs = same_trace(b.trace(), 8);
  const Written fast = simulate_and_write(in, "symmetric");
  EXPECT_TRUE(fast.result.symmetric);
  in.allow_symmetry = false;
  const Written full = simulate_and_write(in, "full");
  EXPECT_FALSE(full.result.symmetric);
  const auto a = slices_of(fast.timeline), b2 = slices_of(full.timeline);
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(b2.size(), 8u);
  for (const auto& [npu, slices] : b2) {
    const auto& other = a.at(npu);
    ASSERT_EQ(other.size(), slices.size()) << "NPU " << npu;
    for (std::size_t i = 0; i < slices.size(); ++i) {
      EXPECT_EQ(other[i].name, slices[i].name);
      EXPECT_EQ(other[i].tid, slices[i].tid);
      EXPECT_EQ(other[i].start, slices[i].start);
      EXPECT_EQ(other[i].end, slices[i].end);
    }
  }
}

// Through the binary: --timeline with --timeline-npus, --stats, and bad selections.
TEST(Timeline, CommandLineSelectsNpus) {
  const auto dir = temp_dir("timeline_cli");
  const CommandResult demo = run_binary({"demo", "--write-inputs", dir.string()});
  ASSERT_EQ(demo.exit_code, 0) << demo.err;
  const auto base = std::vector<std::string>{"run",
                                             "--workload",
                                             (dir / "all_reduce").string(),
                                             "--system",
                                             (dir / "system.json").string(),
                                             "--network",
                                             (dir / "network.yml").string()};
  auto args = base;
  for (const std::string& a :
       {std::string("--timeline"), (dir / "t.json").string(), std::string("--timeline-npus"), std::string("1,5-6"),
        std::string("--stats"), (dir / "s.csv").string(), std::string("-q")}) {
    args.push_back(a);
  }
  const CommandResult r = run_binary(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto npus = slices_of(dir / "t.json");
  std::vector<NpuId> pids;
  for (const auto& [npu, s] : npus) pids.push_back(npu);
  EXPECT_EQ(pids, (std::vector<NpuId>{1, 5, 6}));
  std::ifstream csv(dir / "s.csv");
  std::string line;
  std::size_t rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 1u + 3u);  // header + one all-reduce node on each of 3 NPUs

  for (const std::string bad : {"8", "3-1", "x", "1,,2"}) {
    auto bad_args = base;
    bad_args.insert(bad_args.end(), {"--timeline", (dir / "bad.json").string(), "--timeline-npus", bad});
    const CommandResult e = run_binary(bad_args);
    EXPECT_EQ(e.exit_code, 1) << bad;
    EXPECT_THAT(e.err, ::testing::HasSubstr("--timeline-npus: \"" + (bad == "1,,2" ? std::string() : bad) + "\""))
        << bad;
  }
}

}  // namespace
}  // namespace chakrasim::test

namespace chakrasim::test {
namespace {

// The progress hook: with no minimum interval it is called every 65536 events, with the
// simulated time and the counts growing and never past the totals.
TEST(Progress, ReportsGrowingFiguresWhileTheRunGoesOn) {
  sim::Inputs in;
  in.network = network_of({{DimensionKind::kRing, 64, 50, 500}});
  in.system = system_of("ring", 1, 4, 1);
  in.graphs = same_trace(single_collective(chakra::CommType::kAllReduce, 1 << 20), 64);
  in.allow_symmetry = false;  // enough events: 64 NPUs x 4 chunks x 126 steps
  std::vector<sim::Progress> seen;
  sim::Hooks hooks;
  hooks.progress = [&](const sim::Progress& p) { seen.push_back(p); };
  hooks.progress_every_s = 0;
  const sim::Result r = sim::simulate(in, hooks);
  ASSERT_TRUE(r.all_finished());
  ASSERT_GE(seen.size(), 2u);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].nodes, 64u);
    EXPECT_LE(seen[i].nodes_done, 64u);
    EXPECT_LE(seen[i].now, r.max_finish_ns());
    EXPECT_EQ(seen[i].events % 65536, 0u);
    if (i > 0) {
      EXPECT_GT(seen[i].events, seen[i - 1].events);
      EXPECT_GE(seen[i].now, seen[i - 1].now);
    }
  }
}

}  // namespace
}  // namespace chakrasim::test
