#include "generate/llm/llm_trace.h"

#include <cmath>
#include <string>
#include <vector>

#include "generate/llm/llm_layer.h"
#include "generate/llm/llm_schedule.h"

namespace chakrasim::tools::llm {
namespace {

using chakrasim::chakra::CommType;
using Ref = StageBuilder::Ref;
constexpr Ref kNone = StageBuilder::kNone;

// What a pass is made of, in forward order: the embedding, layers, the output layer.
struct Unit {
  enum Kind { kEmbedding, kLayer, kOutput } kind = kLayer;
  std::uint64_t layer = 0;
  LocalParams params;
};

// Gradients become ready in backward order; a bucket closes once it holds `bucket_params`.
struct Bucket {
  double params = 0;
  Ref ready = kNone;
};
class Bucketer {
 public:
  explicit Bucketer(double bucket_params) : limit_(bucket_params) {}
  void add(double params, Ref ready) {
    if (params <= 0) return;
    open_.params += params;
    open_.ready = ready;
    if (open_.params >= limit_) close();
  }
  void close() {
    if (open_.params > 0) buckets_.push_back(open_);
    open_ = Bucket{};
  }
  const std::vector<Bucket>& buckets() const { return buckets_; }

 private:
  double limit_;
  Bucket open_;
  std::vector<Bucket> buckets_;
};

class StageEmitter {
 public:
  StageEmitter(const ModelSpec& model, const Layout& layout, const GpuSpec& gpu, std::uint64_t stage,
               NodeOptions options)
      : m_(model),
        layout_(layout),
        par_(layout.parallel()),
        stage_(stage),
        shard_(make_shard(model, layout.parallel())),
        b_(gpu, layout, options),
        layers_(b_, shard_, layout.parallel().recompute) {}

  StageTemplate build();

 private:
  std::uint64_t model_chunks() const { return par_.pp * layout_.chunks(); }
  std::vector<Unit> units(std::uint64_t chunk) const;
  void forward(const Task& task);
  void backward(const Task& task, bool reduce_grads);
  // Runs one unit's forward or backward after `input`.
  void run(const Unit& u, bool backward, Ref input, const std::string& microbatch);
  Ref zero3_gather(const Unit& u);
  void reduce_buckets(GroupKind group, const std::vector<Bucket>& buckets, bool scatter);
  void finish_iteration();
  std::uint64_t padded_slice(double params, GroupKind group) const;
  // Tag of the pipeline message across the boundary after model chunk `edge`.
  std::uint64_t tag(std::uint64_t microbatch, std::uint64_t edge, bool gradient) const {
    return 2 * (microbatch * model_chunks() + edge) + (gradient ? 1 : 0);
  }

  const ModelSpec& m_;
  const Layout& layout_;
  const ParallelSpec& par_;
  std::uint64_t stage_;
  Shard shard_;
  StageBuilder b_;
  LayerEmitter layers_;
  // Gradient buckets: one round per iteration, or one per microbatch with ZeRO 2.
  struct Round {
    Bucketer dense, expert;
  };
  std::vector<Round> rounds_;
  Ref last_send_ = kNone;
};

std::vector<Unit> StageEmitter::units(std::uint64_t chunk) const {
  const std::uint64_t g = chunk * par_.pp + stage_;
  std::vector<Unit> out;
  if (g == 0) out.push_back({Unit::kEmbedding, 0, {embedding_params(m_, par_), 0}});
  const LocalParams layer = layer_params(m_, par_);
  const std::uint64_t per = layout_.layers_per_chunk();
  for (std::uint64_t l = g * per; l < (g + 1) * per; ++l) out.push_back({Unit::kLayer, l, layer});
  if (g + 1 == model_chunks()) {
    // With one stage a tied output layer is the embedding itself: only the final norm is new.
    double params = output_params(m_, par_);
    if (m_.tied_embeddings && par_.pp == 1) params = static_cast<double>(count_params(m_).final_norm);
    out.push_back({Unit::kOutput, 0, {params, 0}});
  }
  return out;
}

std::uint64_t StageEmitter::padded_slice(double params, GroupKind group) const {
  const auto n = static_cast<double>(layout_.group_size(group));
  return static_cast<std::uint64_t>(std::ceil(params / n)) * static_cast<std::uint64_t>(par_.dtype_bytes);
}

void StageEmitter::run(const Unit& u, bool backward, Ref input, const std::string& microbatch) {
  const std::string layer = u.kind == Unit::kLayer ? ".L" + std::to_string(u.layer) : "";
  b_.set_scope((backward ? "B" : "F") + microbatch + layer);
  if (!backward) {
    if (u.kind == Unit::kEmbedding) layers_.embedding_forward(input);
    if (u.kind == Unit::kLayer) layers_.layer_forward(input);
    if (u.kind == Unit::kOutput) layers_.output_forward(input);
    return;
  }
  if (u.kind == Unit::kEmbedding) layers_.embedding_backward(input);
  if (u.kind == Unit::kOutput) layers_.output_backward(input);
  if (u.kind == Unit::kLayer) {
    if (par_.recompute == Recompute::kFull) {
      // Megatron re-runs a checkpointed layer's forward once its output gradient is there.
      b_.set_scope("R" + microbatch + layer);
      layers_.layer_forward(input);
      input = kNone;
      b_.set_scope("B" + microbatch + layer);
    }
    layers_.layer_backward(input);
  }
}

Ref StageEmitter::zero3_gather(const Unit& u) {
  if (!layout_.active(GroupKind::kDp) || u.params.dense <= 0) return kNone;
  return b_.collective(GroupKind::kDp, CommType::kAllGather, padded_slice(u.params.dense, GroupKind::kDp), "zero.ag",
                       {b_.last_compute()});
}

void StageEmitter::forward(const Task& task) {
  const std::uint64_t g = task.chunk * par_.pp + stage_;
  const std::string mb = std::to_string(task.microbatch);
  const auto act = static_cast<std::uint64_t>(shard_.n_sp * shard_.h * shard_.bytes);
  b_.set_scope("F" + mb);
  Ref input = kNone;
  if (g > 0) {
    input = b_.recv(stage_ > 0 ? -1 : static_cast<std::int64_t>(par_.pp - 1), tag(task.microbatch, g - 1, false), act,
                    "recv", {b_.last_compute()});
  }
  const std::vector<Unit> us = units(task.chunk);
  // ZeRO 3 (one stage, so no receive): each unit's weights are gathered while the one before runs.
  const bool zero3 = par_.zero == 3;
  Ref next = zero3 ? zero3_gather(us.front()) : kNone;
  for (std::size_t i = 0; i < us.size(); ++i) {
    const Ref gathered = next;
    if (zero3 && i + 1 < us.size()) next = zero3_gather(us[i + 1]);
    run(us[i], false, i == 0 && input != kNone ? input : gathered, mb);
  }
  if (g + 1 < model_chunks()) {
    b_.set_scope("F" + mb);
    last_send_ = b_.send(stage_ + 1 < par_.pp ? 1 : -static_cast<std::int64_t>(par_.pp - 1),
                         tag(task.microbatch, g, false), act, "send", {b_.last_compute()});
  }
}

void StageEmitter::backward(const Task& task, bool reduce_grads) {
  const std::uint64_t g = task.chunk * par_.pp + stage_;
  const std::string mb = std::to_string(task.microbatch);
  const auto act = static_cast<std::uint64_t>(shard_.n_sp * shard_.h * shard_.bytes);
  b_.set_scope("B" + mb);
  Ref grad = kNone;
  if (g + 1 < model_chunks()) {
    grad = b_.recv(stage_ + 1 < par_.pp ? 1 : -static_cast<std::int64_t>(par_.pp - 1), tag(task.microbatch, g, true),
                   act, "recv", {b_.last_compute()});
  }
  const std::vector<Unit> us = units(task.chunk);
  const bool zero3 = par_.zero == 3;
  Round& round = rounds_[par_.zero == 2 ? task.microbatch : 0];
  Ref next = zero3 ? zero3_gather(us.back()) : kNone;
  for (std::size_t k = us.size(); k-- > 0;) {
    const Unit& u = us[k];
    const Ref gathered = next;
    if (zero3 && k > 0) next = zero3_gather(us[k - 1]);
    run(u, true, grad != kNone ? grad : gathered, mb);
    grad = kNone;
    if (zero3) {
      if (layout_.active(GroupKind::kDp) && u.params.dense > 0) {
        const std::uint64_t slice = padded_slice(u.params.dense, GroupKind::kDp);
        b_.collective(GroupKind::kDp, CommType::kReduceScatter, slice * layout_.group_size(GroupKind::kDp), "zero.rs",
                      {b_.last_compute()});
      }
    } else if (reduce_grads) {
      const Ref ready = b_.last_compute();
      round.dense.add(u.params.dense, ready);
      round.expert.add(u.params.expert, ready);
    }
  }
  if (g > 0) {
    b_.set_scope("B" + mb);
    last_send_ = b_.send(stage_ > 0 ? -1 : static_cast<std::int64_t>(par_.pp - 1), tag(task.microbatch, g - 1, true),
                         act, "send", {b_.last_compute()});
  }
}

void StageEmitter::reduce_buckets(GroupKind group, const std::vector<Bucket>& buckets, bool scatter) {
  if (!layout_.active(group)) return;
  const std::uint64_t n = layout_.group_size(group);
  for (const Bucket& bucket : buckets) {
    const std::uint64_t slice = padded_slice(bucket.params, group);
    if (scatter) {
      b_.collective(group, CommType::kReduceScatter, slice * n, "grad.rs", {bucket.ready});
    } else {
      b_.collective(group, CommType::kAllReduce, static_cast<std::uint64_t>(bucket.params) * par_.dtype_bytes,
                    "grad.ar", {bucket.ready});
    }
  }
}

void StageEmitter::finish_iteration() {
  b_.set_scope("step");
  const bool scatter = par_.zero >= 1;
  for (Round& round : rounds_) {
    round.dense.close();
    round.expert.close();
    reduce_buckets(GroupKind::kDp, round.dense.buckets(), scatter);
    reduce_buckets(GroupKind::kExpertDp, round.expert.buckets(), scatter);
  }

  const StageParams params = stage_params(m_, layout_, stage_);
  const Ref end = b_.last_compute();
  if (shard_.split_seq) {
    b_.collective(GroupKind::kTp, CommType::kAllReduce,
                  static_cast<std::uint64_t>(params.replicated) * par_.dtype_bytes, "sp.ar", {end});
  }
  if (layout_.group_id(GroupKind::kEmbedding, layout_.rank({0, 0, 0, stage_})) != 0) {
    const auto bytes = static_cast<std::uint64_t>(count_params(m_).embedding / par_.tp * par_.dtype_bytes);
    b_.collective(GroupKind::kEmbedding, CommType::kAllReduce, bytes, "emb.ar",
                  {end, last_send_, b_.last_collective(GroupKind::kDp), b_.last_collective(GroupKind::kExpertDp),
                   b_.last_collective(GroupKind::kTp)});
  }
  // Adam on this rank's weights (its slice from ZeRO 1 on): fp32 master weights, both moments
  // and the gradient read, master weights and moments written back, 16-bit weights written.
  double dense = params.dense, expert = params.expert;
  if (par_.zero >= 1) {
    dense /= static_cast<double>(layout_.group_size(GroupKind::kDp));
    expert /= static_cast<double>(layout_.group_size(GroupKind::kExpertDp));
  }
  const double updated = dense + expert;
  const double per_param = 24 + 2 * static_cast<double>(par_.dtype_bytes);
  b_.compute({"adam", OpKind::kOptimizer, 0, 12 * updated, per_param * updated},
             {b_.last_collective(GroupKind::kDp), b_.last_collective(GroupKind::kExpertDp),
              b_.last_collective(GroupKind::kTp), b_.last_collective(GroupKind::kEmbedding)});
  if (par_.zero == 1 || par_.zero == 2) {
    const Ref step = b_.last_compute();
    // The updated weights, bucket by bucket, from each rank's slice.
    if (layout_.active(GroupKind::kDp)) {
      for (const Bucket& bucket : rounds_.front().dense.buckets()) {
        b_.collective(GroupKind::kDp, CommType::kAllGather, padded_slice(bucket.params, GroupKind::kDp), "param.ag",
                      {step});
      }
    }
    if (layout_.active(GroupKind::kExpertDp)) {
      for (const Bucket& bucket : rounds_.front().expert.buckets()) {
        b_.collective(GroupKind::kExpertDp, CommType::kAllGather, padded_slice(bucket.params, GroupKind::kExpertDp),
                      "param.ag", {step});
      }
    }
  }
}

StageTemplate StageEmitter::build() {
  const std::vector<Task> tasks = stage_tasks(par_.schedule, par_.pp, stage_, layout_.microbatches(), layout_.chunks());
  // Gradients are reduced after the last backward of each chunk (every backward with ZeRO 2).
  std::vector<std::size_t> last_backward(layout_.chunks(), 0);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].backward) last_backward[tasks[i].chunk] = i;
  }
  const auto bucket = static_cast<double>(par_.grad_bucket_params);
  rounds_.assign(par_.zero == 2 ? layout_.microbatches() : 1, Round{Bucketer(bucket), Bucketer(bucket)});
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].backward) {
      backward(tasks[i], par_.zero == 2 || last_backward[tasks[i].chunk] == i);
    } else {
      forward(tasks[i]);
    }
  }
  finish_iteration();
  StageTemplate out = b_.finish(stage_);
  out.peak_in_flight = peak_in_flight(tasks);
  return out;
}

}  // namespace

StageParams stage_params(const ModelSpec& m, const Layout& layout, std::uint64_t stage) {
  const ParallelSpec& par = layout.parallel();
  StageParams out;
  const LocalParams layer = layer_params(m, par);
  const auto layers = static_cast<double>(layout.layers_per_chunk() * layout.chunks());
  out.dense = layers * layer.dense;
  out.expert = layers * layer.expert;
  out.replicated = layers * layer_replicated_params(m);
  if (stage == 0) out.dense += embedding_params(m, par);
  if (stage + 1 == par.pp) {
    if (m.tied_embeddings && par.pp == 1) {
      out.dense += static_cast<double>(count_params(m).final_norm);
    } else {
      out.dense += output_params(m, par);
    }
    out.replicated += static_cast<double>(count_params(m).final_norm);
  }
  return out;
}

StageTemplate build_stage(const ModelSpec& model, const Layout& layout, const GpuSpec& gpu, std::uint64_t stage,
                          NodeOptions options) {
  return StageEmitter(model, layout, gpu, stage, options).build();
}

}  // namespace chakrasim::tools::llm
