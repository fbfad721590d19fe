// `chakrasim sweep` (cli/sweep_command.cc): the issue's example, resuming, a failing point recorded
// while the sweep goes on, generated workloads shared between points, the same table from
// threads, MPI ranks and Slurm-style shards, and the page loading in headless Chromium.
#include <cstdlib>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "sweep/sweep_spec.h"
#include "sweep/sweep_table.h"

namespace chakrasim::test {
namespace {

using ::testing::HasSubstr;

std::filesystem::path binary_dir() { return std::filesystem::path(CHAKRASIM_BINARY).parent_path(); }

// The demo's files (the tutorial all-reduce on an 8-NPU ring) and the issue's spec over them.
std::filesystem::path demo_sweep(const std::string& name) {
  const auto dir = temp_dir(name);
  EXPECT_EQ(run_binary({"demo", "--write-inputs", (dir / "in").string()}).exit_code, 0);
  write_bytes(dir / "sweep.yaml", "base: { workload: " + (dir / "in/all_reduce").string() +
                                      ", system: " + (dir / "in/system.json").string() +
                                      ", network: " + (dir / "in/network.yml").string() +
                                      " }\n"
                                      "axes:\n"
                                      "  network.bandwidth[0]: [25, 50, 100, 200]\n"
                                      "  system.all-reduce-implementation: [[ring], [direct], [halvingDoubling]]\n"
                                      "cost: network.bandwidth[0]\n");
  return dir;
}

sweep::Table table_of(const std::filesystem::path& csv, const std::vector<std::string>& axes) {
  return sweep::parse_csv(file_bytes(csv), csv.string(), sweep::table_header(axes));
}

const std::vector<std::string> kDemoAxes = {"network.bandwidth[0]", "system.all-reduce-implementation"};

// Every cell but the wall time, which differs from run to run.
std::vector<std::vector<std::string>> figures(const sweep::Table& t) {
  std::vector<std::vector<std::string>> out;
  for (const auto& [point, row] : t.rows) out.emplace_back(row.cells.begin(), row.cells.end() - 1);
  return out;
}

TEST(Sweep, TheIssuesExample) {
  const auto dir = demo_sweep("sweep_example");
  const CommandResult r = run_binary(
      {"sweep", (dir / "sweep.yaml").string(), "--out", (dir / "r.csv").string(), "--html", (dir / "r.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ran 12 points (0 failed)"));
  const sweep::Table t = table_of(dir / "r.csv", kDemoAxes);
  ASSERT_EQ(t.rows.size(), 12u);
  // Point 3: 50 GB/s and ring, the tutorial's own system: 117780 ns, all of it exposed
  // collective time; busbw 1 MiB / 117780 ns x 2 x 7/8.
  const std::vector<std::string>& tutorial = t.rows.at(3).cells;
  EXPECT_EQ(tutorial[1], "50");
  EXPECT_EQ(tutorial[2], R"(["ring"])");
  EXPECT_EQ(tutorial[3], "ok");
  EXPECT_EQ(tutorial[5], "117780");
  EXPECT_EQ(tutorial[6], "8");
  EXPECT_EQ(tutorial[9], "117780");
  EXPECT_EQ(tutorial[14], fmt::format("{:.6g}", 1048576.0 / 117780 * 2 * 7 / 8));
  // Faster links, shorter all-reduces, for each algorithm.
  for (std::size_t algo = 0; algo < 3; ++algo) {
    EXPECT_LT(std::stoull(t.rows.at(9 + algo).cells[5]), std::stoull(t.rows.at(algo).cells[5]));
  }
  const std::string page = file_bytes(dir / "r.html");
  EXPECT_THAT(page, HasSubstr("Pareto front: iteration time against network.bandwidth[0]"));
  EXPECT_THAT(page, HasSubstr("<th>iteration_ns</th>"));
  // A re-run skips what is done; a lost row is run again.
  const CommandResult again = run_binary({"sweep", (dir / "sweep.yaml").string(), "--out", (dir / "r.csv").string()});
  EXPECT_THAT(again.out, HasSubstr("ran 0 points (0 failed), kept 12"));
  std::string text = file_bytes(dir / "r.csv");
  const std::size_t row7 = text.find("\n7,");
  text.erase(row7, text.find('\n', row7 + 1) - row7);
  write_bytes(dir / "r.csv", text);
  const CommandResult resumed = run_binary({"sweep", (dir / "sweep.yaml").string(), "--out", (dir / "r.csv").string()});
  EXPECT_THAT(resumed.out, HasSubstr("ran 1 points (0 failed), kept 11"));
  EXPECT_EQ(figures(table_of(dir / "r.csv", kDemoAxes)), figures(t));
}

// A point that fails records its error; the others run; a misspelt key is an error, not the base.
TEST(Sweep, AFailingPointIsRecordedAndTheSweepGoesOn) {
  const auto dir = demo_sweep("sweep_failing");
  write_bytes(dir / "bad.yaml", "base: { workload: " + (dir / "in/all_reduce").string() +
                                    ", system: " + (dir / "in/system.json").string() +
                                    ", network: " + (dir / "in/network.yml").string() +
                                    " }\naxes:\n  system.all-reduce-implementation: [[ring], [sideways]]\n"
                                    "  system.endpoint-delay: [10]\n");
  const CommandResult r = run_binary({"sweep", (dir / "bad.yaml").string(), "--out", (dir / "bad.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ran 2 points (1 failed)"));
  const sweep::Table t = table_of(dir / "bad.csv", {"system.all-reduce-implementation", "system.endpoint-delay"});
  EXPECT_EQ(t.rows.at(0).cells[3], "ok");
  EXPECT_EQ(t.rows.at(1).cells[3], "error");
  EXPECT_THAT(t.rows.at(1).cells[4], HasSubstr("sideways"));
  write_bytes(dir / "typo.yaml", "base: { workload: " + (dir / "in/all_reduce").string() +
                                     ", system: " + (dir / "in/system.json").string() + ", network: " +
                                     (dir / "in/network.yml").string() + " }\naxes:\n  system.endpoint-dealy: [5]\n");
  ASSERT_EQ(run_binary({"sweep", (dir / "typo.yaml").string(), "--out", (dir / "typo.csv").string()}).exit_code, 0);
  const sweep::Table typo = table_of(dir / "typo.csv", {"system.endpoint-dealy"});
  EXPECT_EQ(typo.rows.at(0).cells[2], "error");
  EXPECT_THAT(typo.rows.at(0).cells[3], HasSubstr("system.endpoint-dealy"));
  write_bytes(dir / "index.yaml", "base: { workload: " + (dir / "in/all_reduce").string() +
                                      ", system: " + (dir / "in/system.json").string() + ", network: " +
                                      (dir / "in/network.yml").string() + " }\naxes:\n  network.bandwidth[3]: [5]\n");
  ASSERT_EQ(run_binary({"sweep", (dir / "index.yaml").string(), "--out", (dir / "index.csv").string()}).exit_code, 0);
  EXPECT_THAT(table_of(dir / "index.csv", {"network.bandwidth[3]"}).rows.at(0).cells[3], HasSubstr("has no entry 3; "
                                                                                                   "expected an index "
                                                                                                   "below 1"));
  // A bad spec is the sweep's error: exit 1, naming the file.
  write_bytes(dir / "worse.yaml", "axes: {backend: [x]}\n");
  const CommandResult worse = run_binary({"sweep", (dir / "worse.yaml").string(), "--out", (dir / "w.csv").string()});
  EXPECT_EQ(worse.exit_code, 1);
  EXPECT_THAT(worse.err, HasSubstr("worse.yaml: base: missing"));
}

// Layouts of a generated job: one iteration generated per layout, shared by the points that
// differ only in the network; zipped TP and PP with DP derived.
TEST(Sweep, GeneratedWorkloadsAndDerivedAxes) {
  const auto dir = temp_dir("sweep_generated");
  write_bytes(dir / "gen.yaml", "base:\n  generate: llm --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 1024 "
                                "--global-batch 8\n"
                                "zip:\n  - { generate.tp: [1, 2, 4], generate.pp: [2, 2, 1] }\n"
                                "axes:\n  network.bandwidth[0]: [100, 400]\n"
                                "derived:\n  generate.dp: 8 / (generate.tp * generate.pp)\n");
  const CommandResult r = run_binary({"sweep", (dir / "gen.yaml").string(), "--out", (dir / "g.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("ran 6 points (0 failed)"));
  const sweep::Table t = table_of(dir / "g.csv", {"generate.tp", "generate.pp", "network.bandwidth[0]", "generate.dp"});
  for (const auto& [point, row] : t.rows) {
    EXPECT_EQ(row.cells[5], "ok") << row.cells[6];
    EXPECT_EQ(row.cells[8], "8");  // NPUs
  }
  EXPECT_EQ(t.rows.at(0).cells[4], "4");  // DP = 8 / (1 x 2)
  EXPECT_NE(t.rows.at(0).cells[7], t.rows.at(4).cells[7]);
  // A point is the run of the layout generated with its flags.
  ASSERT_EQ(run_binary(
                small_llm({"--global-batch", "8", "--tp", "2", "--pp", "2", "--dp", "2", "--out", (dir / "l").string(),
                           "--network-out", (dir / "n.yml").string(), "--system-out", (dir / "s.json").string()}))
                .exit_code,
            0);
  const CommandResult direct =
      run_binary({"run", "--workload", (dir / "l").string(), "--comm-groups", (dir / "l.groups.json").string(),
                  "--network", (dir / "n.yml").string(), "--system", (dir / "s.json").string()});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  write_bytes(dir / "one.yaml", "base:\n  generate: llm --layers 2 --hidden 256 --heads 4 --seq 128 --vocab 1024 "
                                "--global-batch 8 "
                                "--tp 2 --pp 2 --dp 2\naxes:\n  backend: [congestion-unaware]\n");
  ASSERT_EQ(run_binary({"sweep", (dir / "one.yaml").string(), "--out", (dir / "one.csv").string()}).exit_code, 0);
  const sweep::Table one = table_of(dir / "one.csv", {"backend"});
  EXPECT_THAT(direct.out, HasSubstr(fmt::format("sys[0] finished, {} cycles", one.rows.at(0).cells[4])));
}

// The same table from one thread, two threads, shards merged, and (where Open MPI is installed)
// four MPI ranks.
TEST(Sweep, ThreadsShardsAndMpiRanksGiveTheSameTable) {
  const auto dir = demo_sweep("sweep_distributed");
  const std::string spec = (dir / "sweep.yaml").string();
  ASSERT_EQ(run_binary({"sweep", spec, "--out", (dir / "one.csv").string(), "--jobs", "1"}).exit_code, 0);
  ASSERT_EQ(run_binary({"sweep", spec, "--out", (dir / "two.csv").string(), "--jobs", "2"}).exit_code, 0);
  const auto single = figures(table_of(dir / "one.csv", kDemoAxes));
  EXPECT_EQ(figures(table_of(dir / "two.csv", kDemoAxes)), single);
  // Slurm: the scripts, then what the array and the merge job would run.
  const CommandResult slurm =
      run_binary({"sweep", spec, "--out", (dir / "merged.csv").string(), "--slurm", (dir / "slurm").string()});
  ASSERT_EQ(slurm.exit_code, 0) << slurm.err;
  const std::string array = file_bytes(dir / "slurm/sweep.sbatch");
  EXPECT_THAT(array, HasSubstr("#SBATCH --array=0-11"));
  EXPECT_THAT(array, HasSubstr("--shard ${SLURM_ARRAY_TASK_ID}/12"));
  EXPECT_THAT(file_bytes(dir / "slurm/merge.sbatch"), HasSubstr("--merge"));
  EXPECT_THAT(file_bytes(dir / "slurm/submit.sh"), HasSubstr("--dependency=afterok:"));
  std::vector<std::string> merge = {"sweep", spec, "--out", (dir / "merged.csv").string(), "--merge"};
  for (int s = 0; s < 3; ++s) {
    const std::string part = (dir / ("part-" + std::to_string(s) + ".csv")).string();
    ASSERT_EQ(run_binary({"sweep", spec, "--shard", std::to_string(s) + "/3", "--out", part}).exit_code, 0);
    EXPECT_EQ(table_of(part, kDemoAxes).rows.size(), 4u);
    merge.push_back(part);
  }
  ASSERT_EQ(run_binary(merge).exit_code, 0);
  EXPECT_EQ(figures(table_of(dir / "merged.csv", kDemoAxes)), single);
  EXPECT_THAT(run_binary({"sweep", spec, "--shard", "3/3", "--out", (dir / "x.csv").string()}).err, HasSubstr("--shard "
                                                                                                              "3/3: "
                                                                                                              "expected"
                                                                                                              " I/N"));
  if (!std::filesystem::exists("/usr/bin/mpirun") || !std::filesystem::exists(binary_dir() / "chakrasim-sweep-mpi")) {
    GTEST_SKIP() << "Open MPI is not installed (make installs libopenmpi-dev and openmpi-bin); MPI part skipped";
  }
  // CI runs as root, which Open MPI refuses unless told.
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  // Containers often forbid the cross-memory attach Open MPI's shared-memory transport uses.
  ::setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
  const CommandResult mpi = run_program("/usr/bin/mpirun", {"--oversubscribe", "-np", "4", CHAKRASIM_BINARY, "sweep",
                                                            spec, "--out", (dir / "mpi.csv").string()});
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
  EXPECT_THAT(mpi.out, HasSubstr("on 4 processes x 1 thread"));
  EXPECT_EQ(figures(table_of(dir / "mpi.csv", kDemoAxes)), single);
}

TEST(Sweep, ThePageLoadsInHeadlessChromium) {
  if (!std::filesystem::exists("/usr/bin/chromium")) {
    GTEST_SKIP() << "chromium is not installed (make test installs it: Debian package chromium); skipped";
  }
  const auto dir = demo_sweep("sweep_page");
  ASSERT_EQ(run_binary({"sweep", (dir / "sweep.yaml").string(), "--out", (dir / "r.csv").string(), "--html",
                        (dir / "r.html").string()})
                .exit_code,
            0);
  const CommandResult dom =
      run_program("/usr/bin/chromium", {"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                        "--user-data-dir=" + (dir / "profile").string(), "--enable-logging=stderr",
                                        "--v=0", "--dump-dom", "file://" + (dir / "r.html").string()});
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  // The script ran to its end: it counted the table's columns.
  EXPECT_THAT(dom.out, HasSubstr("data-sortable-columns=\"20\""));
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find(":CONSOLE("), std::string::npos) << dom.err;
}

}  // namespace
}  // namespace chakrasim::test
