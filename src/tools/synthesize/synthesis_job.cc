#include "tools/synthesize/synthesis_job.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/error.h"

namespace chakrasim::tools {

SynthesisJob::SynthesisJob(const SynthesisModel& model, std::uint64_t npus, const std::string& source)
    : source_(source), model_npus_(model.npus) {
  if (npus == 0 || npus == model.npus) {
    keep_model_job(model);
  } else {
    // The widest axis first: the one whose replicas hold the fewest ranks each.
    std::vector<std::size_t> shapes(model.group_shapes.size());
    for (std::size_t s = 0; s < shapes.size(); ++s) shapes[s] = s;
    std::stable_sort(shapes.begin(), shapes.end(), [&](std::size_t a, std::size_t b) {
      return model.group_shapes[a].size() > model.group_shapes[b].size();
    });
    bool done = false;
    // Without groups, a job whose ranks all run one class and only talk through collectives of
    // every NPU is replicas of one rank.
    if (model.classes.size() == 1 && model.groups.empty()) {
      bool messages = false;
      for (const Slot& s : model.classes[0].slots) messages |= s.kind == SlotKind::kSend || s.kind == SlotKind::kRecv;
      if (!messages) {
        npus_ = npus;
        class_of_.assign(npus, 0);
        resized_ = true;
        dp_old_ = model.npus;
        dp_new_ = npus;
        done = true;
      }
    }
    for (std::size_t i = 0; !done && i < shapes.size(); ++i) done = try_axis(model, shapes[i], npus);
    if (!done) {
      fail("{}: --npus {}: the model's {} ranks have no axis of replicas that can be re-sized to {} (expected "
           "groups of one shape that are the sets low + stride x (d + R x high), d < R, covering every rank, whose "
           "members run one class, with every other group and message within one d, and {} a multiple of the "
           "ranks per replica)",
           source, npus, model.npus, npus, npus);
    }
    caveat_ = fmt::format("re-sized from {} to {} NPUs along an axis of {} replicas (now {}): each replica keeps "
                          "its compute and message sizes (weak scaling); what depends on the replica count, such "
                          "as ZeRO's sharded optimizer step, is not re-scaled",
                          model.npus, npus, dp_old_, dp_new_);
  }
  groups_of_rank_.resize(npus_);
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (const std::uint64_t m : groups_[g]) groups_of_rank_[m].push_back(g);
  }
}

void SynthesisJob::keep_model_job(const SynthesisModel& model) {
  npus_ = model.npus;
  class_of_.assign(npus_, 0);
  for (std::size_t k = 0; k < model.classes.size(); ++k) {
    for (const std::uint64_t r : model.classes[k].ranks) class_of_[r] = k;
  }
  groups_ = model.groups;
  for (const auto& members : model.groups) {
    const auto it = std::find(model.group_shapes.begin(), model.group_shapes.end(), group_shape(members));
    // A group whose shape the model does not list is never a collective's: no slot names it.
    group_shape_.push_back(it == model.group_shapes.end() ? static_cast<std::size_t>(-1)
                                                          : static_cast<std::size_t>(it - model.group_shapes.begin()));
  }
}

bool SynthesisJob::try_axis(const SynthesisModel& model, std::size_t shape, std::uint64_t npus) {
  const std::vector<std::int64_t>& offsets = model.group_shapes[shape];
  if (offsets.size() < 2) return false;
  std::vector<std::int64_t> sorted = offsets;
  std::sort(sorted.begin(), sorted.end());
  const std::uint64_t stride = static_cast<std::uint64_t>(sorted[1]);
  const std::uint64_t dp = sorted.size();
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<std::int64_t>(stride * i)) return false;
  }
  const std::uint64_t n = model.npus;
  if (stride == 0 || n % (stride * dp) != 0) return false;
  auto low = [&](std::uint64_t r) { return r % stride; };
  auto d_of = [&](std::uint64_t r) { return r / stride % dp; };
  auto high = [&](std::uint64_t r) { return r / (stride * dp); };
  // The axis' groups cover every rank once.
  std::vector<bool> covered(n, false);
  std::vector<std::size_t> class_of(n, 0);
  for (std::size_t k = 0; k < model.classes.size(); ++k) {
    for (const std::uint64_t r : model.classes[k].ranks) class_of[r] = k;
  }
  for (const auto& members : model.groups) {
    const bool on_axis = group_shape(members) == offsets;
    std::set<std::uint64_t> ds;
    for (const std::uint64_t m : members) ds.insert(d_of(m));
    if (on_axis) {
      for (const std::uint64_t m : members) {
        if (covered[m]) return false;
        covered[m] = true;
      }
    } else if (ds.size() != 1) {
      return false;
    }
  }
  for (std::uint64_t r = 0; r < n; ++r) {
    if (!covered[r] || class_of[r] != class_of[r - stride * d_of(r)]) return false;
  }
  for (const RankClass& c : model.classes) {
    for (const std::uint64_t r : c.ranks) {
      for (const Slot& s : c.slots) {
        if (s.kind != SlotKind::kSend && s.kind != SlotKind::kRecv) continue;
        const std::int64_t peer = static_cast<std::int64_t>(r) + s.peer_offset;
        if (peer < 0 || peer >= static_cast<std::int64_t>(n) || d_of(static_cast<std::uint64_t>(peer)) != d_of(r)) {
          return false;
        }
      }
      // A collective of every NPU would span the axis: fine, it spans the new job.
    }
  }
  const std::uint64_t per_d = stride * (n / (stride * dp));  // ranks per replica
  if (npus % per_d != 0) return false;
  stride_ = stride;
  dp_old_ = dp;
  dp_new_ = npus / per_d;
  npus_ = npus;
  resized_ = true;
  const std::uint64_t highs = n / (stride * dp);
  auto new_rank = [&](std::uint64_t l, std::uint64_t d, std::uint64_t h) { return l + stride * (d + dp_new_ * h); };
  class_of_.assign(npus_, 0);
  for (std::uint64_t r = 0; r < npus_; ++r) {
    const std::uint64_t l = r % stride, h = r / (stride * dp_new_);
    class_of_[r] = class_of[l + stride * dp * h];
  }
  // The axis' groups, one per (low, high); every other group once per d.
  for (std::uint64_t h = 0; h < highs; ++h) {
    for (std::uint64_t l = 0; l < stride; ++l) {
      std::vector<std::uint64_t> members;
      for (std::uint64_t d = 0; d < dp_new_; ++d) members.push_back(new_rank(l, d, h));
      groups_.push_back(std::move(members));
      group_shape_.push_back(shape);
    }
  }
  for (const auto& members : model.groups) {
    if (group_shape(members) == offsets) continue;
    const auto it = std::find(model.group_shapes.begin(), model.group_shapes.end(), group_shape(members));
    for (std::uint64_t d = 0; d < dp_new_; ++d) {
      std::vector<std::uint64_t> copy;
      for (const std::uint64_t m : members) copy.push_back(new_rank(low(m), d, high(m)));
      groups_.push_back(std::move(copy));
      group_shape_.push_back(it == model.group_shapes.end()
                                 ? static_cast<std::size_t>(-1)
                                 : static_cast<std::size_t>(it - model.group_shapes.begin()));
    }
  }
  return true;
}

std::int64_t SynthesisJob::group_of(std::uint64_t rank, const Slot& slot) const {
  if (slot.group_shape < 0) return -1;
  std::uint32_t nth = 0;
  for (const std::size_t g : groups_of_rank_[rank]) {
    if (group_shape_[g] != static_cast<std::size_t>(slot.group_shape)) continue;
    if (nth++ == slot.group_nth) return static_cast<std::int64_t>(g);
  }
  fail("{}: rank {} is in no group of group_shapes[{}] (the {} such group); expected the groups to hold every rank of "
       "a class that runs a collective on them",
       source_, rank, slot.group_shape, slot.group_nth);
}

std::uint64_t SynthesisJob::peer_of(std::uint64_t rank, std::int64_t offset) const {
  std::int64_t peer = 0;
  if (!resized_) {
    peer = static_cast<std::int64_t>(rank) + offset;
  } else {
    // In the model's job, from the rank's counterpart at d = 0, then moved to this rank's d.
    const std::uint64_t l = rank % stride_, d = rank / stride_ % dp_new_, h = rank / (stride_ * dp_new_);
    const std::int64_t old_peer = static_cast<std::int64_t>(l + stride_ * dp_old_ * h) + offset;
    if (old_peer >= 0 && old_peer < static_cast<std::int64_t>(model_npus_)) {
      const auto p = static_cast<std::uint64_t>(old_peer);
      peer = static_cast<std::int64_t>(p % stride_ + stride_ * (d + dp_new_ * (p / (stride_ * dp_old_))));
    } else {
      peer = -1;
    }
  }
  if (peer < 0 || peer >= static_cast<std::int64_t>(npus_)) {
    fail("{}: rank {} sends to or receives from {} ranks away, outside the {} ranks; expected peers within the job",
         source_, rank, offset, npus_);
  }
  return static_cast<std::uint64_t>(peer);
}

}  // namespace chakrasim::tools
