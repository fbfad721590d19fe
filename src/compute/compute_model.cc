#include "compute/compute_model.h"

#include "compute/replay_model.h"
#include "compute/roofline_model.h"
#include "compute/systolic/systolic_model.h"
#include "core/error.h"

namespace chakrasim::compute {

const std::vector<ComputeModelInfo>& compute_models() {
  static const std::vector<ComputeModelInfo> kModels = {
      {"replay", "every compute node takes its recorded duration (duration_micros); models nothing of the chip",
       [](const ComputeSpec&) -> std::unique_ptr<ComputeModel> { return std::make_unique<ReplayModel>(); }},
      {"roofline",
       "GPU compute nodes run at min(peak-perf, local-mem-bw x num_ops / tensor_size), CPU nodes keep their "
       "recorded durations; ignores caches, kernel launch and overlap between kernels (ASTRA-sim's roofline)",
       [](const ComputeSpec& spec) -> std::unique_ptr<ComputeModel> { return std::make_unique<RooflineModel>(spec); }},
      {"systolic",
       "GPU compute nodes with an operation shape (gemm, conv) take the cycles SCALE-sim v2 counts on a chip of "
       "systolic arrays, optionally at least their DRAM traffic over its bandwidth; others fall back to the "
       "roofline; ignores the vector unit, layout changes and overlap between kernels",
       [](const ComputeSpec& spec) -> std::unique_ptr<ComputeModel> { return std::make_unique<SystolicModel>(spec); }},
  };
  return kModels;
}

std::unique_ptr<ComputeModel> make_figures_model(const ComputeSpec& spec, bool replay_only) {
  if (replay_only) return nullptr;
  std::unique_ptr<ComputeModel> model = make_compute_model(spec);
  return model->reports_figures() ? std::move(model) : nullptr;
}

std::unique_ptr<ComputeModel> make_compute_model(const ComputeSpec& spec) {
  std::string valid;
  for (const ComputeModelInfo& m : compute_models()) {
    if (spec.model == m.name) return m.make(spec);
    valid += std::string(valid.empty() ? "" : ", ") + m.name;
  }
  fail("unknown compute model \"{}\"; valid models are: {}", spec.model, valid);
}

}  // namespace chakrasim::compute
