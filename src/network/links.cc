#include "network/links.h"

#include <fmt/format.h>

#include "core/error.h"

namespace chakrasim::network {

LinkTable::LinkTable(const Topology& topology, const Folding* folding) : topology_(topology), folding_(folding) {
  const std::uint64_t owners = folding != nullptr ? folding->class_count() : topology.npu_count();
  std::uint64_t count = 0;
  for (const DimensionSpec& spec : topology.spec().dims) {
    dim_base_.push_back(static_cast<std::uint32_t>(count));
    const std::uint32_t per_npu = spec.kind == DimensionKind::kFullyConnected ? spec.npus - 1 : 2;
    per_npu_.push_back(per_npu);
    count += std::uint64_t{per_npu} * owners;
    if (count > 0xffffffffull) fail("the network has more than 2^32 links ({} so far)", count);
  }
  count_ = static_cast<std::uint32_t>(count);
}

std::size_t LinkTable::dim_of(std::uint32_t link) const {
  std::size_t d = dim_base_.size() - 1;
  while (link < dim_base_[d]) --d;
  return d;
}

std::uint32_t LinkTable::next(Cursor& c, NpuId dst) const {
  const std::size_t d = topology_.lowest_differing_dim(c.at, dst);
  const DimensionSpec& spec = topology_.spec().dims[d];
  const NpuId stride = topology_.stride(d);
  const std::uint32_t here = topology_.coordinate(c.at, d);
  const std::uint32_t there = topology_.coordinate(dst, d);
  switch (spec.kind) {
    case DimensionKind::kRing: {
      const std::uint32_t forward = (there + spec.npus - here) % spec.npus;
      const bool clockwise = forward <= spec.npus - forward;
      const std::uint32_t link = id(d, c.at, clockwise ? 0 : 1);
      const std::uint32_t step = clockwise ? (here + 1) % spec.npus : (here + spec.npus - 1) % spec.npus;
      c.at = c.at - here * stride + step * stride;
      return link;
    }
    case DimensionKind::kFullyConnected: {
      const std::uint32_t link = id(d, c.at, (there + spec.npus - here) % spec.npus - 1);
      c.at = c.at - here * stride + there * stride;
      return link;
    }
    case DimensionKind::kSwitch: {
      if (!c.in_switch) {
        c.in_switch = true;  // up to the switch; `at` stays the sender until it comes down
        return id(d, c.at, 0);
      }
      c.in_switch = false;
      c.at = c.at - here * stride + there * stride;
      return id(d, c.at, 1);
    }
  }
  return dim_base_[d];
}

std::vector<std::uint32_t> LinkTable::route(NpuId src, NpuId dst) const {
  std::vector<std::uint32_t> links;
  Cursor c{src, false};
  while (!arrived(c, dst)) links.push_back(next(c, dst));
  return links;
}

std::string LinkTable::name(std::uint32_t link) const {
  const std::size_t d = dim_of(link);
  const DimensionSpec& spec = topology_.spec().dims[d];
  const std::uint32_t local = link - dim_base_[d];
  const auto slot = static_cast<NpuId>(local / per_npu_[d]);
  const NpuId owner = folding_ != nullptr ? folding_->representative(slot) : slot;
  const bool symmetric = folding_ != nullptr && folding_->class_count() == 1;
  const std::uint32_t k = local % per_npu_[d];
  const NpuId stride = topology_.stride(d);
  const std::uint32_t here = topology_.coordinate(owner, d);
  const std::string where = symmetric             ? std::string("every NPU's")
                            : folding_ != nullptr ? fmt::format("NPU {}'s class's", owner)
                                                  : fmt::format("NPU {}", owner);
  switch (spec.kind) {
    case DimensionKind::kRing: {
      const std::uint32_t step = k == 0 ? (here + 1) % spec.npus : (here + spec.npus - 1) % spec.npus;
      if (folding_ != nullptr) return fmt::format("{} ring link {} (dim {})", where, k == 0 ? "+1" : "-1", d);
      return fmt::format("NPU {} -> NPU {} (ring, dim {})", owner, owner - here * stride + step * stride, d);
    }
    case DimensionKind::kFullyConnected: {
      if (folding_ != nullptr) return fmt::format("{} link to offset +{} (fully connected, dim {})", where, k + 1, d);
      const std::uint32_t there = (here + k + 1) % spec.npus;
      return fmt::format("NPU {} -> NPU {} (fully connected, dim {})", owner, owner - here * stride + there * stride,
                         d);
    }
    case DimensionKind::kSwitch:
      return fmt::format("{} {} (switch, dim {})", where, k == 0 ? "up-link" : "down-link", d);
  }
  return where;
}

}  // namespace chakrasim::network
