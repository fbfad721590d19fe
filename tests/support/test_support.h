// Helpers shared by the tests: where the reference data is, building small inputs in code,
// running a simulation or the chakrasim binary.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "chakra/graph.h"
#include "chakra/trace_builder.h"
#include "core/error.h"
#include "sim/simulation.h"

namespace chakrasim::test {

// The message of the chakrasim::Error that `body` throws; a test failure (and "") if it throws
// nothing or another exception.
template <typename F>
std::string error_of(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected chakrasim::Error, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected chakrasim::Error, nothing was thrown";
  return {};
}

// ../shared/reference beside the checkout, or nullopt when this clone has none.
std::optional<std::filesystem::path> reference_dir();

// Skips the current test, with a message, when the reference data is absent.
#define CHAKRASIM_REQUIRE_REFERENCE(var)                                                       \
  auto var##_opt = ::chakrasim::test::reference_dir();                                         \
  if (!var##_opt) GTEST_SKIP() << "../shared/reference is not present in this clone; skipped"; \
  const std::filesystem::path var = *var##_opt

// Skips the current test in the sanitizer build (`make test-asan`), saying why. Only for accuracy
// checks that are slow there for a reason outside our code (ns-3's every packet goes through the
// sanitizer's allocator: ten times slower) while smaller tests run the same code of ours.
#if defined(__SANITIZE_ADDRESS__)
#define CHAKRASIM_SKIP_UNDER_SANITIZERS(why) GTEST_SKIP() << "skipped under the sanitizers: " << (why)
#else
#define CHAKRASIM_SKIP_UNDER_SANITIZERS(why) static_cast<void>(0)
#endif

// A fresh, empty directory under the build tree for this test's files.
std::filesystem::path temp_dir(const std::string& name);

// The bytes of a file ("" when it cannot be read), and writing `bytes` into one.
std::string file_bytes(const std::filesystem::path& path);
void write_bytes(const std::filesystem::path& path, const std::string& bytes);

// A network of the given dimensions: {kind, npus, GB/s, ns}.
network::TopologySpec network_of(std::initializer_list<network::DimensionSpec> dims);

// The reference's usual system settings: `algorithm`-only implementations (any token of the
// system JSON: "ring", "oneRing", "direct", "direct4", "halvingDoubling", ...) with one entry per
// logical dimension for every collective kind, splits, active chunks, LIFO, endpoint delay 10,
// local-mem-bw 50, localBWAware unless `baseline`.
system::SystemSpec system_of(const std::string& algorithm, std::size_t logical_dims, std::uint64_t splits,
                             std::uint32_t active_chunks, bool baseline = false);

// One implementation token as the system-config parser reads it; throws Error if unknown.
system::AlgorithmChoice algorithm_of(const std::string& token);

// The same graph for every one of `npus` ranks.
std::vector<std::shared_ptr<const chakra::Graph>> same_trace(const chakra::Trace& trace, std::size_t npus);

// One collective node per rank.
chakra::Trace single_collective(chakra::CommType type, std::uint64_t bytes);

// Runs the simulation and returns the result; fails the test on an Error.
sim::Result run(const sim::Inputs& inputs);

inline constexpr std::uint64_t kMiB = 1 << 20;

// One collective of `bytes` per NPU on every NPU of `net`, with system `sys`, on `backend`.
sim::Inputs one_collective(network::TopologySpec net, system::SystemSpec sys, chakra::CommType type,
                           std::uint64_t bytes, const std::string& backend = "congestion-unaware");

// Every one of the result's NPUs finished, at `expected` ns (and there are `npus` of them, when
// given).
void expect_all_finish(const sim::Result& r, Tick expected, std::optional<std::size_t> npus = std::nullopt);

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// Runs the built chakrasim binary with `args` (shell-quoted here), in directory `cwd` when given.
CommandResult run_binary(const std::vector<std::string>& args, const std::filesystem::path& cwd = {});
// `generate llm` and the flags of a small GPT (2 layers of 256, 4 heads, 128 tokens, a
// vocabulary of 1024), then `more`: a generated job that runs in a fraction of a second.
std::vector<std::string> small_llm(const std::vector<std::string>& more);
// The iteration time of `run`'s summary, as printed ("330.687 ms"; "" when absent).
std::string run_takes(const std::string& summary);
// Runs `program` (found on PATH when it has no slash) the same way.
CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::filesystem::path& cwd = {});

}  // namespace chakrasim::test
