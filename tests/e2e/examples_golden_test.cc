// Every example under examples/ is a full-output golden: run from its folder with every output
// on (--json, --stats, --timeline, --report), each output and stdout must equal the files under
// examples/<example>/golden/ byte for byte. Outputs over 256 KiB are pinned by their length and
// a 64-bit FNV-1a digest (<file>.digest) instead of their text, to keep the repository small.
//
// After a deliberate change of output, rewrite the goldens with
//   CHAKRASIM_UPDATE_GOLDENS=1 ctest -R ExampleGoldens
// and review the diff like code.
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace chakrasim::test {
namespace {

constexpr std::size_t kTextGoldenLimit = 256 * 1024;

struct Example {
  const char* dir;
  const char* workload;  // prefix inside the example's folder
  friend std::ostream& operator<<(std::ostream& os, const Example& e) { return os << e.dir; }
};

std::string digest_of(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{} bytes, fnv1a64 {:016x}\n", bytes.size(), h);
}

// Compares `actual` with golden `name` (text, or its digest when large), or rewrites it.
void check_golden(const std::filesystem::path& golden_dir, const std::string& name, const std::string& actual) {
  const bool large = actual.size() > kTextGoldenLimit;
  const std::filesystem::path path = golden_dir / (large ? name + ".digest" : name);
  const std::string expected_text = large ? digest_of(actual) : actual;
  if (std::getenv("CHAKRASIM_UPDATE_GOLDENS") != nullptr) {
    std::filesystem::create_directories(golden_dir);
    std::filesystem::remove(golden_dir / (large ? name : name + ".digest"));
    write_bytes(path, expected_text);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; run with CHAKRASIM_UPDATE_GOLDENS=1";
  const std::string golden = file_bytes(path);
  if (golden == expected_text) return;
  // Point at the first difference rather than printing megabytes.
  std::size_t at = 0;
  while (at < golden.size() && at < expected_text.size() && golden[at] == expected_text[at]) ++at;
  const std::size_t from = at < 200 ? 0 : at - 200;
  ADD_FAILURE() << path << " differs at byte " << at << "\n--- golden:\n"
                << golden.substr(from, 400) << "\n--- actual:\n"
                << expected_text.substr(from, 400);
}

class ExampleGoldens : public ::testing::TestWithParam<Example> {};

TEST_P(ExampleGoldens, EveryOutputEqualsItsGolden) {
  const Example& e = GetParam();
  const std::filesystem::path dir = std::filesystem::path(CHAKRASIM_SOURCE_DIR) / "examples" / e.dir;
  const std::filesystem::path out = temp_dir(std::string("example_golden_") + e.dir);
  const CommandResult r =
      run_binary({"run", "--workload", e.workload, "--system", "system.json", "--network", "network.yml", "--json",
                  (out / "results.json").string(), "--stats", (out / "nodes.csv").string(), "--timeline",
                  (out / "timeline.json").string(), "--report", (out / "report").string()},
                 dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // stderr names the report's path: the temporary folder becomes OUT.
  std::string stderr_text = r.err;
  for (std::size_t at; (at = stderr_text.find(out.string())) != std::string::npos;) {
    stderr_text.replace(at, out.string().size(), "OUT");
  }
  const std::filesystem::path golden = dir / "golden";
  check_golden(golden, "stdout.txt", r.out);
  check_golden(golden, "stderr.txt", stderr_text);
  check_golden(golden, "results.json", file_bytes(out / "results.json"));
  check_golden(golden, "nodes.csv", file_bytes(out / "nodes.csv"));
  check_golden(golden, "timeline.json", file_bytes(out / "timeline.json"));
  check_golden(golden, "report.html", file_bytes(out / "report" / "index.html"));
}

INSTANTIATE_TEST_SUITE_P(All, ExampleGoldens,
                         ::testing::Values(Example{"tutorial", "all_reduce"}, Example{"h100-node", "traces/workload"},
                                           Example{"cluster-2d", "traces/workload"},
                                           Example{"cluster-2d-nccl", "../cluster-2d/traces/workload"},
                                           Example{"cluster-3d", "traces/workload"}),
                         [](const auto& example) {
                           std::string n = example.param.dir;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace chakrasim::test
