// `chakrasim sweep SPEC.yaml`: every point of a design-space sweep in one process (or one MPI
// job, or a Slurm job array), one table row per point (docs/sweep.md).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/sweep_distributor.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_path.h"
#include "core/read_file.h"
#include "sweep/sweep_html.h"
#include "sweep/sweep_spec.h"
#include "sweep/sweep_table.h"

namespace chakrasim::cli {
namespace {

PointDistributor* mpi_distributor = nullptr;

struct SweepArgs {
  std::string spec, out, html, shard, slurm;
  std::vector<std::string> merge;
  std::size_t jobs = 0;  // 0: every core (1 per process under MPI)
  bool quiet = false;
};

// Threads of this process take the next point as they finish one.
class ThreadDistributor final : public PointDistributor {
 public:
  bool run(const SweepRunner& runner, const std::vector<std::size_t>& todo, std::size_t threads,
           const std::function<void(sweep::Row)>& on_row) override {
    run_points_on_threads(runner, todo, threads, on_row);
    return true;
  }
  std::size_t processes() const override { return 1; }
};

// Under mpirun without the MPI binary's distributor: hand over to the binary built with MPI.
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

[[noreturn]] void exec_mpi_binary() {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::filesystem::path mpi = self.parent_path() / "chakrasim-sweep-mpi";
  std::error_code ec;
  if (!std::filesystem::exists(mpi, ec)) {
    fail("sweep: started by an MPI launcher, but {} is not built (it is built when Open MPI's headers are found: "
         "Debian's libopenmpi-dev; make deps installs it)",
         mpi.string());
  }
  std::vector<std::string> args = arguments();
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(mpi.c_str(), argv.data());
  fail("sweep: could not start {}", mpi.string());
}

// "i/N": this shard's points are those with index % N == i.
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  unsigned long i = 0, n = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lu/%lu%c", &i, &n, &extra) != 2 || n == 0 || i >= n ||
      text.find_first_not_of("0123456789/") != std::string::npos) {
    fail("--shard {}: expected I/N with 0 <= I < N, e.g. 3/16", text);
  }
  return {i, n};
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A Slurm job array of `shards` tasks, each a shard of the points, and a merge job after them.
void write_slurm(const SweepArgs& a, std::size_t points) {
  namespace fs = std::filesystem;
  prepare_output_dir(a.slurm, "--slurm");
  const std::size_t shards = std::min<std::size_t>(points, 64);
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string spec = fs::absolute(a.spec).string();
  const std::string dir = fs::absolute(a.slurm).string();
  const std::string out = fs::absolute(a.out).string();
  write_file_atomically(a.slurm + "/sweep.sbatch",
                        fmt::format("#!/bin/bash\n"
                                    "# chakrasim sweep {}: {} points in {} array tasks; submit with submit.sh.\n"
                                    "#SBATCH --job-name=chakrasim-sweep\n"
                                    "#SBATCH --array=0-{}\n"
                                    "#SBATCH --output={}/shard-%a.log\n"
                                    "#SBATCH --cpus-per-task=1\n"
                                    "exec {} sweep {} --shard ${{SLURM_ARRAY_TASK_ID}}/{} --jobs "
                                    "${{SLURM_CPUS_PER_TASK:-1}} --out {}/part-${{SLURM_ARRAY_TASK_ID}}.csv --quiet\n",
                                    spec, points, shards, shards - 1, quoted(dir), quoted(self), quoted(spec), shards,
                                    quoted(dir)),
                        "the Slurm array script");
  std::string parts;
  for (std::size_t s = 0; s < shards; ++s) parts += fmt::format(" {}", quoted(fmt::format("{}/part-{}.csv", dir, s)));
  write_file_atomically(a.slurm + "/merge.sbatch",
                        fmt::format("#!/bin/bash\n"
                                    "# Merges the array's parts into one table (and its page).\n"
                                    "#SBATCH --job-name=chakrasim-sweep-merge\n"
                                    "#SBATCH --output={}/merge.log\n"
                                    "exec {} sweep {} --merge{} --out {}{}\n",
                                    quoted(dir), quoted(self), quoted(spec), parts, quoted(out),
                                    a.html.empty() ? "" : " --html " + quoted(fs::absolute(a.html).string())),
                        "the Slurm merge script");
  write_file_atomically(a.slurm + "/submit.sh",
                        fmt::format("#!/bin/bash\n"
                                    "# The array, then the merge once every task succeeded.\n"
                                    "set -e\n"
                                    "array=$(sbatch --parsable {}/sweep.sbatch)\n"
                                    "sbatch --dependency=afterok:${{array%%;*}} {}/merge.sbatch\n",
                                    quoted(dir), quoted(dir)),
                        "the Slurm submit script");
  fs::permissions(a.slurm + "/submit.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
  std::cout << fmt::format("wrote {0}/sweep.sbatch ({1} points in {2} array tasks), {0}/merge.sbatch and "
                           "{0}/submit.sh; run {0}/submit.sh on the cluster\n",
                           a.slurm, points, shards);
}

void write_outputs(const SweepArgs& a, const SweepRunner& runner, const sweep::Table& table) {
  write_file_atomically(a.out, sweep::csv_text(table), "the sweep table");
  if (!a.html.empty()) {
    write_file_atomically(a.html, sweep::html_page(runner.spec(), table), "the sweep page");
  }
}

int run_sweep(const SweepArgs& a) {
  const sweep::SweepSpec spec = sweep::parse_spec(read_file(a.spec, "sweep spec", "a sweep YAML"), a.spec);
  const SweepRunner runner(spec);
  if (!a.slurm.empty()) {
    write_slurm(a, runner.points());
    return 0;
  }
  prepare_output_file(a.out, "--out");
  if (!a.html.empty()) prepare_output_file(a.html, "--html");
  sweep::Table table;
  table.header = runner.header();
  if (!a.merge.empty()) {
    for (const std::string& part : a.merge) {
      const sweep::Table t = sweep::parse_csv(read_file(part, "--merge", "a sweep table"), part, runner.header());
      for (const auto& [point, row] : t.rows) table.rows[point] = row;
    }
    write_outputs(a, runner, table);
    std::cout << fmt::format("merged {} tables: {} of {} points into {}\n", a.merge.size(), table.rows.size(),
                             runner.points(), a.out);
    return 0;
  }
  if (mpi_distributor == nullptr && launched_by_mpi()) exec_mpi_binary();
  // Resuming: rows of this sweep's points that ran are kept; failed points are tried again.
  std::error_code ec;
  std::size_t kept = 0;
  if (std::filesystem::exists(a.out, ec)) {
    const sweep::Table old = sweep::parse_csv(read_file(a.out, "--out", "a sweep table"), a.out, runner.header());
    const std::size_t axes = runner.header().size() - 1 - sweep::figure_columns().size();
    for (const auto& [point, row] : old.rows) {
      if (point >= runner.points() || row.cells[1 + axes] != "ok") continue;
      const std::vector<std::string> cells = runner.axis_cells(point);
      if (!std::equal(cells.begin(), cells.end(), row.cells.begin() + 1)) continue;
      table.rows[point] = row;
      ++kept;
    }
  }
  std::size_t shard = 0, shards = 1;
  if (!a.shard.empty()) std::tie(shard, shards) = parse_shard(a.shard);
  std::vector<std::size_t> todo;
  for (std::size_t p = shard; p < runner.points(); p += shards) {
    if (!table.rows.count(p)) todo.push_back(p);
  }
  ThreadDistributor threads;
  PointDistributor& distributor = mpi_distributor != nullptr ? *mpi_distributor : threads;
  // An MPI rank runs one point at a time (ranks are the unit of parallelism there).
  const std::size_t jobs = mpi_distributor != nullptr ? 1
                           : a.jobs > 0               ? a.jobs
                                                      : std::max(1u, std::thread::hardware_concurrency());
  const auto start = std::chrono::steady_clock::now();
  auto last_write = start;
  std::size_t done = 0, failed = 0;
  const bool writer = distributor.run(runner, todo, jobs, [&](sweep::Row row) {
    failed += row.cells[runner.header().size() - sweep::figure_columns().size()] == "ok" ? 0 : 1;
    table.rows[row.point] = std::move(row);
    ++done;
    // The table on disk follows the run (whole, never torn), so that a stopped sweep resumes.
    const auto now = std::chrono::steady_clock::now();
    if (now - last_write > std::chrono::seconds(2)) {
      write_file_atomically(a.out, sweep::csv_text(table), "the sweep table");
      last_write = now;
    }
    if (!a.quiet && isatty(STDERR_FILENO))
      std::cerr << fmt::format("\r{} of {} points", done, todo.size()) << std::flush;
  });
  if (!writer) return 0;
  if (!a.quiet && isatty(STDERR_FILENO)) std::cerr << "\r\033[K";
  write_outputs(a, runner, table);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format("ran {} points ({} failed), kept {} from {}, in {:.2f} s on {} process{} x {} thread{} "
                           "({:.0f} points per minute); wrote {}{}\n",
                           done, failed, kept, a.out, seconds, distributor.processes(),
                           distributor.processes() == 1 ? "" : "es", jobs, jobs == 1 ? "" : "s",
                           seconds > 0 ? 60 * static_cast<double>(done) / seconds : 0.0, a.out,
                           a.html.empty() ? "" : " and " + a.html);
  return 0;
}

}  // namespace

void set_sweep_distributor(PointDistributor* distributor) { mpi_distributor = distributor; }

Command add_sweep_command(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand("sweep", "Run every point of a design-space sweep (axes over system, network, "
                                              "generator and run flags) into one table: on every core, across "
                                              "machines with mpirun, or as a Slurm job array");
  cmd->footer("Example:\n"
              "  chakrasim sweep sweep.yaml --out results.csv --html results.html\n"
              "  mpirun -np 4 chakrasim sweep sweep.yaml --out results.csv\n"
              "  chakrasim sweep sweep.yaml --out results.csv --slurm slurm/   (then slurm/submit.sh)\n"
              "A re-run skips the points already in --out. See docs/sweep.md for the spec.");
  cmd->add_option("spec", a->spec, "The sweep spec (YAML): base inputs, axes, zip, derived, cost")->required();
  cmd->add_option("--out", a->out, "The results table (CSV), one row per point")->required();
  cmd->add_option("--html", a->html,
                  "Also write a page of plots (each figure against each axis, the Pareto front) "
                  "and the sortable table");
  cmd->add_option("--jobs", a->jobs, "Points simulated at once (default: every core; under mpirun each rank runs one)");
  cmd->add_option("--shard", a->shard, "Only the points I, I+N, I+2N, ... (I/N; for job arrays)");
  cmd->add_option("--merge", a->merge, "Merge these tables (shards' --out) into --out instead of running points");
  cmd->add_option("--slurm", a->slurm,
                  "Write a Slurm job array (DIR/sweep.sbatch), its merge job and "
                  "DIR/submit.sh instead of running points");
  cmd->add_flag("--quiet", a->quiet, "No progress line");
  return [cmd, a]() -> int {
    if (!cmd->parsed()) return -1;
    return run_sweep(*a);
  };
}

}  // namespace chakrasim::cli
