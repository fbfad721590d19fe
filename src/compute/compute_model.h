// How long a compute node takes: the compute layer's interface, and the table of its models.
// The workload layer asks a model to check each compute node before the run and to time it
// during the run; the statistics ask it how busy a node kept the chip. A model registers as one
// row of compute_models() with a line on what it models and what it ignores.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chakra/graph.h"
#include "compute/compute_spec.h"
#include "core/types.h"

namespace chakrasim::compute {

// How a node used the chip while it ran, as the reference's statistics weigh it (fractions of
// peak; FLOP per byte).
struct NodeUtilization {
  bool compute_bound = false;
  double compute = 0;    // achieved FLOP/s over peak FLOP/s
  double memory = 0;     // achieved bytes/s over peak bytes/s
  double intensity = 0;  // FLOP per byte of tensor traffic
};

// What a model that knows the chip's structure says of a node beyond its time (the systolic
// array's figures), for the per-node outputs.
struct NodeFigures {
  std::string shape;               // OpShape::describe()
  std::uint64_t cycles = 0;        // the chip's clock cycles, stalls included
  std::uint64_t stall_cycles = 0;  // of which waiting for DRAM
  double compute_util = 0;         // MACs over cycles x MAC units (fraction)
  double mapping_efficiency = 0;   // MAC units a fold maps, averaged over folds (fraction)
  std::uint64_t sram_read_bytes = 0, sram_write_bytes = 0;
  std::uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
};

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;

  // Contract: called once per compute node (COMP_NODE) of every distinct graph before the run,
  // one graph after another on one thread (a model may remember what it found per graph).
  // Returns why this model cannot time the node (e.g. a missing attribute), or "" if it can.
  // The caller prefixes the file and node.
  virtual std::string check(const chakra::Graph& graph, std::uint32_t node) const = 0;

  // Contract: the duration in ns of a compute node that passed check(), or nullopt when the
  // model skips it (it takes no time and frees its children in the same pass). Called each time
  // the node is issued, so it must be cheap (O(1)) and must not depend on earlier calls.
  virtual std::optional<Tick> duration(const chakra::Graph& graph, std::uint32_t node) const = 0;

  // How the node used the chip, for models that know (nullopt: not counted).
  virtual std::optional<NodeUtilization> utilization(const chakra::Graph& /*graph*/, std::uint32_t /*node*/) const {
    return std::nullopt;
  }
  // Whether the statistics report utilisation figures for this model.
  virtual bool reports_utilization() const { return false; }

  // The node's figures, for models that have them (nullopt: none for this node).
  virtual std::optional<NodeFigures> figures(const chakra::Graph& /*graph*/, std::uint32_t /*node*/) const {
    return std::nullopt;
  }
  virtual bool reports_figures() const { return false; }
  // Whether a compute node is timed by the model's fallback rather than the model itself (the
  // systolic model times nodes without a shape by the roofline); the summary counts them.
  virtual bool falls_back(const chakra::Graph& /*graph*/, std::uint32_t /*node*/) const { return false; }
  // The fallback's name, "" for a model without one.
  virtual const char* fallback_name() const { return ""; }
};

// The recorded duration of any node: duration_micros x 1000 ns, and 1 ns for a zero duration
// (the reference's replay of a node with no recorded time).
inline Tick replay_ns(std::uint64_t duration_micros) { return duration_micros == 0 ? 1 : duration_micros * 1000; }

struct ComputeModelInfo {
  const char* name;
  const char* description;  // what it models and what it ignores
  std::unique_ptr<ComputeModel> (*make)(const ComputeSpec& spec);
};
// The registered models, in the order help texts list them.
const std::vector<ComputeModelInfo>& compute_models();

// The model `spec.model` names; throws Error listing the valid names for an unknown one.
std::unique_ptr<ComputeModel> make_compute_model(const ComputeSpec& spec);
// The same when it reports per-node figures (ComputeModel::figures) and nodes are not all
// replayed (`replay_only`); nullptr otherwise.
std::unique_ptr<ComputeModel> make_figures_model(const ComputeSpec& spec, bool replay_only);

}  // namespace chakrasim::compute
