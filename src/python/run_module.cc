// chakrasim.run: one simulation from Python, with the inputs as files or in memory, the result
// as Python objects. The inputs are turned into what `chakrasim run` reads (trace bytes, JSON
// and YAML text) while Python is locked; everything after (parsing, loading, simulating) runs
// with the interpreter released, so other Python threads go on meanwhile.
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "chakra/et_file.h"
#include "chakra/workload_files.h"
#include "cli/run_inputs.h"
#include "config/network_config.h"
#include "config/other_configs.h"
#include "config/system_config.h"
#include "core/error.h"
#include "network/network.h"
#include "network/topology.h"
#include "python/bindings.h"
#include "report/summary.h"
#include "sim/simulation.h"

namespace chakrasim::python {
namespace {

// One configuration argument: a path, or a dict turned into JSON text (which is YAML too, so a
// network dict goes through the YAML reader as the file would).
struct ConfigInput {
  bool given = false;
  std::string path;    // the file to read, when given a path
  std::string text;    // the dict's JSON, otherwise
  std::string source;  // what errors call it
};

ConfigInput config_input(py::handle value, const std::string& argument) {
  ConfigInput input;
  if (value.is_none()) return input;
  input.given = true;
  if (py::isinstance<py::dict>(value)) {
    input.text = py::module_::import("json").attr("dumps")(value).cast<std::string>();
    input.source = fmt::format("the {} dict", argument);
  } else if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) {
    input.path = py::module_::import("os").attr("fspath")(value).cast<std::string>();
    input.source = input.path;
  } else {
    throw py::type_error(fmt::format("{}: expected a path or a dict of the file's keys, got {}", argument,
                                     static_cast<std::string>(py::repr(value))));
  }
  return input;
}

// The workload: a trace prefix (PREFIX.<rank>.et), or each rank's .et bytes.
struct WorkloadInput {
  std::string prefix;
  std::vector<std::string> rank_bytes;
  bool in_memory = false;
};

// One rank of an in-memory workload: a list of nodes, or a (GlobalMetadata, nodes) pair.
std::string rank_bytes(py::handle entry, std::size_t rank) {
  chakra::Trace trace;
  trace.metadata.set_version("0.0.4");  // what Chakra's tutorial scripts write
  py::handle nodes = entry;
  if (py::isinstance<py::tuple>(entry) && py::len(entry) == 2 &&
      py::isinstance<chakra::GlobalMetadata>(py::tuple(py::reinterpret_borrow<py::tuple>(entry))[0])) {
    const auto pair = py::reinterpret_borrow<py::tuple>(entry);
    trace.metadata = pair[0].cast<const chakra::GlobalMetadata&>();
    nodes = pair[1];
  }
  if (!py::isinstance<py::iterable>(nodes)) {
    throw py::type_error(fmt::format("workload[{}]: expected a list of Node or a (GlobalMetadata, nodes) pair, got {}",
                                     rank, static_cast<std::string>(py::repr(entry))));
  }
  std::size_t index = 0;
  for (py::handle node : nodes) {
    if (!py::isinstance<chakra::Node>(node)) {
      throw py::type_error(fmt::format("workload[{}][{}]: expected a chakrasim.et.Node, got {}", rank, index,
                                       static_cast<std::string>(py::repr(node))));
    }
    trace.nodes.push_back(node.cast<const chakra::Node&>());
    ++index;
  }
  return chakra::serialize_trace(trace);
}

WorkloadInput workload_input(py::handle value) {
  WorkloadInput input;
  if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) {
    input.prefix = py::module_::import("os").attr("fspath")(value).cast<std::string>();
    return input;
  }
  if (!py::isinstance<py::sequence>(value)) {
    throw py::type_error(fmt::format("workload: expected a trace prefix (PREFIX.<rank>.et) or a list with one entry "
                                     "per rank, got {}",
                                     static_cast<std::string>(py::repr(value))));
  }
  input.in_memory = true;
  std::size_t rank = 0;
  for (py::handle entry : value) input.rank_bytes.push_back(rank_bytes(entry, rank++));
  return input;
}

// The keyword options of run(), those of `chakrasim run` that change what is simulated.
struct RunOptions {
  std::string backend;
  std::string collectives;  // "" keeps the system's choice
  bool rendezvous = false;
  bool folding = true;
  std::uint32_t num_queues_per_dim = 1;
  double injection_scale = 1;
};

// Reads every input as `chakrasim run` does (cli/run_command.cc), from files or from text.
sim::Inputs load_inputs(const WorkloadInput& workload, const ConfigInput& system_input,
                        const ConfigInput& network_input, const ConfigInput& memory_input,
                        const ConfigInput& groups_input, const RunOptions& options,
                        std::vector<std::string>& warnings) {
  network::find_backend(options.backend);  // an unknown name fails before any file is read
  config::SystemFlags flags;
  flags.num_queues_per_dim = options.num_queues_per_dim;
  flags.injection_scale = options.injection_scale;

  sim::Inputs inputs;
  inputs.backend = options.backend;
  inputs.network = network_input.path.empty()
                       ? config::parse_network(network_input.text, network_input.source, &warnings)
                       : config::load_network(network_input.path, &warnings);
  const config::SystemConfig system = system_input.path.empty()
                                          ? config::parse_system(system_input.text, system_input.source, flags)
                                          : config::load_system(system_input.path, flags);
  warnings.insert(warnings.end(), system.warnings.begin(), system.warnings.end());
  cli::apply_system(inputs, system, system_input.source, options.rendezvous, options.collectives);
  inputs.allow_symmetry = options.folding;

  const NpuId npus = network::Topology(inputs.network).npu_count();
  if (memory_input.given) {
    inputs.memory = memory_input.path.empty() ? config::parse_memory(memory_input.text, memory_input.source)
                                              : config::load_memory(memory_input.path);
  }
  if (groups_input.given) {
    inputs.groups = groups_input.path.empty() ? config::parse_comm_groups(groups_input.text, groups_input.source, npus)
                                              : config::load_comm_groups(groups_input.path, npus);
    inputs.groups_source = groups_input.source;
  }
  if (workload.in_memory) {
    if (workload.rank_bytes.size() != npus) {
      fail("workload: {} ranks given, but the network has {} NPUs; expected one trace per NPU",
           workload.rank_bytes.size(), npus);
    }
    inputs.graphs = chakra::load_from_memory("workload", npus, [&](std::size_t r) { return workload.rank_bytes[r]; });
  } else {
    inputs.graphs = chakra::load_workload(workload.prefix, npus);
  }
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    const std::string& prefix = inputs.system.custom_prefixes[k];
    if (!prefix.empty()) inputs.custom_algorithms[k] = chakra::load_workload(prefix, npus, "custom algorithm");
  }
  return inputs;
}

// What a run returns to Python: per-NPU lists (index = NPU) and the run's totals.
struct RunResult {
  std::vector<Tick> finish_ns;
  std::vector<Tick> gpu_compute_ns;
  std::vector<Tick> cpu_compute_ns;
  std::vector<Tick> exposed_comm_ns;  // finish - GPU compute, as ASTRA-sim prints it
  // Where the time went (sim/time_split.h): disjoint parts adding up to finish_ns.
  std::vector<Tick> compute_ns;
  std::vector<Tick> collective_ns;
  std::vector<Tick> p2p_wait_ns;
  std::vector<Tick> memory_ns;
  std::vector<Tick> idle_ns;
  std::vector<std::uint64_t> nodes;
  Tick max_finish_ns = 0;  // the iteration time: when the last NPU finished
  std::uint64_t events = 0;
  std::uint64_t messages = 0;
  bool symmetric = false;
  std::uint32_t classes_simulated = 0;
  std::string backend;
  std::string summary;  // what `chakrasim run` prints after the per-NPU lines
  std::vector<std::string> warnings;

  // One dict per NPU, the columns of to_dataframe.
  py::list rows() const {
    py::list list;
    for (std::size_t n = 0; n < finish_ns.size(); ++n) {
      py::dict row;
      row["npu"] = n;
      row["finish_ns"] = finish_ns[n];
      row["gpu_compute_ns"] = gpu_compute_ns[n];
      row["cpu_compute_ns"] = cpu_compute_ns[n];
      row["exposed_comm_ns"] = exposed_comm_ns[n];
      row["compute_ns"] = compute_ns[n];
      row["collective_ns"] = collective_ns[n];
      row["p2p_wait_ns"] = p2p_wait_ns[n];
      row["memory_ns"] = memory_ns[n];
      row["idle_ns"] = idle_ns[n];
      row["nodes"] = nodes[n];
      list.append(row);
    }
    return list;
  }
};

RunResult run_result(const sim::Result& result, const std::string& backend, std::vector<std::string> warnings) {
  RunResult r;
  for (const sim::NpuResult& n : result.npus) {
    r.finish_ns.push_back(n.finish_ns);
    r.gpu_compute_ns.push_back(n.gpu_compute_ns);
    r.cpu_compute_ns.push_back(n.cpu_compute_ns);
    r.exposed_comm_ns.push_back(n.exposed_comm_ns);
    r.compute_ns.push_back(n.split.compute_ns);
    r.collective_ns.push_back(n.split.collective_ns);
    r.p2p_wait_ns.push_back(n.split.p2p_wait_ns);
    r.memory_ns.push_back(n.split.memory_ns);
    r.idle_ns.push_back(n.split.idle_ns);
    r.nodes.push_back(n.nodes);
  }
  r.max_finish_ns = result.max_finish_ns();
  r.events = result.events;
  r.messages = result.messages;
  r.symmetric = result.symmetric;
  r.classes_simulated = result.classes_simulated;
  r.backend = backend;
  std::ostringstream summary;
  report::print_summary(summary, result);
  r.summary = summary.str();
  r.warnings = std::move(warnings);
  return r;
}

[[noreturn]] void raise(py::handle type, const std::string& message) {
  PyErr_SetString(type.ptr(), message.c_str());
  throw py::error_already_set();
}

}  // namespace

void bind_run(py::module_& module, py::handle error, py::handle deadlock) {
  py::class_<RunResult>(module, "RunResult", "The figures of one run; lists have one entry per NPU")
      .def_readonly("finish_ns", &RunResult::finish_ns, "When each NPU finished (ns; ASTRA-sim's cycles)")
      .def_readonly("gpu_compute_ns", &RunResult::gpu_compute_ns)
      .def_readonly("cpu_compute_ns", &RunResult::cpu_compute_ns)
      .def_readonly("exposed_comm_ns", &RunResult::exposed_comm_ns,
                    "finish - GPU compute per NPU, ASTRA-sim's exposed communication")
      .def_readonly("compute_ns", &RunResult::compute_ns)
      .def_readonly("collective_ns", &RunResult::collective_ns, "Exposed collective communication per NPU")
      .def_readonly("p2p_wait_ns", &RunResult::p2p_wait_ns)
      .def_readonly("memory_ns", &RunResult::memory_ns)
      .def_readonly("idle_ns", &RunResult::idle_ns)
      .def_readonly("nodes", &RunResult::nodes, "Nodes in each NPU's trace")
      .def_readonly("max_finish_ns", &RunResult::max_finish_ns, "The iteration time: when the last NPU finished")
      .def_readonly("events", &RunResult::events)
      .def_readonly("messages", &RunResult::messages)
      .def_readonly("symmetric", &RunResult::symmetric)
      .def_readonly("classes_simulated", &RunResult::classes_simulated)
      .def_readonly("backend", &RunResult::backend)
      .def_readonly("summary", &RunResult::summary)
      .def_readonly("warnings", &RunResult::warnings)
      .def_property_readonly("npus", [](const RunResult& r) { return r.finish_ns.size(); })
      .def("rows", &RunResult::rows, "One dict per NPU: npu, finish_ns, the compute and communication figures")
      .def(
          "to_dataframe",
          [](const RunResult& r) {
            py::module_ pandas;
            try {
              pandas = py::module_::import("pandas");
            } catch (py::error_already_set& e) {
              if (!e.matches(PyExc_ImportError)) throw;
              raise(PyExc_ImportError, "RunResult.to_dataframe needs pandas, which is not installed (Debian: apt-get "
                                       "install "
                                       "python3-pandas); RunResult.rows() gives the same figures as a list of dicts");
            }
            return pandas.attr("DataFrame")(r.rows()).attr("set_index")("npu");
          },
          "The per-NPU figures as a pandas DataFrame indexed by NPU (needs pandas)")
      .def("__repr__", [](const RunResult& r) {
        return fmt::format("RunResult(npus={}, max_finish_ns={}, backend='{}')", r.finish_ns.size(), r.max_finish_ns,
                           r.backend);
      });

  const py::object error_type = py::reinterpret_borrow<py::object>(error);
  const py::object deadlock_type = py::reinterpret_borrow<py::object>(deadlock);
  module.def(
      "run",
      [error_type, deadlock_type](py::handle workload, py::handle system, py::handle network, py::handle memory,
                                  py::handle comm_groups, const std::string& backend, py::handle collectives,
                                  bool rendezvous, bool folding, std::uint32_t num_queues_per_dim,
                                  double injection_scale) {
        const WorkloadInput workload_in = workload_input(workload);
        const ConfigInput system_in = config_input(system, "system");
        const ConfigInput network_in = config_input(network, "network");
        const ConfigInput memory_in = config_input(memory, "memory");
        const ConfigInput groups_in = config_input(comm_groups, "comm_groups");
        if (!system_in.given || !network_in.given) raise(PyExc_TypeError, "run: system and network are required");
        RunOptions options;
        options.backend = backend;
        if (!collectives.is_none()) {
          options.collectives = py::str(collectives);
          if (options.collectives != "astra-sim" && options.collectives != "nccl" &&
              options.collectives != "nccl-traffic") {
            raise(error_type, fmt::format("collectives=\"{}\": expected \"astra-sim\", \"nccl\" or \"nccl-traffic\"",
                                          options.collectives));
          }
        }
        options.rendezvous = rendezvous;
        options.folding = folding;
        options.num_queues_per_dim = num_queues_per_dim;
        options.injection_scale = injection_scale;

        std::vector<std::string> warnings;
        sim::Result result;
        {
          py::gil_scoped_release unlocked;
          const sim::Inputs inputs =
              load_inputs(workload_in, system_in, network_in, memory_in, groups_in, options, warnings);
          result = sim::simulate(inputs);
        }
        // Ignored keys change what was simulated: said as Python warnings, and kept in the result.
        const py::object warn = py::module_::import("warnings").attr("warn");
        for (const std::string& w : warnings) warn(w, py::handle(PyExc_RuntimeWarning));
        if (!result.all_finished()) {
          std::ostringstream report;
          report::print_deadlock(report, result);
          raise(deadlock_type, report.str());
        }
        return run_result(result, backend, std::move(warnings));
      },
      py::arg("workload"), py::arg("system"), py::arg("network"), py::kw_only(), py::arg("memory") = py::none(),
      py::arg("comm_groups") = py::none(), py::arg("backend") = "congestion-unaware",
      py::arg("collectives") = py::none(), py::arg("rendezvous") = false, py::arg("folding") = true,
      py::arg("num_queues_per_dim") = 1, py::arg("injection_scale") = 1.0,
      "Simulate WORKLOAD (a trace prefix, or one list of Node per NPU) on the system (path to the system JSON, or a "
      "dict of its keys) and network (path to the network YAML, or a dict of its keys). Options as in `chakrasim "
      "run`: memory and comm_groups (path or dict), backend, collectives, rendezvous, folding, num_queues_per_dim, "
      "injection_scale. Returns a RunResult; raises chakrasim.Error on bad inputs and chakrasim.DeadlockError when "
      "the run stops making progress.");
}

}  // namespace chakrasim::python
