// Planning a hybrid text workload (see text_hybrid.cc for the kinds, their settings and groups):
// line 1's settings, the model-parallel group size, each layer's collective groups, the
// recomputation checkpoints and the communicator-group families.
#include "tools/text/text_hybrid_plan.h"

#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>

#include "core/error.h"

namespace chakrasim::tools::text {
namespace {

struct KindName {
  const char* keyword;
  Kind kind;
};
constexpr std::array<KindName, 3> kKinds{{{"HYBRID_TRANSFORMER", Kind::kTransformer},
                                          {"HYBRID_TRANSFORMER_FWD_IN_BCKWD", Kind::kTransformerFwdInBwd},
                                          {"HYBRID_CUSTOMIZED", Kind::kCustomized}}};

constexpr std::string_view kGroupKey = "model_parallel_NPU_group:";
constexpr std::string_view kCheckpointsKey = "checkpoints:";
constexpr std::string_view kInitiatesKey = "checkpoint_initiates:";

// A HYBRID_CUSTOMIZED layer's parallelism (field 13).
enum class Policy { kData, kModel, kHybridDataModel, kHybridModelData };
struct PolicyName {
  const char* keyword;
  Policy policy;
};
constexpr std::array<PolicyName, 4> kPolicies{{{"DATA", Policy::kData},
                                               {"MODEL", Policy::kModel},
                                               {"HYBRID_DATA_MODEL", Policy::kHybridDataModel},
                                               {"HYBRID_MODEL_DATA", Policy::kHybridModelData}}};

// A family of `width`-based groups on N NPUs, with the trivial ones turned into kAll / kNone.
Span span_of(Span::Shape shape, std::size_t width, std::size_t npus) {
  const std::size_t group_size = shape == Span::Shape::kBlocks ? width : npus / width;
  if (group_size == 1) return {};
  if (group_size == npus) return {Span::Shape::kAll, 0};
  return {shape, width};
}

// Line 1's settings after the parallelism keyword.
struct Settings {
  std::optional<std::uint64_t> model_parallel_group;
  std::optional<std::vector<std::size_t>> checkpoints, initiates;
};

class SettingsParser {
 public:
  SettingsParser(const std::vector<std::string_view>& head, Kind kind, std::size_t layers, const std::string& source)
      : head_(head), kind_(kind), layers_(layers), source_(source) {}

  Settings parse() {
    Settings s;
    for (std::size_t at = 1; at < head_.size();) {
      const std::string_view key = head_[at];
      if (key == kGroupKey) {
        if (s.model_parallel_group) repeated(key);
        s.model_parallel_group = group_size(at + 1);
        at += 2;
      } else if (kind_ == Kind::kTransformerFwdInBwd && (key == kCheckpointsKey || key == kInitiatesKey)) {
        auto& list = key == kCheckpointsKey ? s.checkpoints : s.initiates;
        if (list) repeated(key);
        list = layer_list(key, at);
      } else {
        fail("{}: line 1: \"{}\" is not a setting of {}; expected {}", source_, key, head_[0], expected_settings());
      }
    }
    if (kind_ != Kind::kTransformerFwdInBwd) return s;
    for (const std::string_view key : {kCheckpointsKey, kInitiatesKey}) {
      if (!(key == kCheckpointsKey ? s.checkpoints : s.initiates)) {
        fail("{}: line 1: {} has no \"{}\" list; expected {}", source_, head_[0], key, expected_settings());
      }
    }
    return s;
  }

 private:
  std::string expected_settings() const {
    if (kind_ != Kind::kTransformerFwdInBwd)
      return fmt::format("\"{} N\", N the NPUs in a model-parallel group", kGroupKey);
    return fmt::format("\"{} N {} COUNT LAYER... {} COUNT LAYER...\", N the NPUs in a model-parallel group, then "
                       "the checkpoint layers and the layers that initiate a recomputation",
                       kGroupKey, kCheckpointsKey, kInitiatesKey);
  }

  [[noreturn]] void repeated(std::string_view key) const {
    fail("{}: line 1: \"{}\" is given twice; expected each setting once", source_, key);
  }

  std::string word_or_end(std::size_t at) const {
    return at < head_.size() ? fmt::format("\"{}\"", head_[at]) : std::string("the end of the line");
  }

  std::uint64_t group_size(std::size_t at) const {
    const std::optional<std::uint64_t> size = at < head_.size() ? parse_count(head_[at]) : std::nullopt;
    if (!size || *size < 1) {
      fail("{}: line 1: \"{}\" is followed by {}; expected the number of NPUs in a model-parallel group, an "
           "integer of at least 1",
           source_, kGroupKey, word_or_end(at));
    }
    return *size;
  }

  // `key COUNT LAYER...` from head_[at]; moves `at` past it.
  std::vector<std::size_t> layer_list(std::string_view key, std::size_t& at) const {
    const std::optional<std::uint64_t> count = at + 1 < head_.size() ? parse_count(head_[at + 1]) : std::nullopt;
    if (!count) {
      fail("{}: line 1: \"{}\" is followed by {}; expected the number of layers listed, then their indexes", source_,
           key, word_or_end(at + 1));
    }
    std::vector<std::size_t> list;
    for (std::uint64_t k = 0; k < *count; ++k) {
      const std::size_t word = at + 2 + static_cast<std::size_t>(k);
      const std::optional<std::uint64_t> layer = word < head_.size() ? parse_count(head_[word]) : std::nullopt;
      if (!layer) {
        fail("{}: line 1: \"{} {}\" lists {} layers, but layer {} of them is {}; expected {} layer indexes from 0 to "
             "{}",
             source_, key, *count, *count, k + 1, word_or_end(word), *count, layers_ - 1);
      }
      if (*layer >= layers_) {
        fail("{}: line 1: \"{}\" names layer {}, which the file does not have; expected a layer index from 0 to {} "
             "(the file has {} layers)",
             source_, key, *layer, layers_ - 1, layers_);
      }
      list.push_back(static_cast<std::size_t>(*layer));
    }
    at += 2 + static_cast<std::size_t>(*count);
    return list;
  }

  const std::vector<std::string_view>& head_;
  Kind kind_;
  std::size_t layers_;
  const std::string& source_;
};

Policy policy_of(const Layer& layer, const std::string& source) {
  for (const PolicyName& p : kPolicies) {
    if (layer.policy == p.keyword) return p.policy;
  }
  fail("{}: line {}: layer \"{}\": field 13 (the layer's parallelism, which HYBRID_CUSTOMIZED needs) {}; expected "
       "DATA, MODEL, HYBRID_DATA_MODEL or HYBRID_MODEL_DATA",
       source, layer.line, layer.name,
       layer.policy.empty() ? std::string("is missing") : fmt::format("is \"{}\"", layer.policy));
}

// M: line 1's, --model-parallel-group, or for HYBRID_CUSTOMIZED all NPUs; N must be a multiple.
std::size_t model_parallel_group(Kind kind, const std::vector<std::string_view>& head, const Settings& settings,
                                 const TextOptions& options, const std::string& source) {
  if (options.model_parallel_group < 0) {
    fail("--model-parallel-group is {}; expected at least 1 NPU", options.model_parallel_group);
  }
  const auto flag = static_cast<std::uint64_t>(options.model_parallel_group);
  if (settings.model_parallel_group && flag != 0 && *settings.model_parallel_group != flag) {
    fail("{}: line 1 says \"{} {}\" but --model-parallel-group is {}; expected the two to agree", source, kGroupKey,
         *settings.model_parallel_group, flag);
  }
  std::uint64_t group = settings.model_parallel_group.value_or(flag);
  const char* from = settings.model_parallel_group ? "line 1's model_parallel_NPU_group:" : "--model-parallel-group";
  if (group == 0 && kind != Kind::kCustomized) {
    fail("{}: line 1: {} needs the model-parallel group size; expected \"{} N\" after the parallelism (or "
         "--model-parallel-group N), N the NPUs in a model-parallel group",
         source, head[0], kGroupKey);
  }
  const auto npus = static_cast<std::uint64_t>(options.npus);
  if (group == 0) return static_cast<std::size_t>(npus);  // HYBRID_CUSTOMIZED: one model-parallel group
  if (npus % group != 0) {
    fail("{}: --npus {} is not a multiple of the model-parallel group size {} ({}); expected a number of NPUs that "
         "{} divides",
         source, npus, group, from, group);
  }
  return static_cast<std::size_t>(group);
}

// Where model parallelism sits: on the low dimensions (model-parallel groups of M consecutive
// ranks) or on the high ones (data-parallel groups of N/M consecutive ranks).
struct Layouts {
  LayerSpans low, high;
};

Layouts layouts_of(std::size_t npus, std::size_t group) {
  const Span low_model = span_of(Span::Shape::kBlocks, group, npus);
  const Span low_data = span_of(Span::Shape::kStrided, group, npus);
  const Span high_model = span_of(Span::Shape::kStrided, npus / group, npus);
  const Span high_data = span_of(Span::Shape::kBlocks, npus / group, npus);
  return {{low_model, low_model, low_data}, {high_model, high_model, high_data}};
}

// The groups of each layer's phases, with their comm types checked where a collective may be
// written.
std::vector<LayerSpans> plan_spans(Kind kind, const std::vector<Layer>& layers, const Layouts& layouts,
                                   const std::string& source) {
  const Span all{Span::Shape::kAll, 0}, none{};
  std::vector<LayerSpans> spans;
  for (const Layer& layer : layers) {
    LayerSpans s = layouts.low;
    bool fwd_ig = true, wg = true;  // the phases whose comm columns the layer uses
    if (kind == Kind::kCustomized) {
      switch (policy_of(layer, source)) {
        case Policy::kData:
          s = {none, none, all};
          fwd_ig = false;
          break;
        case Policy::kModel:
          s = {all, all, none};
          wg = false;
          break;
        case Policy::kHybridDataModel: s = layouts.low; break;
        case Policy::kHybridModelData: s = layouts.high; break;
      }
    }
    // The policy, not N, decides which columns are checked: a phase whose group is one NPU
    // still has a parallelism.
    if (fwd_ig) check_comm_type(source, layer, layer.fwd, 4, "forward");
    if (fwd_ig) check_comm_type(source, layer, layer.ig, 7, "input-gradient");
    if (wg) check_comm_type(source, layer, layer.wg, 10, "weight-gradient");
    spans.push_back(s);
  }
  return spans;
}

// Per layer, the checkpoint its recomputation starts from, if it initiates one.
std::vector<std::optional<std::size_t>> plan_recompute(const Settings& settings, std::size_t layers,
                                                       const std::string& source) {
  std::vector<std::optional<std::size_t>> from(layers);
  if (!settings.initiates) return from;
  for (const std::size_t layer : *settings.initiates) {
    std::optional<std::size_t> nearest;
    for (const std::size_t c : *settings.checkpoints) {
      if (c < layer && (!nearest || c > *nearest)) nearest = c;
    }
    if (!nearest) {
      fail("{}: line 1: \"{}\" names layer {}, but no layer of \"{}\" is below it; expected a checkpoint below each "
           "layer that initiates a recomputation",
           source, kInitiatesKey, layer, kCheckpointsKey);
    }
    from[layer] = nearest;
  }
  return from;
}

// The families some collective runs over, in id order: model-parallel then data-parallel groups
// of the low layout, then of the high one.
std::vector<Span> plan_families(const Plan& plan, const std::vector<Layer>& layers, const Layouts& layouts) {
  auto used = [&](const Span& family) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const LayerSpans& s = plan.spans[i];
      const bool ig_comm = i > 0 || plan.first_layer_ig_comm;
      if ((s.fwd == family && comm_type_of(layers[i].fwd.comm_type)) ||
          (ig_comm && s.ig == family && comm_type_of(layers[i].ig.comm_type)) ||
          (s.wg == family && comm_type_of(layers[i].wg.comm_type))) {
        return true;
      }
    }
    return false;
  };
  std::vector<Span> order;
  for (const Span& f : {layouts.low.fwd, layouts.low.wg, layouts.high.fwd, layouts.high.wg}) {
    const bool group = f.shape == Span::Shape::kBlocks || f.shape == Span::Shape::kStrided;
    if (group && used(f) && std::find(order.begin(), order.end(), f) == order.end()) order.push_back(f);
  }
  return order;
}

}  // namespace

bool is_hybrid_parallelism(std::string_view keyword) {
  return std::any_of(kKinds.begin(), kKinds.end(), [&](const KindName& k) { return keyword == k.keyword; });
}

Plan plan_hybrid(const std::vector<std::string_view>& head, const std::vector<Layer>& layers, const std::string& source,
                 const TextOptions& options) {
  Plan plan;
  plan.kind = std::find_if(kKinds.begin(), kKinds.end(), [&](const KindName& k) { return head[0] == k.keyword; })->kind;
  plan.npus = static_cast<std::size_t>(options.npus);
  const Settings settings = SettingsParser(head, plan.kind, layers.size(), source).parse();
  const Layouts layouts = layouts_of(plan.npus, model_parallel_group(plan.kind, head, settings, options, source));
  plan.spans = plan_spans(plan.kind, layers, layouts, source);
  plan.recompute = plan_recompute(settings, layers.size(), source);
  plan.first_layer_ig_comm = plan.kind != Kind::kCustomized;
  plan.families = plan_families(plan, layers, layouts);
  plan.nodes_per_pass = 6 * std::uint64_t{layers.size()};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (plan.recompute[i]) plan.nodes_per_pass += 2 * (i - *plan.recompute[i]);
  }
  return plan;
}

std::string pg_name_of(const std::vector<Span>& families, const Span& span, std::size_t npus, std::size_t rank) {
  std::size_t base = 0;
  for (const Span& f : families) {
    const std::size_t groups = f.shape == Span::Shape::kBlocks ? npus / f.width : f.width;
    if (f == span) {
      const std::size_t index = f.shape == Span::Shape::kBlocks ? rank / f.width : rank % f.width;
      return std::to_string(base + index + 1);
    }
    base += groups;
  }
  return {};  // not reached: every collective's span is a family
}

std::string groups_json(const std::vector<Span>& families, std::size_t npus) {
  std::string json = "{";
  std::size_t id = 0;
  for (const Span& f : families) {
    const std::size_t groups = f.shape == Span::Shape::kBlocks ? npus / f.width : f.width;
    for (std::size_t g = 0; g < groups; ++g) {
      std::string members;
      for (std::size_t r = 0; r < npus; ++r) {
        const std::size_t index = f.shape == Span::Shape::kBlocks ? r / f.width : r % f.width;
        if (index == g) members += (members.empty() ? "" : ", ") + std::to_string(r);
      }
      json += fmt::format("{}\n  \"{}\": [{}]", id == 0 ? "" : ",", id + 1, members);
      ++id;
    }
  }
  return json + (id == 0 ? "}\n" : "\n}\n");
}

}  // namespace chakrasim::tools::text
