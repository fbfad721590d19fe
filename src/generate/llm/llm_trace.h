// One training iteration of one pipeline stage, as a trace every rank of the stage shares
// (llm_stage.h): the stage's forward and backward passes in its schedule's order, the pipeline
// sends and receives between them, and the data-parallel gradient reduction.
//
// Pipeline: a forward pass receives its input activation from the previous model chunk and
// sends its output to the next; a backward pass receives the output's gradient from the next and
// sends the input's gradient back (micro x seq / cp x hidden elements, divided by t with --sp).
// Chunk c of stage s is model chunk g = c P + s; chunk P v - 1 ends with the loss.
//
// Gradients (Megatron-LM's overlapped bucketed reduction, DeepSpeed's ZeRO):
//  - ZeRO 0: the last microbatch's backward of each chunk fills buckets of --grad-bucket
//    weights in the order they are produced; each full bucket is all-reduced over the DP group
//    (expert weights over the expert-DP group) while the backward goes on.
//  - ZeRO 1: the same buckets are reduce-scattered, the optimizer updates this rank's slice,
//    and the updated weights are all-gathered bucket by bucket.
//  - ZeRO 2: as 1, but every microbatch's gradients are reduce-scattered (no full gradient is
//    kept between microbatches).
//  - ZeRO 3: as 2, and each layer's weights are all-gathered before its forward and again before
//    its backward, one layer ahead, for every microbatch; the optimizer's output stays sliced.
// The gradient collectives are the trace's last nodes: the simulator issues ready nodes in
// ascending id, so they take the communication slot only when no tensor-parallel collective or
// pipeline send is waiting, as a low-priority stream would.
// At the end: with --sp the norm (and router) gradients are all-reduced over the TP group, a
// tied embedding's gradient over the embedding group, then the optimizer step runs.
#pragma once

#include <cstdint>

#include "generate/llm/llm_gpu.h"
#include "generate/llm/llm_layout.h"
#include "generate/llm/llm_model.h"
#include "generate/llm/llm_stage.h"

namespace chakrasim::tools::llm {

StageTemplate build_stage(const ModelSpec& model, const Layout& layout, const GpuSpec& gpu, std::uint64_t stage,
                          NodeOptions options);

// The weights a rank of `stage` holds, by the group their gradients are reduced over.
struct StageParams {
  double dense = 0;
  double expert = 0;
  double replicated = 0;  // copied on every tensor-parallel rank (their gradients need a TP sum with --sp)
};
StageParams stage_params(const ModelSpec& model, const Layout& layout, std::uint64_t stage);

}  // namespace chakrasim::tools::llm
