#include "system/folded_groups.h"

#include <algorithm>

#include "core/error.h"
#include "system/tags.h"

namespace chakrasim::system {

GroupImages::GroupImages(const CommGroups& groups) : groups_(groups) {
  for (const auto& [id, members] : groups_) {
    std::vector<NpuId> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    ids_by_members_[std::move(sorted)].push_back(id);  // the map walks ids in ascending order
  }
}

std::optional<std::uint32_t> GroupImages::image(std::uint32_t group, const std::function<NpuId(NpuId)>& move) const {
  const auto listed = groups_.find(group);
  if (listed == groups_.end()) return std::nullopt;
  std::vector<NpuId> members = listed->second;
  std::sort(members.begin(), members.end());
  const std::vector<std::uint32_t>& family = ids_by_members_.at(members);
  std::vector<NpuId> moved;
  moved.reserve(members.size());
  for (const NpuId m : members) moved.push_back(move(m));
  std::sort(moved.begin(), moved.end());
  const auto image = ids_by_members_.find(moved);
  if (image == ids_by_members_.end() || image->second.size() != family.size()) return std::nullopt;
  const auto k = std::find(family.begin(), family.end(), group) - family.begin();
  return image->second[static_cast<std::size_t>(k)];
}

void FoldedGroups::set_groups(const CommGroups& groups) {
  images_.emplace(groups);
  moved_.clear();
}

std::uint64_t FoldedGroups::tag_seen_from_representative(NpuId member, std::uint64_t tag) {
  if ((tag & tags::kCollective) == 0) return tag;  // point-to-point, or its go-ahead
  const auto group = static_cast<std::uint32_t>((tag & tags::kMask) >> 32);
  if (group == 0) return tag;  // the world group is every NPU's
  const std::uint64_t moved = group_seen_from_representative(member, group);
  constexpr std::uint64_t kGroupBits = tags::kMask & ~0xffffffffull;
  return (tag & ~kGroupBits) | (moved << 32);
}

std::uint32_t FoldedGroups::group_seen_from_representative(NpuId member, std::uint32_t group) {
  const std::uint64_t key = (static_cast<std::uint64_t>(group) << 32) | folding_.move_of(member);
  if (const auto found = moved_.find(key); found != moved_.end()) return found->second;
  const std::optional<std::uint32_t> image =
      images_ ? images_->image(group, [&](NpuId npu) { return folding_.seen_from_representative(member, npu); })
              : std::nullopt;
  if (!image) fail("internal error: folded run: group {} moves onto no group", group);
  moved_.emplace(key, *image);
  return *image;
}

}  // namespace chakrasim::system
