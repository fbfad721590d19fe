// How `chakrasim generate llm` spreads a model over ranks: the parallel sizes and training
// settings, the rank of every (tensor, context, data, pipeline) coordinate, and the
// communicator groups each rank belongs to.
//
// Rank order, fastest-varying first: tensor-parallel index t, context-parallel c, data-parallel
// d, pipeline stage p (Megatron-LM's default order tp-cp-ep-dp-pp):
//   rank = t + T * (c + C * (d + D * p)).
// Network dimension 0 is the scale-up domain (llm_gpu.h: NPU ids vary fastest there), so a
// tensor-parallel group of T ranks, T dividing the domain size, sits inside one domain, and so
// does a T x C block. Expert-parallel groups are runs of E consecutive data-parallel indices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generate/llm/llm_model.h"

namespace chakrasim::tools::llm {

enum class Schedule { kGpipe, kOneFOneB, kInterleaved };

struct ParallelSpec {
  std::uint64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  bool sp = false;                 // Megatron sequence parallelism inside each tensor-parallel group
  std::uint64_t microbatch = 1;    // sequences per microbatch
  std::uint64_t global_batch = 0;  // sequences per iteration; 0 means microbatch x dp
  Schedule schedule = Schedule::kOneFOneB;
  std::uint64_t vpp = 1;   // model chunks per stage (interleaved only)
  std::uint64_t zero = 0;  // ZeRO stage 0..3
  Recompute recompute = Recompute::kNone;
  std::uint64_t dtype_bytes = 2;                  // bf16 / fp16; 4 for fp32
  std::uint64_t grad_bucket_params = 40'000'000;  // data-parallel gradient bucket (Megatron's default)
};

// The kinds of communicator group, in the order their ids are numbered.
enum class GroupKind : std::uint8_t {
  kTp,         // tensor parallel: fixed (c, d, p)
  kCp,         // context parallel: fixed (t, d, p)
  kDp,         // gradients of dense weights: fixed (t, p), every (c, d)
  kEp,         // expert parallel: fixed (t, c, p), E consecutive d
  kExpertDp,   // gradients of expert weights: fixed (p, d mod E), every (t, c, d / E)
  kPp,         // a pipeline: fixed (t, c, d); no collective uses it (listed for completeness)
  kEmbedding,  // first and last stage, tied embeddings only: fixed (t, c, d)
};
inline constexpr std::size_t kGroupKinds = 7;
const char* group_kind_name(GroupKind kind);  // "TP", "CP", "DP", "EP", "EDP", "PP", "EMB"

struct Coord {
  std::uint64_t t = 0, c = 0, d = 0, p = 0;
};

class Layout {
 public:
  // Checks the model (check_model), then the sizes against each other and the model; throws
  // Error naming the flag.
  Layout(const ModelSpec& model, const ParallelSpec& parallel);

  const ParallelSpec& parallel() const { return par_; }
  std::uint64_t ranks() const { return ranks_; }
  std::uint64_t rank(const Coord& c) const { return c.t + par_.tp * (c.c + par_.cp * (c.d + par_.dp * c.p)); }
  Coord coord(std::uint64_t rank) const;
  // The rank `stage_delta` stages away from `rank`, same (t, c, d).
  std::uint64_t peer(std::uint64_t rank, std::int64_t stage_delta) const;

  std::uint64_t microbatches() const { return microbatches_; }  // per pipeline per iteration
  std::uint64_t chunks() const { return par_.vpp; }             // model chunks per stage
  std::uint64_t layers_per_chunk() const { return layers_per_chunk_; }
  bool tied_embedding_group() const { return tied_group_; }

  // Members of the group of `kind` that `rank` belongs to (ascending), and its id (>= 1); id 0
  // and no members when the rank is in no such group (the embedding group of a middle stage).
  std::vector<std::uint64_t> members(GroupKind kind, std::uint64_t rank) const;
  std::uint32_t group_id(GroupKind kind, std::uint64_t rank) const;
  std::uint64_t group_size(GroupKind kind) const;
  // Whether collectives run on groups of this kind (more than one member).
  bool active(GroupKind kind) const;

  // The communicator-group JSON: every group of every active kind, {"id": [ranks...], ...}.
  std::string groups_json() const;
  // {"1": "TP", ...}: each group id's kind (group_kind_name), for the simulator's reports.
  std::string group_names_json() const;

 private:
  std::uint64_t group_index(GroupKind kind, const Coord& c) const;
  std::uint64_t group_count(GroupKind kind) const;

  ParallelSpec par_;
  std::uint64_t ranks_ = 0;
  std::uint64_t microbatches_ = 0;
  std::uint64_t layers_per_chunk_ = 0;
  bool tied_group_ = false;
  bool moe_ = false;  // expert weights exist (else no expert-DP groups)
  std::uint32_t first_id_[kGroupKinds] = {};
};

}  // namespace chakrasim::tools::llm
