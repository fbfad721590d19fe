// The job a synthesized trace set runs as: which class each rank runs, its communicator groups
// and where its messages go. For the model's own NPU count that is the learned job; for another
// (`generate --npus N`) the learned job with one axis of replicas widened or narrowed.
//
// The axis is found from the groups alone (they carry no labels): the groups of one shape that
// are the sets {low + stride x (d + R x high) : d < R} and cover every rank, such that ranks that
// differ only in d run one class, every other group keeps one d, and every message stays
// within its d. That is a data-parallel axis in a Megatron-style numbering (tensor parallel
// inside, pipeline stages outside), and the whole job for a pure data-parallel trace. Of several
// such axes the widest is taken. Rank (low, d', high) of the new job runs the class of (low, 0,
// high); every other group is copied for each d'; sizes are kept (weak scaling).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/synthesize/synthesis_model.h"

namespace chakrasim::tools {

class SynthesisJob {
 public:
  // The model's job (npus 0 or the model's), or one with `npus` ranks; throws Error naming
  // `source` when no axis allows it.
  SynthesisJob(const SynthesisModel& model, std::uint64_t npus, const std::string& source);

  std::uint64_t npus() const { return npus_; }
  std::size_t class_of(std::uint64_t rank) const { return class_of_[rank]; }
  const std::vector<std::vector<std::uint64_t>>& groups() const { return groups_; }
  // The group a collective of `rank` runs on (index in groups()); -1 for every NPU. Throws Error
  // when `rank` is in no group of the shape.
  std::int64_t group_of(std::uint64_t rank, const Slot& slot) const;
  // The peer of a message `offset` ranks away in the model's job; throws Error when outside.
  std::uint64_t peer_of(std::uint64_t rank, std::int64_t offset) const;
  // What the re-sized job keeps as learned that a real job of that size may change.
  const std::string& caveat() const { return caveat_; }

 private:
  void keep_model_job(const SynthesisModel& model);
  bool try_axis(const SynthesisModel& model, std::size_t shape, std::uint64_t npus);

  std::string source_;
  std::uint64_t npus_ = 0;
  std::vector<std::size_t> class_of_;
  std::vector<std::vector<std::uint64_t>> groups_;
  std::vector<std::size_t> group_shape_;                  // the model's shape each group stands for
  std::vector<std::vector<std::size_t>> groups_of_rank_;  // ascending
  // The axis, when re-sized: old rank = low + stride x (d + dp_old x high).
  bool resized_ = false;
  std::uint64_t stride_ = 1, dp_old_ = 1, dp_new_ = 1, model_npus_ = 0;
  std::string caveat_;
};

}  // namespace chakrasim::tools
