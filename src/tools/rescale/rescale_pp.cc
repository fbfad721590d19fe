// `chakra rescale --pp M` (rescaler.h): fewer pipeline stages, each running the passes of the
// K = P / M neighbouring stages it replaces, in the schedule generate llm builds for M stages.
//
// A stage's trace is read as passes: the nodes named F<mb>. (forward of microbatch mb), B<mb>.
// and R<mb>. (its backward and recomputation) and step. (gradient reduction and optimizer), as
// generate llm names them. The order of the passes gives the schedule: the one of gpipe, 1f1b
// and interleaved (llm_schedule.h) that orders every old stage's passes so.
//
// New stage s' of model chunk c runs, for each pass of the new schedule, the same pass of old
// stages s' K .. s' K + K - 1 (their chunk c, which holds the next layers of the model) back to
// back, forward in layer order and backward in reverse: every compute node and collective of
// those passes, with the pipeline message between two merged stages gone and those at the ends
// of the new stage re-addressed (peers M stages round, tags as generate llm numbers them). The
// compute nodes form one chain in the new order, and each group's collectives another (a
// communicator runs its work in order); any other dependency is kept when it points backwards
// in the new order.
//
// The step section: the merged stages' gradient buckets one after the other (the later stage's
// first, as the backward produces them), one all-reduce for the TP-replicated weights (their sizes
// summed), the tied embedding's all-reduce, one optimizer node (the merged ones' durations and
// sizes summed), then the parameter all-gathers.
//
// Splitting a stage is refused: fused compute nodes run across layer boundaries and gradient
// buckets span layers, so the traces do not say which work and which gradients belong to which
// half of a stage.

#include <algorithm>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "generate/llm/llm_schedule.h"
#include "tools/rescale/pp_stages.h"
#include "tools/rescale/rescale_step.h"

namespace chakrasim::tools::rescale {

using llm::Schedule;
using llm::Task;

Step rescale_pp(TraceSetPtr in, std::uint64_t new_pp) {
  const std::vector<std::uint32_t> pp_groups = groups_named(*in, "PP");
  if (pp_groups.empty()) {
    fail("{}: no group is named \"PP\"; expected the pipeline groups labelled PP (a trace set of one stage has no "
         "stages to merge, and splitting is not supported)",
         in->names_source);
  }
  std::vector<NpuId> first = in->groups.at(pp_groups.front());
  std::sort(first.begin(), first.end());
  PpLayout old_layout;
  old_layout.stages = first.size();
  old_layout.stride = first.size() >= 2 ? first[1] - first[0] : 0;
  std::set<NpuId> covered;
  for (const std::uint32_t id : pp_groups) {
    std::vector<NpuId> members = in->groups.at(id);
    std::sort(members.begin(), members.end());
    bool ok = old_layout.stride > 0 && members.size() == old_layout.stages && members.front() < old_layout.stride;
    for (std::uint64_t p = 0; ok && p < members.size(); ++p) {
      ok = members[p] == old_layout.rank(members.front(), p) && covered.insert(members[p]).second;
    }
    if (!ok) {
      fail("{}: PP group {} is not {{low + {} x p : p < {}}}; expected the pipeline stage outermost (rank = low + "
           "stride x p)",
           in->groups_source, id, old_layout.stride, old_layout.stages);
    }
  }
  if (covered.size() != in->ranks) {
    fail("{}: the PP groups cover {} of the {} ranks; expected one PP group per rank of a stage", in->groups_source,
         covered.size(), in->ranks);
  }
  const std::uint64_t old_pp = old_layout.stages;
  if (old_pp % new_pp != 0) {
    if (new_pp % old_pp == 0) {
      fail("--pp {}: splitting {} stages into {} needs each layer's compute and gradients apart, which the traces do "
           "not keep (fused compute nodes run across layers, gradient buckets span layers); expected a --pp that "
           "divides {}",
           new_pp, old_pp, new_pp, old_pp);
    }
    fail("--pp {}: expected a divisor of the traces' {} pipeline stages (each new stage merges whole old stages)",
         new_pp, old_pp);
  }
  const std::uint64_t k = old_pp / new_pp;
  PpLayout layout{old_layout.stride, new_pp};

  // The schedule: the one that orders every old stage's passes as they are.
  PipelineShape shape;
  std::vector<StagePasses> stages;
  for (std::uint64_t p = 0; p < old_pp; ++p) {
    stages.push_back(cut(in->trace(old_layout.rank(0, p)), in->source(old_layout.rank(0, p))));
  }
  std::uint64_t forwards = 0;
  for (const PassKey& key : stages.front().keys) {
    shape.microbatches = std::max(shape.microbatches, key.microbatch + 1);
    forwards += key.backward ? 0 : 1;
  }
  shape.chunks = shape.microbatches == 0 ? 1 : std::max<std::uint64_t>(1, forwards / shape.microbatches);
  bool found = false;
  for (const Schedule s : {Schedule::kOneFOneB, Schedule::kGpipe, Schedule::kInterleaved}) {
    if ((s == Schedule::kInterleaved) != (shape.chunks > 1)) continue;
    bool all = true;
    for (std::uint64_t p = 0; all && p < old_pp; ++p) {
      all = follows(stages[p], llm::stage_tasks(s, old_pp, p, shape.microbatches, shape.chunks));
    }
    if (all) {
      shape.schedule = s;
      found = true;
      break;
    }
  }
  if (!found) {
    fail("{}: the passes of the {} stages follow none of the gpipe, 1f1b and interleaved schedules of {} microbatches "
         "and {} model chunks per stage; expected the schedule generate llm builds",
         in->source(0), old_pp, shape.microbatches, shape.chunks);
  }
  if (shape.schedule == Schedule::kInterleaved && new_pp == 1) {
    fail("--pp 1: the traces run an interleaved schedule, which needs 2 or more stages; expected --pp of at least 2");
  }

  auto out = std::make_shared<TraceSet>();
  out->ranks = layout.stride * new_pp;
  out->groups_source = in->groups_source;
  out->names_source = in->names_source;
  auto groups = std::make_shared<NewGroups>(*in);
  for (const auto& [id, members] : in->groups) {
    std::vector<NpuId> merged;
    for (const NpuId m : members) {
      merged.push_back(static_cast<NpuId>(layout.rank(old_layout.low(m), old_layout.stage(m) / k)));
    }
    groups->add(id, 0, std::move(merged));
  }
  groups->finish(*out);
  const bool tied = !groups_named(*in, "EMB").empty();

  out->source = [in, old_layout, layout, k](std::uint64_t r) {
    return in->source(old_layout.rank(layout.low(r), layout.stage(r) * k));
  };
  auto buckets_merged = std::make_shared<std::uint64_t>(0);
  out->trace = [in, out_set = out.get(), groups, old_layout, layout, k, shape, new_pp,
                buckets_merged](std::uint64_t r) {
    const std::uint64_t low = layout.low(r), stage = layout.stage(r);
    std::vector<StagePasses> parts;
    BucketLimits limits;
    for (std::uint64_t j = 0; j < k; ++j) {
      const std::uint64_t old_stage = stage * k + j;
      const std::uint64_t from = old_layout.rank(low, old_stage);
      const std::string source = in->source(from);
      chakra::Trace trace = in->trace(from);
      std::unordered_set<std::uint64_t> dropped;
      for (chakra::Node& node : trace.nodes) {
        const std::optional<std::uint32_t> old_id = group_of(node, *in, source);
        if (!old_id) continue;
        if (const std::optional<std::uint32_t> id = groups->id(*old_id, 0)) {
          set_group(node, *id);
        } else if (node.type() == ChakraProtoMsg::COMM_COLL_NODE && !pass_of(node, source)) {
          dropped.insert(node.id());  // the tied embedding's all-reduce at PP 1
        } else {
          fail("{}: node {} uses group {}, which --pp {} leaves with one member; expected a larger --pp", source,
               node.id(), *old_id, new_pp);
        }
      }
      for (const auto& [group, bytes] : bucket_limits(trace)) {
        const auto [at, added] = limits.try_emplace(group, bytes);
        if (!added) at->second = std::min(at->second, bytes);
      }
      StagePasses part = cut(std::move(trace), source);
      part.dropped = std::move(dropped);
      const std::vector<Task> tasks =
          llm::stage_tasks(shape.schedule, old_layout.stages, old_stage, shape.microbatches, shape.chunks);
      if (!follows(part, tasks)) {
        fail("{}: its passes do not follow the {} schedule the other stages follow; expected one schedule for every "
             "rank",
             source, schedule_name(shape.schedule));
      }
      for (std::size_t p = 0; p < tasks.size(); ++p) {
        part.by_task[{tasks[p].backward, tasks[p].microbatch, tasks[p].chunk}] = p;
      }
      parts.push_back(std::move(part));
    }
    chakra::Trace merged = merge_stages(parts, shape, layout, low, stage, *out_set);
    *buckets_merged += merge_buckets(merged, limits);
    return merged;
  };
  Step step;
  step.out = out;
  step.changes = [in, out, old_pp, new_pp, k, shape, buckets_merged]() {
    return std::vector<std::string>{fmt::format("rescaled {} ranks (PP {}) to {} ranks (PP {})", in->ranks, old_pp,
                                                out->ranks, new_pp),
                                    fmt::format("  each new stage runs the passes of {} old stages back to back; the "
                                                "{} schedule of {} "
                                                "microbatches{} rebuilt for {} stages",
                                                k, schedule_name(shape.schedule), shape.microbatches,
                                                shape.chunks > 1 ? fmt::format(" and {} model chunks", shape.chunks)
                                                                 : std::string(),
                                                new_pp)};
  };
  step.caveats = {
      "--pp: a new stage keeps the merged stages' compute and collectives; their gradient buckets are kept but for a "
      "stage's last, partly filled one, merged with the next (Megatron re-buckets the merged weights whole); only "
      "merging is done: a --pp larger than the traces' is refused, as the traces do not keep a stage's layers apart",
      "--pp: the passes and the schedule are read from generate llm's node names (F<mb>., B<mb>., R<mb>., step.)",
  };
  if (tied && new_pp == 1) {
    // Through a string_view: g++ 12 warns (-Warray-bounds, falsely) on push_back of this literal.
    constexpr std::string_view kTiedEmbedding = "--pp 1: the tied embedding's all-reduce between the first and the "
                                                "last stage is gone, but the last stage's "
                                                "copy of the embedding stays in the gradients and the optimizer step "
                                                "(generate llm at PP 1 has one copy)";
    step.caveats.emplace_back(kTiedEmbedding);
  }
  return step;
}

}  // namespace chakrasim::tools::rescale
