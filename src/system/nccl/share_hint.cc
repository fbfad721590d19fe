#include "system/nccl/share_hint.h"

#include <array>

#include "system/nccl/sweep.h"

namespace chakrasim::system::nccl {
namespace {

// A share is lowered by this much to see what it moves; one the time follows fully moves it by
// 1 / 0.98 - 1 = 2.04%, and one that binds must move it by at least half of that.
constexpr double kProbe = 0.98;
constexpr double kBindingEffect = 0.5 * (1 / kProbe - 1);

struct Candidate {
  const char* option;
  const char* binds;
  std::optional<double> Efficiencies::*field;
};
constexpr std::array<Candidate, 5> kCandidates = {{
    {"--ring-efficiency", "NVLink's rate for rings", &Efficiencies::ring},
    {"--nvls-efficiency", "NVLink's rate for NVLS", &Efficiencies::nvls},
    {"--all-to-all-efficiency", "NVLink's rate for an all-to-all", &Efficiencies::all_to_all},
    {"--nic-efficiency", "the NICs' rate for collectives", &Efficiencies::nic},
    {"--nic-p2p-efficiency", "the NICs' rate for point to point", &Efficiencies::nic_p2p},
}};

}  // namespace

std::optional<ShareHint> share_hint(const Machine& machine, const Enabled& enabled, const Efficiencies& efficiencies,
                                    Collective collective, DataType type, ReduceOp op, std::uint32_t root,
                                    std::uint64_t bytes, double measured_us) {
  Enabled call = enabled;
  restrict_to_call(call, collective, type, op, machine);
  SweepOptions one;
  one.collective = collective;
  one.type = type;
  one.op = op;
  one.root = root;
  const auto time_us = [&](const Efficiencies& e) {
    return sweep_row(ColumnModels(AchievedModel(machine, call, e)), one, bytes).out_of_place.time_us;
  };
  // Every share at its value now, set, so that moving one leaves the others (a NIC's
  // point-to-point share otherwise follows its collectives' one).
  Efficiencies pinned = efficiencies;
  {
    const AchievedModel now(machine, call, efficiencies);
    pinned.ring = now.ring_share();
    pinned.nvls = efficiencies.nvls.value_or(machine.gpu->nvls_efficiency);
    pinned.all_to_all = efficiencies.all_to_all.value_or(machine.gpu->all_to_all_efficiency);
    pinned.nic = now.nic_share();
    pinned.nic_p2p = now.nic_p2p_share();
  }
  const double base_us = time_us(pinned);
  const Candidate* binding = nullptr;
  double most = kBindingEffect;
  for (const Candidate& c : kCandidates) {
    Efficiencies probe = pinned;
    probe.*c.field = *(pinned.*c.field) * kProbe;
    const double effect = time_us(probe) / base_us - 1;
    if (effect > most) {  // the first of equals: none follows another here (pinned)
      most = effect;
      binding = &c;
    }
  }
  if (binding == nullptr) return std::nullopt;
  ShareHint hint{binding->option, binding->binds, *(pinned.*binding->field), 1.0, true};
  const auto time_at = [&](double share) {
    Efficiencies e = pinned;
    e.*binding->field = share;
    return time_us(e);
  };
  // The time falls as the share rises (NCCL's choice does not depend on it).
  if (time_at(1.0) > measured_us) {
    hint.reachable = false;
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
