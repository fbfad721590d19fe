#include "generate/llm/llm_generator.h"

#include <algorithm>
#include <filesystem>

#include "chakra/et_file.h"
#include "chakra/workload_files.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "generate/llm/llm_trace.h"

namespace chakrasim::tools::llm {
namespace {

// Every stage's template is held in memory while the files are written (a few hundred bytes per
// node): this bounds the nodes of all templates together, about 6 GB of them.
constexpr double kMaxTemplateNodes = 20e6;

void write_text(const std::string& path, const std::string& text, const char* flag) {
  write_file_atomically(path, text, fmt::format("the {} file", flag));
}

}  // namespace

std::vector<std::string> domain_warnings(const Layout& layout, const GpuSpec& gpu) {
  std::vector<std::string> warnings;
  const std::uint64_t node = gpu.gpus_per_node;
  const ParallelSpec& par = layout.parallel();
  for (const GroupKind kind : {GroupKind::kTp, GroupKind::kEp}) {
    if (!layout.active(kind)) continue;
    // Every group has the same shape, so the first one tells.
    const std::vector<std::uint64_t> members = layout.members(kind, 0);
    std::vector<std::uint64_t> domains;
    for (const std::uint64_t m : members) {
      if (std::find(domains.begin(), domains.end(), m / node) == domains.end()) domains.push_back(m / node);
    }
    if (domains.size() < 2) continue;
    std::string shown;
    for (std::size_t i = 0; i < members.size() && i < 4; ++i)
      shown += fmt::format("{}{}", i == 0 ? "" : ", ", members[i]);
    if (members.size() > 4) shown += ", ...";
    // EP groups step over the TP x CP ranks of each data-parallel index.
    const bool tp_kind = kind == GroupKind::kTp;
    const std::string flags = tp_kind ? fmt::format("--tp {}", par.tp)
                                      : fmt::format("--ep {} (with --tp {} --cp {})", par.ep, par.tp, par.cp);
    const std::string fix =
        tp_kind ? fmt::format("keep --tp within {}", node) : fmt::format("keep --ep x --tp x --cp within {}", node);
    warnings.push_back(fmt::format("{}: each {} group spans {} scale-up domains of {} GPUs (the first: ranks {}), so "
                                   "its collectives cross the "
                                   "scale-out network ({} GB/s per GPU instead of {}); {}, or set --gpus-per-node",
                                   flags, group_kind_name(kind), domains.size(), node, shown, gpu.scaleout_gb_per_s,
                                   gpu.scaleup_gb_per_s, fix));
  }
  return warnings;
}

Generated build_iteration(const GenerateOptions& o) {
  GpuSpec gpu = gpu_preset(o.gpu);
  if (o.gpus_per_node != 0) gpu.gpus_per_node = o.gpus_per_node;
  Generated g{o.model, gpu, Layout(o.model, o.parallel), {}};
  const ParallelSpec& par = g.layout.parallel();
  // About 40 nodes per layer and microbatch at most (fewer when fused).
  const double estimate = 40.0 * static_cast<double>(o.model.layers / par.pp + 2) *
                          static_cast<double>(g.layout.microbatches()) * static_cast<double>(par.pp);
  if (estimate > kMaxTemplateNodes) {
    fail("--global-batch {}: {} microbatches x {} layers make about {:.0f} M nodes to build; expected at most {:.0f} M "
         "(use fewer, larger microbatches)",
         par.global_batch, g.layout.microbatches(), o.model.layers, estimate / 1e6, kMaxTemplateNodes / 1e6);
  }
  for (std::uint64_t stage = 0; stage < par.pp; ++stage) {
    g.stages.push_back(build_stage(g.model, g.layout, gpu, stage, NodeOptions{!o.per_op_nodes, o.op_shapes}));
  }
  return g;
}

namespace {

// The system JSON matching the iteration's groups.
std::string system_text(const Generated& g, const GenerateOptions& o) {
  std::vector<std::uint64_t> sizes;
  for (std::size_t k = 0; k < kGroupKinds; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    if (kind != GroupKind::kPp && g.layout.active(kind)) sizes.push_back(g.layout.group_size(kind));
  }
  return system_json(g.gpu, g.layout.ranks(), sizes, o.nccl_collectives, o.systolic_preset);
}

}  // namespace

InMemoryIteration generate_llm_in_memory(const GenerateOptions& o, const chakra::LoadProgress& on_rank) {
  const Generated g = build_iteration(o);
  InMemoryIteration out;
  out.network_yaml = network_yaml(g.gpu, g.layout.ranks());
  out.system_json = system_text(g, o);
  out.groups_json = g.layout.groups_json();
  out.group_names_json = g.layout.group_names_json();
  std::vector<StageBytes> bytes;
  bytes.reserve(g.stages.size());
  for (const StageTemplate& s : g.stages) bytes.emplace_back(s);
  // Each rank's file as write_rank_files would write it, parsed as run would read it.
  out.graphs = chakra::load_from_memory(
      "generated", g.layout.ranks(),
      [&](std::size_t rank) { return bytes[g.layout.coord(rank).p].rank_file(g.layout, rank); }, on_rank);
  out.summary = summarize(g.model, g.layout, g.gpu, g.stages);
  out.warnings = domain_warnings(g.layout, g.gpu);
  return out;
}

GenerateResult generate_llm(const GenerateOptions& o) {
  if (o.out_prefix.empty()) fail("--out: expected a prefix for the trace files, got an empty one");
  const Generated g = build_iteration(o);
  GenerateResult result;
  // Check the optional files' settings before writing any trace.
  std::string network, system;
  if (!o.network_out.empty()) network = network_yaml(g.gpu, g.layout.ranks());
  if (!o.system_out.empty()) system = system_text(g, o);

  // The traces' size, before writing any: a late attribute adds at most about 20 bytes.
  double bytes = 0;
  for (const StageTemplate& stage : g.stages) {
    double stage_bytes = 0;
    for (std::size_t i = 0; i < stage.trace.nodes.size(); ++i) {
      stage_bytes += static_cast<double>(stage.trace.nodes[i].ByteSizeLong() + 5 + 20 * stage.late[i].size());
    }
    bytes += stage_bytes * static_cast<double>(g.layout.ranks() / g.layout.parallel().pp);
  }
  std::filesystem::path dir = std::filesystem::path(o.out_prefix).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code space_error;
  const std::filesystem::space_info space = std::filesystem::space(dir, space_error);
  if (!space_error && bytes > static_cast<double>(space.available)) {
    fail("--out: the {} traces need about {:.1f} GB, but {} has {:.1f} GB free", g.layout.ranks(), bytes / 1e9,
         dir.string(), static_cast<double>(space.available) / 1e9);
  }
  result.files = write_rank_files(g.stages, g.layout, o.out_prefix);
  // Files of an earlier, larger run with this prefix would make the simulator see more ranks
  // than the network has.
  for (std::uint64_t r = g.layout.ranks();; ++r) {
    std::error_code ec;
    if (!std::filesystem::remove(chakra::rank_path(o.out_prefix, r), ec)) break;
  }
  result.groups_path = o.out_prefix + ".groups.json";
  write_text(result.groups_path, g.layout.groups_json(), "--out");
  write_text(o.out_prefix + ".group-names.json", g.layout.group_names_json(), "--out");
  if (!network.empty()) write_text(o.network_out, network, "--network-out");
  if (!system.empty()) write_text(o.system_out, system, "--system-out");
  result.summary = summarize(g.model, g.layout, g.gpu, g.stages);
  result.warnings = domain_warnings(g.layout, g.gpu);
  return result;
}

}  // namespace chakrasim::tools::llm
