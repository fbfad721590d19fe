// The chakrasim binary end to end: the demo, `run` with our flags and with ASTRA-sim's, the
// JSON output, errors that name the file and key, and the deadlock exit code.
#include <cstdlib>
#include <fstream>

#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chakra/et_file.h"
#include "support/test_support.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

void write_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

// A 1 MiB ring all-reduce on 8 NPUs written to files: the tutorial demo as a user would run it.
struct DemoFiles {
  std::filesystem::path dir;
  std::string prefix, system, network;
  explicit DemoFiles(const std::string& name) : dir(temp_dir(name)) {
    prefix = (dir / "ar").string();
    const chakra::Trace trace = single_collective(chakra::CommType::kAllReduce, 1 << 20);
    for (int r = 0; r < 8; ++r) chakra::write_trace(chakra::rank_path(prefix, r), trace);
    system = (dir / "system.json").string();
    write_text(system, R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
      "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
      "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"],
      "collective-optimization": "localBWAware", "local-mem-bw": 50, "boost-mode": 0})");
    network = (dir / "network.yml").string();
    write_text(network, "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n");
  }
};

std::string expected_lines(Tick t, int npus) {
  std::string s;
  for (int r = 0; r < npus; ++r) {
    s += "sys[" + std::to_string(r) + "] finished, " + std::to_string(t) + " cycles, exposed communication " +
         std::to_string(t) + " cycles.\n";
  }
  return s;
}

TEST(Cli, DemoPrintsTheTutorialFigure) {
  const CommandResult r = run_binary({"demo"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(expected_lines(117780, 8)));
  EXPECT_THAT(r.out, HasSubstr("117.780 µs"));  // the summary speaks real units
}

TEST(Cli, RunWithOurFlagsAndQuiet) {
  DemoFiles f("cli_run_ours");
  const CommandResult r =
      run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network, "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_lines(117780, 8));
}

// Existing ASTRA-sim scripts: the reference's long flags with '=', no subcommand, and flags
// that have no effect there either.
TEST(Cli, RunWithAstraSimFlags) {
  DemoFiles f("cli_run_astra");
  write_text(f.dir / "memory.json", R"({"memory-type": "NO_MEMORY_EXPANSION"})");
  const CommandResult r = run_binary(
      {"--workload-configuration=" + f.prefix, "--system-configuration=" + f.system,
       "--network-configuration=" + f.network, "--remote-memory-configuration=" + (f.dir / "memory.json").string(),
       "--comm-group-configuration=empty", "--comm-scale=3", "--compute-scale=2", "--num-queues-per-dim=1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(expected_lines(117780, 8)));
}

// --injection-scale multiplies the explicit endpoint-delay: 15 steps of +10 ns (§9: 96515 for
// splits 1; with splits 4, 4 chunks x 15 x 10 ns more than 117780).
TEST(Cli, InjectionScale) {
  DemoFiles f("cli_injection");
  const CommandResult r = run_binary(
      {"run", "--workload", f.prefix, "--system", f.system, "--network", f.network, "--injection-scale=2", "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_lines(117780 + 4 * 15 * 10, 8));
}

TEST(Cli, JsonResults) {
  DemoFiles f("cli_json");
  const std::string json_path = (f.dir / "out.json").string();
  const CommandResult r =
      run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network, "--json", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(json_path);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["npus"].size(), 8u);
  EXPECT_EQ(j["max_finish_ns"], 117780);
  EXPECT_EQ(j["all_finished"], true);
  for (const auto& n : j["npus"]) {
    EXPECT_EQ(n["finish_ns"], 117780);
    EXPECT_EQ(n["exposed_comm_ns"], 117780);
  }
  // NPU 0's collectives with nccl-tests' figures, as in the report: the demo's 1 MiB ring
  // all-reduce on 8 NPUs takes 117780 ns; algbw = size / time, busbw = algbw x 2 x 7/8.
  ASSERT_EQ(j["collectives"].size(), 1u);
  const auto& c = j["collectives"][0];
  EXPECT_EQ(c["kind"], "all-reduce");
  EXPECT_EQ(c["npus"], 8);
  EXPECT_EQ(c["size_bytes"], 1048576);
  EXPECT_EQ(c["size_is"], "buffer");
  EXPECT_EQ(c["time_ns"], 117780);
  EXPECT_DOUBLE_EQ(c["algbw_gb_per_s"].get<double>(), 1048576.0 / 117780.0);
  EXPECT_DOUBLE_EQ(c["busbw_gb_per_s"].get<double>(), 1048576.0 / 117780.0 * 2 * 7 / 8);
}

// The JSON's all-gather size is its output, as nccl-tests prints it: 8 NPUs of 64 MiB shards end
// with 512 MiB each, and busbw = algbw x 7/8 (each NPU's link carries 7 of the 8 shards).
TEST(Cli, JsonAllGatherFiguresFollowNcclTests) {
  DemoFiles f("cli_json_all_gather");
  const auto traces = f.dir / "ag";
  const CommandResult g = run_binary({"generate", "micro", "--npus", "8", "--out", traces.string(), "--collective",
                                      "all_gather", "--coll-size-mb", "64"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const std::string json_path = (f.dir / "out.json").string();
  const CommandResult r = run_binary({"run", "--workload", (traces / "all_gather").string(), "--system", f.system,
                                      "--network", f.network, "--json", json_path, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(json_path);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["collectives"].size(), 1u);
  const auto& c = j["collectives"][0];
  EXPECT_EQ(c["kind"], "all-gather");
  EXPECT_EQ(c["comm_size_bytes"], 64u << 20);
  EXPECT_EQ(c["size_bytes"], 512u << 20);
  EXPECT_EQ(c["size_is"], "output");
  const double time_ns = c["time_ns"].get<double>();
  EXPECT_DOUBLE_EQ(c["algbw_gb_per_s"].get<double>(), (512u << 20) / time_ns);
  EXPECT_DOUBLE_EQ(c["busbw_gb_per_s"].get<double>(), (512u << 20) / time_ns * 7 / 8);
}

// A direct all-to-all on a switch, congestion-unaware, beats its links: the warning is on stderr
// even under -q, and names the backend to use instead.
TEST(Cli, ImpossibleBusBandwidthWarnsEvenWhenQuiet) {
  DemoFiles f("cli_impossible_busbw");
  const std::string prefix = (f.dir / "a2a").string();
  for (int r = 0; r < 8; ++r) {
    chakra::write_trace(chakra::rank_path(prefix, r), single_collective(chakra::CommType::kAllToAll, 64u << 20));
  }
  write_text(f.system, R"({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
      "preferred-dataset-splits": 1, "all-to-all-implementation": ["direct"], "all-reduce-implementation": ["ring"],
      "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
      "collective-optimization": "baseline", "local-mem-bw": 50, "boost-mode": 0})");
  write_text(f.network, "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 100.0 ]\nlatency: [ 500.0 ]\n");
  const CommandResult unaware =
      run_binary({"run", "--workload", prefix, "--system", f.system, "--network", f.network, "-q"});
  ASSERT_EQ(unaware.exit_code, 0) << unaware.err;
  EXPECT_THAT(unaware.err, HasSubstr("warning: all-to-all 64.0 MiB (node 0 on NPU 0, 8 NPUs)"));
  EXPECT_THAT(unaware.err, HasSubstr("above the 107.4 GB/s its links can carry"));
  EXPECT_THAT(unaware.err, HasSubstr("--backend congestion-aware"));
  const CommandResult aware = run_binary({"run", "--workload", prefix, "--system", f.system, "--network", f.network,
                                          "-q", "--backend", "congestion-aware"});
  ASSERT_EQ(aware.exit_code, 0) << aware.err;
  EXPECT_EQ(aware.err, "");
}

// --progress shows progress when stderr is not a terminal (here a pipe): plain lines, the first
// at once; without it, nothing.
TEST(Cli, ProgressIsForcedByItsFlag) {
  DemoFiles f("cli_progress");
  const CommandResult forced =
      run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network, "-q", "--progress"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_THAT(forced.err, HasSubstr("progress: loading traces: 1 of 8 ranks ("));
  EXPECT_EQ(forced.err.find('\r'), std::string::npos);  // no terminal codes in a log
  const CommandResult plain = run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find("progress:"), std::string::npos);
}

TEST(Cli, ConfigErrorNamesFileKeyAndExpectation) {
  DemoFiles f("cli_bad_network");
  write_text(f.network, "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ -5 ]\nlatency: [ 500.0 ]\n");
  const CommandResult r = run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(f.network));
  EXPECT_THAT(r.err, HasSubstr("bandwidth[0]"));
  EXPECT_THAT(r.err, HasSubstr("-5"));
  EXPECT_THAT(r.err, HasSubstr("expected a positive number"));
}

TEST(Cli, MissingWorkloadNamesThePath) {
  DemoFiles f("cli_missing_workload");
  const CommandResult r =
      run_binary({"run", "--workload", f.prefix + "_nope", "--system", f.system, "--network", f.network});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(f.prefix + "_nope.0.et"));
}

TEST(Cli, UnknownBackendListsTheValidOnes) {
  DemoFiles f("cli_backend");
  const CommandResult r =
      run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network, "--backend", "htsim"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("\"htsim\""));
  EXPECT_THAT(r.err, HasSubstr("congestion-unaware"));
}

TEST(Cli, RankCountMustMatchTheNetwork) {
  DemoFiles f("cli_rank_count");
  std::filesystem::remove(chakra::rank_path(f.prefix, 5));
  const CommandResult r = run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(chakra::rank_path(f.prefix, 5)));
  EXPECT_THAT(r.err, HasSubstr("8 NPUs"));
}

// An empty value is refused for every option that takes one, not read as 0 or as unset (CLI11
// would give --host-launch-us '' the 0 us the user never asked for).
TEST(Cli, AnEmptyOptionValueIsRefused) {
  const CommandResult launch = run_binary({"nccl-tests", "all_reduce", "-g", "8", "--host-launch-us", ""});
  EXPECT_EQ(launch.exit_code, 1);
  EXPECT_THAT(launch.err, HasSubstr("--host-launch-us: the value is empty; expected one"));
  DemoFiles f("cli_empty_value");
  const CommandResult backend =
      run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network, "--backend", " "});
  EXPECT_EQ(backend.exit_code, 1);
  EXPECT_THAT(backend.err, HasSubstr("--backend: the value is empty"));
  // ASTRA-sim's flags that do nothing take an empty value, as its scripts may pass one.
  const CommandResult folder = run_binary(
      {"run", "--workload", f.prefix, "--system", f.system, "--network", f.network, "--logging-folder", "", "-q"});
  EXPECT_EQ(folder.exit_code, 0) << folder.err;
}

// Output that could not be written is an error: a full disk must not leave exit 0 and no table.
TEST(Cli, AFailedWriteToStandardOutputIsAnError) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  const std::string command =
      std::string("'") + CHAKRASIM_BINARY + "' nccl-tests all_reduce -e 64 >/dev/full 2>/dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

// Timed as NCCL, a BROADCAST node is NCCL's broadcast, not the duration the trace records (the
// reference's reading, kept by default in ASTRA-sim's mode and by "broadcast-by-duration": 1).
TEST(Cli, UnderTheNcclModelABroadcastIsNcclsBroadcast) {
  const auto dir = temp_dir("cli_nccl_broadcast");
  const CommandResult gen = run_binary({"generate", "micro", "--npus", "8", "--out", (dir / "bc").string(),
                                        "--collective", "broadcast", "--size", "64MiB"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const std::string keys = R"("preferred-dataset-splits": 1, "all-gather-implementation": ["ring"],
    "nccl-gpu": "H100", "collectives": "nccl")";
  write_text(dir / "sys.json", "{" + keys + "}");
  write_text(dir / "sys1.json", "{" + keys + R"(, "broadcast-by-duration": 1})");
  write_text(dir / "net.yml", "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 419.095 ]\nlatency: [ 250 ]\n");
  const auto takes = [&](const char* system, const char* collectives) {
    const CommandResult r =
        run_binary({"run", "--workload", (dir / "bc" / "broadcast").string(), "--system", (dir / system).string(),
                    "--network", (dir / "net.yml").string(), "--collectives", collectives});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return run_takes(r.out);
  };
  // nccl-tests' broadcast of 64 MiB from rank 0 on 8 H100s, as `chakrasim nccl-tests broadcast`.
  const CommandResult table = run_binary({"nccl-tests", "broadcast", "-b", "64M", "-e", "64M"});
  const std::string us = table.out.substr(table.out.find(" 0 ", table.out.find("67108864")) + 3);
  const std::string nccl = takes("sys.json", "nccl");  // "194.558 µs" where the table prints 194.56
  EXPECT_THAT(nccl, HasSubstr(" \u00b5s"));
  EXPECT_NEAR(std::stod(nccl), std::stod(us), 0.006);
  EXPECT_EQ(takes("sys1.json", "nccl"), "1 ns");
  EXPECT_EQ(takes("sys.json", "astra-sim"), "1 ns");
}

// Rank 0 runs an all-reduce that rank 1 never joins: no event is left, rank 0 never finishes,
// and the run says so and exits with 2 (the reference exits 0 silently).
TEST(Cli, DeadlockIsReportedWithExitCodeTwo) {
  const auto dir = temp_dir("cli_deadlock");
  const std::string prefix = (dir / "t").string();
  chakra::write_trace(chakra::rank_path(prefix, 0), single_collective(chakra::CommType::kAllReduce, 1 << 20));
  chakra::TraceBuilder idle;
  idle.comp("idle", 1);
  chakra::write_trace(chakra::rank_path(prefix, 1), idle.trace());
  write_text(dir / "system.json",
             R"({"preferred-dataset-splits": 1, "all-reduce-implementation": ["ring"], "local-mem-bw": 50})");
  write_text(dir / "network.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n");
  const CommandResult r = run_binary({"run", "--workload", prefix, "--system", (dir / "system.json").string(),
                                      "--network", (dir / "network.yml").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("sys[1] finished, 1000 cycles"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("sys[0] finished")));
  EXPECT_THAT(r.err, HasSubstr("deadlock"));
  EXPECT_THAT(r.err, HasSubstr("NPU 0"));
  EXPECT_THAT(r.err, HasSubstr("node 0 (\"coll\""));
}

TEST(Cli, HelpNetworkListsKeysUnitsAndBackends) {
  // `run --help-network` prints the network YAML's table: each key with its unit and the
  // backends that read it; `run --help` points there.
  const CommandResult r = run_binary({"run", "--help-network"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* key : {"topology", "npus_count", "bandwidth", "latency"}) EXPECT_THAT(r.out, HasSubstr(key));
  EXPECT_THAT(r.out, HasSubstr("GB/s, GB = 2^30 B"));
  EXPECT_THAT(r.out, HasSubstr("read by: congestion-unaware, congestion-aware"));
  EXPECT_THAT(run_binary({"run", "--help"}).out, HasSubstr("chakrasim run --help-network"));
}

TEST(Cli, AMisspeltNetworkKeyWarnsOnStderrAndChangesNoOutput) {
  // The demo's network with an extra "bandwith" line (the real key is there too): stdout is the
  // clean run's, byte for byte, and stderr says which file, which key and what it may mean.
  // -q silences the warning as it does the system JSON's.
  DemoFiles f("cli_network_typo");
  const CommandResult clean = run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network});
  write_text(f.network, "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nbandwith: [ 100.0 ]\nlatency: [ "
                        "500.0 ]\n");
  const CommandResult typo = run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network});
  EXPECT_EQ(typo.exit_code, 0) << typo.err;
  EXPECT_EQ(typo.out, clean.out);
  EXPECT_THAT(typo.err,
              HasSubstr("warning: " + f.network + ": unknown key \"bandwith\" ignored; did you mean \"bandwidth\"?"));
  EXPECT_THAT(clean.err, ::testing::Not(HasSubstr("unknown key")));
  // --quiet hides the summary, not a warning: an ignored key changes what was simulated.
  const CommandResult quiet =
      run_binary({"run", "--workload", f.prefix, "--system", f.system, "--network", f.network, "-q"});
  EXPECT_THAT(quiet.err, HasSubstr("unknown key \"bandwith\" ignored"));
}

TEST(Cli, HelpSystemListsKeys) {
  const CommandResult r = run_binary({"run", "--help-system"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("preferred-dataset-splits"));
  EXPECT_THAT(r.out, HasSubstr("local-mem-bw"));
}

}  // namespace
}  // namespace chakrasim::test

namespace chakrasim::test {
namespace {

// `demo --write-inputs DIR` writes the example as files; running them gives the demo's figure.
TEST(Cli, DemoWritesItsInputs) {
  const auto dir = temp_dir("cli_demo_inputs") / "demo";
  const CommandResult w = run_binary({"demo", "--write-inputs", dir.string()});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  const CommandResult r =
      run_binary({"run", "--workload", (dir / "all_reduce").string(), "--system", (dir / "system.json").string(),
                  "--network", (dir / "network.yml").string(), "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected_lines(117780, 8));
}

}  // namespace
}  // namespace chakrasim::test
