// Inputs that were quadratic (issue 14): one node with a million parents for `chakra inspect`,
// and one MSCCL thread block of 40,000 steps for `chakra msccl`. Builds each input in memory
// and prints the wall time of the tool's work on it, one line per case, for
// bench/run_benchmarks.sh to take medians of. Usage: chakrasim_tool_scaling_bench inspect|msccl
#include <chrono>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "chakra/et_file.h"
#include "chakra/trace_builder.h"
#include "tools/inspect/inspector.h"
#include "tools/msccl/msccl_converter.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void inspect_many_parents() {
  constexpr int kParents = 1000000;
  chakrasim::chakra::TraceBuilder b;
  chakrasim::chakra::Trace t;
  for (int i = 0; i < kParents; ++i) b.comp("p", 1);
  t = b.trace();
  auto& sink = t.nodes.emplace_back();
  sink.set_id(kParents);
  sink.set_name("sink");
  sink.set_type(ChakraProtoMsg::COMP_NODE);
  for (int i = 0; i < kParents; ++i) sink.add_data_deps(static_cast<std::uint64_t>(i));
  const auto start = Clock::now();
  const auto summary = chakrasim::tools::summarize_trace(t, "many_parents.et");
  std::printf("case=inspect_1e6_parents wall_s=%.3f problems=%zu\n", seconds_since(start), summary.problems.size());
}

void msccl_long_block() {
  constexpr int kSteps = 40000;
  auto block = [&](int gpu, int peer) {
    std::string steps;
    for (int s = 0; s < kSteps; ++s) {
      steps += fmt::format(R"(<step s="{}" type="{}" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" )"
                           R"(deps="-1" hasdep="0"/>)",
                           s, s % 2 == 0 ? "s" : "r");
    }
    return fmt::format(R"(<gpu id="{}" i_chunks="1" o_chunks="0" s_chunks="0"><tb id="0" send="{}" recv="{}" )"
                       R"(chan="0">{}</tb></gpu>)",
                       gpu, peer, peer, steps);
  };
  const std::string xml = R"(<algo name="long" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="2" )"
                          R"(coll="allreduce" inplace="1">)" +
                          block(0, 1) + block(1, 0) + "</algo>";
  const auto start = Clock::now();
  const auto traces = chakrasim::tools::convert_msccl(xml, "long.xml", {"allreduce", 1 << 20});
  std::size_t bytes = 0;
  for (const auto& [gpu, trace] : traces) bytes += chakrasim::chakra::serialize_trace(trace).size();
  std::printf("case=msccl_40k_steps wall_s=%.3f bytes=%zu\n", seconds_since(start), bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "";
  if (which == "inspect") {
    inspect_many_parents();
  } else if (which == "msccl") {
    msccl_long_block();
  } else {
    std::fprintf(stderr, "usage: %s inspect|msccl\n", argv[0]);
    return 1;
  }
  return 0;
}
