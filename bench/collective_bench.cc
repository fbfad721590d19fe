// One collective on a large synthetic system, timed end to end in-process (building the
// inputs is not timed). Prints one line: wall seconds, peak RSS, the simulated result.
//
//   chakrasim_collective_bench <dims, e.g. 1024 or 16x32x32> <splits> <active-chunks> [bytes]
//                              [congestion-unaware|congestion-aware] [Ring|Switch]
//
// Every dimension is a Ring (or a Switch) of 50 GB/s and 500 ns links; the algorithm is ring in every
// dimension, localBWAware, endpoint delay 10 ns, local memory 50 GB/s; default size 1 GiB.
// With CHAKRASIM_FULL_RUN=1 in the environment every NPU is simulated (no symmetric run), which
// is how bench/run_benchmarks.sh checks that both give the same figure.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "chakra/trace_builder.h"
#include "sim/simulation.h"

using namespace chakrasim;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DIMS SPLITS ACTIVE [BYTES]\n", argv[0]);
    return 1;
  }
  sim::Inputs in;
  std::stringstream dims(argv[1]);
  std::string part;
  std::size_t npus = 1;
  const bool switches = argc > 6 && std::string(argv[6]) == "Switch";
  while (std::getline(dims, part, 'x')) {
    const auto n = static_cast<std::uint32_t>(std::stoul(part));
    in.network.dims.push_back({switches ? network::DimensionKind::kSwitch : network::DimensionKind::kRing, n, 50, 500});
    npus *= n;
  }
  in.system.preferred_dataset_splits = std::stoull(argv[2]);
  in.system.active_chunks_per_dimension = static_cast<std::uint32_t>(std::stoul(argv[3]));
  in.system.collective_optimization = system::CollectiveOptimization::kLocalBwAware;
  in.system.local_mem_bw_gb_per_s = 50;
  for (auto& impl : in.system.implementations) impl.assign(in.network.dims.size(), system::AlgorithmChoice{});
  const std::uint64_t bytes = argc > 4 ? std::stoull(argv[4]) : (1ull << 30);
  if (argc > 5) in.backend = argv[5];
  const char* full = std::getenv("CHAKRASIM_FULL_RUN");
  in.allow_symmetry = full == nullptr || std::string(full) != "1";
  chakra::TraceBuilder b;
  b.collective("all_reduce", chakra::CommType::kAllReduce, bytes);
  in.graphs.assign(npus, std::make_shared<const chakra::Graph>(chakra::Graph::build(b.trace(), "<bench>")));

  const auto start = std::chrono::steady_clock::now();
  const sim::Result r = sim::simulate(in);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("dims=%s npus=%zu splits=%s active=%s symmetric=%d wall_s=%.3f rss_mb=%.1f finish_ns=%llu events=%llu\n",
              argv[1], npus, argv[2], argv[3], r.symmetric ? 1 : 0, wall, static_cast<double>(usage.ru_maxrss) / 1024.0,
              static_cast<unsigned long long>(r.max_finish_ns()), static_cast<unsigned long long>(r.events));
  return r.all_finished() ? 0 : 2;
}
