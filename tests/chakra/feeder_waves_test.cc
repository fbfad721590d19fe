// Dependency resolution against the reference feeders' goldens (golden/feeder): issue every
// free node at once, finish them all, repeat. Each "wave" lists the node ids issuable at one
// step, in ascending order; our Graph must give the same waves as Chakra's v3 feeder (the one
// ASTRA-sim uses, data and control dependencies) and the old v1 feeder (identical on these
// DAGs, as docs/chakra-format.md §2 notes).
#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chakra/et_file.h"
#include "chakra/graph.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The waves of `trace` in the goldens' text form, without the last ("finished ...") line.
std::string waves(const chakra::Trace& trace, std::size_t& finished) {
  const chakra::Graph g = chakra::Graph::build(trace, "golden");
  std::string out = fmt::format("GM version='{}' attrs={}\n", trace.metadata.version(), trace.metadata.attr_size());
  std::vector<std::uint32_t> waiting(g.size());
  std::vector<std::uint32_t> free;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    waiting[i] = g.parent_count(i);
    if (waiting[i] == 0) free.push_back(i);
  }
  finished = 0;
  while (!free.empty()) {
    std::vector<std::uint64_t> ids;
    for (const std::uint32_t i : free) ids.push_back(g.id(i));
    std::sort(ids.begin(), ids.end());
    out += "wave:";
    for (const std::uint64_t id : ids) out += fmt::format(" {}", id);
    out += "\n";
    std::vector<std::uint32_t> next;
    for (const std::uint32_t i : free) {
      ++finished;
      for (const std::uint32_t c : g.children(i)) {
        if (--waiting[c] == 0) next.push_back(c);
      }
    }
    free = std::move(next);
  }
  return out;
}

class FeederWaves : public ::testing::TestWithParam<const char*> {};

TEST_P(FeederWaves, MatchBothReferenceFeeders) {
  CHAKRASIM_REQUIRE_REFERENCE(ref);
  const std::string name = GetParam();  // e.g. "text_converter/data3.0"
  const std::string stem = std::filesystem::path(name).filename().string();
  const chakra::Trace trace = chakra::read_trace((ref / "golden" / (name + ".et")).string());
  std::size_t finished = 0;
  const std::string ours = waves(trace, finished);
  EXPECT_EQ(ours + fmt::format("finished {} ongoing=0\n", finished),
            slurp(ref / "golden" / "feeder" / (stem + ".v3_waves.txt")));
  const std::string without_metadata = ours.substr(ours.find('\n') + 1);  // v1 prints no metadata line
  EXPECT_EQ(without_metadata + fmt::format("finished {} hasNodesToIssue=0\n", finished),
            slurp(ref / "golden" / "feeder" / (stem + ".v1_waves.txt")));
}

INSTANTIATE_TEST_SUITE_P(Goldens, FeederWaves,
                         ::testing::Values("text_converter/data3.0", "text_converter/dlrm.0",
                                           "pytorch_converter/hostonly_1.0.2.0",
                                           "pytorch_converter/synthetic_etplus.0"),
                         [](const auto& golden) {
                           std::string n = std::filesystem::path(golden.param).filename().string();
                           std::replace_if(
                               n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return n;
                         });

}  // namespace
}  // namespace chakrasim::test
