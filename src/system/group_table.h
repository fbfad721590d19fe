// The communicator groups the system layer knows: those of the group file, shared by every NPU,
// and those an NPU learns at run time from a PyTorch process-group METADATA node, which shadow
// the shared ones for that NPU. Each group keeps its members in ring order and, for finding an
// NPU's place in the ring, sorted (npu, position) pairs.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/types.h"
#include "system/comm_groups.h"

namespace chakrasim::system {

struct Group {
  std::uint32_t id = 0;                                   // tag space: the reference's group id
  std::vector<NpuId> members;                             // ring order
  std::vector<std::pair<NpuId, std::uint32_t>> position;  // sorted (npu, index in members)

  bool contains(NpuId npu) const;
  std::uint32_t position_of(NpuId npu) const;  // npu must be a member
};

class GroupTable {
 public:
  explicit GroupTable(NpuId world_npus) : world_npus_(world_npus) {}

  // The group file's groups (ids >= 1), shared by every NPU.
  void set_shared(const CommGroups& groups);
  // A group `npu` learns at run time: key `key`, tag id `key + 1`, as the reference registers
  // them. An empty member list means every NPU.
  void register_own(NpuId npu, std::uint32_t key, std::vector<NpuId> members);
  // `npu`'s group `key`: its own if it learnt one, else the shared one; nullptr if neither.
  const Group* find(NpuId npu, std::uint32_t key) const;

 private:
  Group make(std::uint32_t id, std::vector<NpuId> members) const;
  NpuId world_npus_;
  std::map<std::uint32_t, Group> shared_;
  std::map<std::pair<NpuId, std::uint32_t>, Group> own_;
};

}  // namespace chakrasim::system
