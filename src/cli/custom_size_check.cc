#include "cli/custom_size_check.h"

#include <string_view>

#include <fmt/format.h>

#include "chakra/et_file.h"
#include "chakra/workload_files.h"
#include "core/resources.h"
#include "tools/msccl/msccl_converter.h"
#include "workload/executor.h"

namespace chakrasim::cli {

std::vector<std::string> custom_size_warnings(const sim::Inputs& inputs) {
  std::vector<std::string> warnings;
  for (std::size_t k = 0; k < system::kCollectiveKinds; ++k) {
    const std::string& prefix = inputs.system.custom_prefixes[k];
    if (prefix.empty() || inputs.custom_algorithms[k].empty()) continue;
    const auto kind = static_cast<system::CollectiveKind>(k);
    const auto converted = tools::msccl_converted_for(chakra::read_trace(chakra::rank_path(prefix, 0)), 0);
    if (!converted) continue;
    bool warned = false;
    for (NpuId npu = 0; npu < inputs.graphs.size() && !warned; ++npu) {
      const chakra::Graph& g = *inputs.graphs[npu];
      for (std::uint32_t i = 0; i < g.size() && !warned; ++i) {
        if (g.type(i) != chakra::NodeType::kCommColl || !g.has_attrs(i)) continue;
        const chakra::OpAttrs& a = g.attrs(i);
        // Only the kind itself: a barrier or reduce run as this kind has its own sizing.
        const auto form = workload::collective_form(a.comm_type, inputs.system.broadcast_by_duration);
        if (!form || form->kind != kind ||
            std::string_view(workload::collective_node_name(a.comm_type)) != system::collective_name(kind)) {
          continue;
        }
        const std::uint64_t chunk = tools::msccl_chunk_bytes(converted->collective, a.comm_size, converted->chunks);
        if (chunk == converted->chunk_bytes) continue;
        warned = true;
        warnings.push_back(fmt::format("{}: the custom {} was converted for {} ({} B), but NPU {}'s {} node {} \"{}\" "
                                       "has comm_size {} ({} B); a "
                                       "custom collective moves its algorithm's message sizes, so this one runs as if "
                                       "it were {}. Convert it "
                                       "for this size: chakrasim chakra msccl XML --collective {} --coll-size {} --out "
                                       "{}",
                                       chakra::rank_path(prefix, 0), system::collective_name(kind),
                                       format_bytes(converted->collective_bytes()), converted->collective_bytes(), npu,
                                       system::collective_name(kind), g.id(i), g.name(i), format_bytes(a.comm_size),
                                       a.comm_size, format_bytes(converted->collective_bytes()), converted->collective,
                                       a.comm_size, prefix));
      }
    }
  }
  return warnings;
}

}  // namespace chakrasim::cli
