#include "system/group_table.h"

#include <algorithm>

namespace chakrasim::system {

bool Group::contains(NpuId npu) const {
  return std::binary_search(position.begin(), position.end(), std::make_pair(npu, 0u),
                            [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::uint32_t Group::position_of(NpuId npu) const {
  return std::lower_bound(position.begin(), position.end(), std::make_pair(npu, 0u))->second;
}

Group GroupTable::make(std::uint32_t id, std::vector<NpuId> members) const {
  Group g;
  g.id = id;
  if (members.empty()) {
    for (NpuId r = 0; r < world_npus_; ++r) members.push_back(r);
  }
  g.members = std::move(members);
  for (std::uint32_t i = 0; i < g.members.size(); ++i) g.position.emplace_back(g.members[i], i);
  std::sort(g.position.begin(), g.position.end());
  return g;
}

void GroupTable::set_shared(const CommGroups& groups) {
  for (const auto& [key, members] : groups) shared_[key] = make(key, members);
}

void GroupTable::register_own(NpuId npu, std::uint32_t key, std::vector<NpuId> members) {
  own_[{npu, key}] = make(key + 1, std::move(members));
}

const Group* GroupTable::find(NpuId npu, std::uint32_t key) const {
  if (const auto own = own_.find({npu, key}); own != own_.end()) return &own->second;
  const auto shared = shared_.find(key);
  return shared != shared_.end() ? &shared->second : nullptr;
}

}  // namespace chakrasim::system
