// A training-like workload, end to end including reading the traces: every rank runs
// ITERATIONS x (compute 100 us -> 64 MiB all-reduce), chained, on NPUS NPUs (a 1-D ring, ring
// algorithm, splits 1). Writes the per-rank .et files into DIR first (not timed), then times
// reading them and simulating. Prints one line.
//
//   chakrasim_training_bench DIR [NPUS=1024] [ITERATIONS=1000]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "chakra/trace_builder.h"
#include "chakra/workload_files.h"
#include "sim/simulation.h"

using namespace chakrasim;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [NPUS] [ITERATIONS]\n", argv[0]);
    return 1;
  }
  const std::string dir = argv[1];
  const std::uint32_t npus = argc > 2 ? static_cast<std::uint32_t>(std::stoul(argv[2])) : 1024;
  const int iterations = argc > 3 ? std::stoi(argv[3]) : 1000;
  std::filesystem::create_directories(dir);
  chakra::TraceBuilder b;
  for (int i = 0; i < iterations; ++i) {
    const std::uint64_t prev = b.next_id();
    if (i == 0) {
      b.comp("compute", 100);
    } else {
      b.comp("compute", 100, {prev - 1});
    }
    b.collective("grad_all_reduce", chakra::CommType::kAllReduce, 64ull << 20, {b.next_id() - 1});
  }
  const std::string prefix = dir + "/train";
  for (std::uint32_t r = 0; r < npus; ++r) chakra::write_trace(chakra::rank_path(prefix, r), b.trace());

  const auto start = std::chrono::steady_clock::now();
  sim::Inputs in;
  in.network.dims.push_back({network::DimensionKind::kRing, npus, 50, 500});
  in.system.preferred_dataset_splits = 1;
  in.system.local_mem_bw_gb_per_s = 50;
  for (auto& impl : in.system.implementations) impl.assign(1, system::AlgorithmChoice{});
  in.graphs = chakra::load_workload(prefix, npus);
  const sim::Result r = sim::simulate(in);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("npus=%u iterations=%d wall_s=%.3f rss_mb=%.1f finish_ns=%llu events=%llu symmetric=%d\n", npus,
              iterations, wall, static_cast<double>(usage.ru_maxrss) / 1024.0,
              static_cast<unsigned long long>(r.max_finish_ns()), static_cast<unsigned long long>(r.events),
              r.symmetric ? 1 : 0);
  return r.all_finished() ? 0 : 2;
}
