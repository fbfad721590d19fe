// The synthesizer's model (docs/chakra-tools.md, "synthesize"): what `chakra synthesize learn`
// writes and `generate` reads, a small JSON file a company can share instead of its traces.
//
// It holds the job (NPU count, communicator groups as rank lists, their shapes) and, per rank
// class (ranks whose traces have one structure), the step as a program of loops over node slots.
// A slot is one node of a loop's body: its kind (compute, memory, collective and its group,
// message and its peer), its dependencies as "so many nodes back", and the distribution of each
// of its values over the body's repetitions: a constant, or the mean and quantiles. A loop keeps
// the rank correlation of its slots' values with each other and with the repetition index
// (normal scores), so that which layers are large, and what grows together, survive sampling.
// Nothing in it is a string from the input except the collective type names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chakrasim::tools {

// A value's distribution over a slot's samples. One quantile: a constant.
struct ValueDistribution {
  std::uint64_t samples = 0;
  double mean = 0;
  std::vector<double> quantiles;  // at probabilities 0, 1/(q-1), ..., 1 (ascending)
  bool constant() const { return quantiles.size() == 1; }
};

enum class SlotKind { kGpuCompute, kCpuCompute, kMemLoad, kMemStore, kCollective, kSend, kRecv, kMetadata };

struct Slot {
  SlotKind kind = SlotKind::kGpuCompute;
  std::int32_t comm_type = 0;     // collectives: chakra::CommType
  std::int64_t group_shape = -1;  // collectives: index in Model::group_shapes; -1: every NPU
  std::uint32_t group_nth = 0;    // which of the rank's groups of that shape (usually 0)
  std::optional<std::vector<bool>> involved_dim;
  std::int64_t peer_offset = 0;                     // send/recv: peer rank minus this rank
  std::vector<std::uint64_t> data_deps, ctrl_deps;  // how many nodes before this one, each >= 1
  std::optional<ValueDistribution> duration_us, num_ops, tensor_size, comm_size;
};

struct ProgramItem {
  std::int64_t slot = -1;   // a leaf: its index in RankClass::slots
  std::uint64_t count = 0;  // a loop: its repetitions (>= 1)
  std::vector<ProgramItem> body;
  // Loops: the correlation matrix (row-major) of the normal scores of the repetition index and of
  // each varying slot's first varying value, in body order; empty when no slot varies.
  std::vector<double> correlation;
  bool is_loop() const { return slot < 0; }
};

struct RankClass {
  std::vector<std::uint64_t> ranks;
  std::vector<Slot> slots;  // in program order
  std::vector<ProgramItem> program;
};

struct SynthesisModel {
  std::uint64_t npus = 0;
  std::vector<std::vector<std::uint64_t>> groups;       // written as pg_name 1, 2, ...
  std::vector<std::vector<std::int64_t>> group_shapes;  // members minus the smallest member
  std::vector<RankClass> classes;
};

// The model as its documented JSON text.
std::string model_json(const SynthesisModel& model);

// Reads and checks a model file: every error names `source`, the key and what was expected.
SynthesisModel parse_model(const std::string& text, const std::string& source);

// The shape of a group: its members minus its smallest member, in its order.
std::vector<std::int64_t> group_shape(const std::vector<std::uint64_t>& members);

const char* slot_kind_name(SlotKind kind);

}  // namespace chakrasim::tools
