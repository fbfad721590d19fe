// `chakra rescale` (tools/rescale/rescaler.h): a generated trace set re-scaled to another DP size
// simulates as the one generated at that size directly (ZeRO's sharded step and parameter
// gathers resized), its groups the generator's; layouts it cannot read are refused by name.
#include "tools/rescale/rescaler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/attributes.h"
#include "chakra/et_file.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> generate(const std::string& prefix, int dp, int batch) {
  return small_llm({"--tp", "2", "--pp", "2", "--sp", "--zero", "1", "--dp", std::to_string(dp), "--global-batch",
                    std::to_string(batch), "--out", prefix});
}

std::string run_time(const std::filesystem::path& dir, const std::string& prefix) {
  const CommandResult r = run_binary({"run", "--workload", prefix, "--comm-groups", prefix + ".groups.json",
                                      "--network", (dir / "n.yml").string(), "--system", (dir / "s.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return run_takes(r.out);
}

// 16 GPUs (TP 2, PP 2, DP 4, ZeRO 1, sequence parallel) to 64 (DP 16) and to 24 (DP 6, not a
// multiple): each replica keeps its 2 microbatches, so the direct generation has 4x (1.5x) the
// global batch. Same groups, same time to the ns.
TEST(Rescale, MatchesGeneratingTheNewSizeDirectly) {
  const auto dir = temp_dir("rescale_llm");
  const std::string small = (dir / "small").string();
  ASSERT_EQ(run_binary(generate(small, 4, 8)).exit_code, 0);
  for (const auto& [dp, batch] : {std::pair{16, 32}, std::pair{6, 12}}) {
    const std::string direct = (dir / ("direct" + std::to_string(dp))).string();
    std::vector<std::string> args = generate(direct, dp, batch);
    args.insert(args.end(), {"--network-out", (dir / "n.yml").string(), "--system-out", (dir / "s.json").string()});
    ASSERT_EQ(run_binary(args).exit_code, 0);
    const std::string re = (dir / ("re" + std::to_string(dp))).string();
    const CommandResult r = run_binary(
        {"chakra", "rescale", small, "--comm-groups", small + ".groups.json", "--dp", std::to_string(dp), "--out", re});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(fmt::format("rescaled 16 ranks (DP 4) to {} ranks (DP {})", 4 * dp, dp)));
    EXPECT_THAT(r.out, HasSubstr("sharded optimizer steps"));
    EXPECT_THAT(r.out, HasSubstr("not re-scaled faithfully:"));
    EXPECT_EQ(nlohmann::json::parse(file_bytes(re + ".groups.json")), nlohmann::json::parse(file_bytes(direct + ".group"
                                                                                                                "s."
                                                                                                                "jso"
                                                                                                                "n")))
        << dp;
    EXPECT_EQ(file_bytes(re + ".group-names.json"), file_bytes(direct + ".group-names.json"));
    EXPECT_EQ(run_time(dir, re), run_time(dir, direct)) << dp;
  }
}

TEST(Rescale, LayoutsItCannotReadAreRefused) {
  const auto dir = temp_dir("rescale_bad");
  const std::string p = (dir / "g").string();
  ASSERT_EQ(run_binary(generate(p, 4, 8)).exit_code, 0);
  auto error = [&](const std::string& groups, const std::string& dp) {
    const CommandResult r =
        run_binary({"chakra", "rescale", p, "--comm-groups", groups, "--dp", dp, "--out", (dir / "o").string()});
    EXPECT_EQ(r.exit_code, 1);
    return r.err;
  };
  EXPECT_THAT(error(p + ".groups.json", "0"), HasSubstr("--dp 0: expected a data-parallel size of at least 1"));
  // Without the names, the DP groups are unknown.
  write_bytes(dir / "copy.groups.json", file_bytes(p + ".groups.json"));
  EXPECT_THAT(error((dir / "copy.groups.json").string(), "8"), HasSubstr("no group names file"));
  // A DP group that is not one replica set of rank = low + stride x (d + DP x high).
  nlohmann::json groups = nlohmann::json::parse(file_bytes(p + ".groups.json"));
  const nlohmann::json names = nlohmann::json::parse(file_bytes(p + ".group-names.json"));
  for (auto it = names.begin(); it != names.end(); ++it) {
    if (it.value() == "DP") {
      groups[it.key()] = {1, 3, 5, 9};  // stride 2, but 9 where 7 belongs
      break;
    }
  }
  write_bytes(dir / "bad.groups.json", groups.dump());
  write_bytes(dir / "bad.group-names.json", names.dump());
  EXPECT_THAT(error((dir / "bad.groups.json").string(), "8"), HasSubstr("expected every DP group to be one replica"));
  // A node naming a group the file lacks.
  chakra::Trace trace = chakra::read_trace(chakra::rank_path(p, 3));
  for (chakra::Node& n : trace.nodes) {
    for (chakra::Attribute& a : *n.mutable_attr()) {
      if (a.name() == "pg_name") a = chakra::make_string("pg_name", "tp");
    }
  }
  chakra::write_trace(chakra::rank_path(p, 3), trace);
  EXPECT_THAT(error(p + ".groups.json", "8"), HasSubstr("g.3.et: node"));
  EXPECT_THAT(error(p + ".groups.json", "8"), HasSubstr("has pg_name \"tp\"; expected the id of a group of"));
}

}  // namespace
}  // namespace chakrasim::test
