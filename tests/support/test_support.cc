#include "support/test_support.h"

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "chakra/attributes.h"
#include "config/system_config.h"
#include "core/error.h"

namespace chakrasim::test {

std::optional<std::filesystem::path> reference_dir() {
  std::filesystem::path dir(CHAKRASIM_REFERENCE_DIR);
  if (std::filesystem::exists(dir / "ASTRA-SIM-BEHAVIOUR.md")) return dir;
  return std::nullopt;
}

std::filesystem::path temp_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(CHAKRASIM_TEST_TMP) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

network::TopologySpec network_of(std::initializer_list<network::DimensionSpec> dims) {
  network::TopologySpec spec;
  spec.dims.assign(dims.begin(), dims.end());
  return spec;
}

system::SystemSpec system_of(const std::string& algorithm, std::size_t logical_dims, std::uint64_t splits,
                             std::uint32_t active_chunks, bool baseline) {
  system::SystemSpec spec;
  spec.scheduling_policy = system::SchedulingPolicy::kLifo;
  spec.collective_optimization =
      baseline ? system::CollectiveOptimization::kBaseline : system::CollectiveOptimization::kLocalBwAware;
  spec.endpoint_delay_ns = 10;
  spec.local_mem_bw_gb_per_s = 50;
  spec.preferred_dataset_splits = splits;
  spec.active_chunks_per_dimension = active_chunks;
  const system::AlgorithmChoice choice = algorithm_of(algorithm);
  for (auto& impl : spec.implementations) impl.assign(logical_dims, choice);
  return spec;
}

system::AlgorithmChoice algorithm_of(const std::string& token) {
  const std::string json = R"({"preferred-dataset-splits": 1, "all-reduce-implementation": [")" + token + R"("]})";
  try {
    return config::parse_system(json, "<test token>", {}).system.implementations[0].front();
  } catch (const Error& e) {
    throw Error("test support: unknown algorithm " + token + ": " + e.what());
  }
}

std::vector<std::shared_ptr<const chakra::Graph>> same_trace(const chakra::Trace& trace, std::size_t npus) {
  auto graph = std::make_shared<const chakra::Graph>(chakra::Graph::build(trace, "<test trace>"));
  return std::vector<std::shared_ptr<const chakra::Graph>>(npus, graph);
}

chakra::Trace single_collective(chakra::CommType type, std::uint64_t bytes) {
  chakra::TraceBuilder b;
  b.collective("coll", type, bytes);
  return b.trace();
}

sim::Result run(const sim::Inputs& inputs) {
  try {
    return sim::simulate(inputs);
  } catch (const Error& e) {
    ADD_FAILURE() << "simulation failed: " << e.what();
    return {};
  }
}

sim::Inputs one_collective(network::TopologySpec net, system::SystemSpec sys, chakra::CommType type,
                           std::uint64_t bytes, const std::string& backend) {
  sim::Inputs in;
  in.backend = backend;
  in.network = std::move(net);
  in.system = std::move(sys);
  std::size_t npus = 1;
  for (const auto& d : in.network.dims) npus *= d.npus;
  in.graphs = same_trace(single_collective(type, bytes), npus);
  return in;
}

void expect_all_finish(const sim::Result& r, Tick expected, std::optional<std::size_t> npus) {
  if (npus) {
    ASSERT_EQ(r.npus.size(), *npus);
  }
  ASSERT_TRUE(r.all_finished());
  for (std::size_t i = 0; i < r.npus.size(); ++i) EXPECT_EQ(r.npus[i].finish_ns, expected) << "NPU " << i;
}

std::vector<std::string> small_llm(const std::vector<std::string>& more) {
  std::vector<std::string> args = {"generate", "llm", "--layers", "2",   "--hidden", "256",
                                   "--heads",  "4",   "--seq",    "128", "--vocab",  "1024"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string run_takes(const std::string& summary) {
  constexpr std::string_view kLead = "the run takes ";
  const std::size_t at = summary.find(kLead);
  if (at == std::string::npos) return {};
  const std::size_t from = at + kLead.size();
  const std::size_t unit_end = summary.find(' ', summary.find(' ', from) + 1);
  return summary.substr(from, unit_end - from);
}

CommandResult run_binary(const std::vector<std::string>& args, const std::filesystem::path& cwd) {
  return run_program(CHAKRASIM_BINARY, args, cwd);
}

CommandResult run_program(const std::string& program, const std::vector<std::string>& args,
                          const std::filesystem::path& cwd) {
  static int counter = 0;
  const std::filesystem::path dir =
      temp_dir("run_binary_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::string command;
  if (!cwd.empty()) command = "cd '" + cwd.string() + "' && ";
  command.append("'").append(program).append("'");
  for (const std::string& a : args) {
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    command += " " + quoted + "'";
  }
  command += " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  CommandResult r;
  const int status = std::system(command.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = file_bytes(dir / "out");
  r.err = file_bytes(dir / "err");
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace chakrasim::test
