#include "system/nccl/share_hint.h"

#include <array>

namespace chakrasim::system::nccl {
namespace {

// A share is lowered by this much to see what it moves; one the time follows fully moves it by
// 1 / 0.98 - 1 = 2.04%, and one that binds must move it by at least half of that.
constexpr double kProbe = 0.98;
constexpr double kBindingEffect = 0.5 * (1 / kProbe - 1);

struct Candidate {
  const char* option;
  const char* binds;
  void (*set)(Efficiencies&, double);
};
// NVLS-tree's share comes before NVLS's: an NVLS-tree call's NVLink side is both at once, and its
// own share is the one to set for it (NVLS's would move one node's NVLS too). Ties go to the first.
constexpr std::array<Candidate, 6> kCandidates = {{
    {"--ring-efficiency", "NVLink's rate for rings", [](Efficiencies& e, double v) { e.ring = v; }},
    {"--nvls-tree-efficiency", "NVLink's rate for NVLS-tree", [](Efficiencies& e, double v) { e.nvls_tree = v; }},
    {"--nvls-efficiency", "NVLink's rate for NVLS", [](Efficiencies& e, double v) { e.nvls = v; }},
    {"--all-to-all-efficiency", "NVLink's rate for an all-to-all", [](Efficiencies& e, double v) { e.all_to_all = v; }},
    {"--nic-efficiency", "the NICs' rate for collectives", [](Efficiencies& e, double v) { e.nic = v; }},
    {"--nic-p2p-efficiency", "the NICs' rate for point to point", [](Efficiencies& e, double v) { e.nic_p2p = v; }},
}};

}  // namespace

std::optional<ShareHint> share_hint(const Machine& machine, const Enabled& enabled, const Efficiencies& efficiencies,
                                    const SweepOptions& row, std::uint64_t bytes, double measured_us) {
  Enabled restricted = enabled;
  restrict_to_call(restricted, row.collective, row.type, row.op, machine);
  const auto time_us = [&](const Efficiencies& e) {
    return sweep_row(ColumnModels(AchievedModel(machine, restricted, e)), row, bytes).out_of_place.time_us;
  };
  // Every share at its value now, set, so that moving one leaves the others (a NIC's
  // point-to-point share otherwise follows its collectives' one).
  std::array<double, kCandidates.size()> now{};
  {
    const AchievedModel model(machine, restricted, efficiencies);
    now = {model.ring_share(),
           efficiencies.nvls_tree,
           efficiencies.nvls.value_or(machine.gpu->nvls_efficiency),
           efficiencies.all_to_all.value_or(machine.gpu->all_to_all_efficiency),
           model.nic_share(),
           model.nic_p2p_share()};
  }
  const auto with = [&](const std::array<double, kCandidates.size()>& shares) {
    Efficiencies e = efficiencies;
    for (std::size_t i = 0; i < kCandidates.size(); ++i) kCandidates[i].set(e, shares[i]);
    return e;
  };
  // The share that binds at `shares`, if any: the one whose probe moves the time most.
  const auto binding_at = [&](const std::array<double, kCandidates.size()>& shares) -> std::optional<std::size_t> {
    const double base_us = time_us(with(shares));
    std::optional<std::size_t> binding;
    double most = kBindingEffect;
    for (std::size_t i = 0; i < kCandidates.size(); ++i) {
      auto probe = shares;
      probe[i] *= kProbe;
      const double effect = time_us(with(probe)) / base_us - 1;
      if (effect > most) {
        most = effect;
        binding = i;
      }
    }
    return binding;
  };
  const std::optional<std::size_t> binding = binding_at(now);
  if (!binding) return std::nullopt;
  const Candidate& c = kCandidates[*binding];
  ShareHint hint{c.option, c.binds, now[*binding]};
  const auto time_at = [&](double share) {
    auto shares = now;
    shares[*binding] = share;
    return time_us(with(shares));
  };
  // The time falls as the share rises (NCCL's choice does not depend on it).
  if (time_at(1.0) > measured_us) {
    hint.reachable = false;
    // On the way to 1 another share may take over: name it.
    auto at_one = now;
    at_one[*binding] = 1.0;
    if (const auto next = binding_at(at_one); next && *next != *binding) {
      hint.next_option = kCandidates[*next].option;
      hint.next_binds = kCandidates[*next].binds;
    }
    return hint;
  }
  double lo = 1e-3, hi = 1.0;
  if (time_at(lo) < measured_us) return std::nullopt;
  for (int i = 0; i < 50; ++i) {
    const double mid = (lo + hi) / 2;
    (time_at(mid) > measured_us ? lo : hi) = mid;
  }
  hint.share = hi;
  return hint;
}

}  // namespace chakrasim::system::nccl
