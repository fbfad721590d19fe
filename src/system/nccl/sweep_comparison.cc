#include "system/nccl/sweep_comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/error.h"
#include "system/nccl/sweep.h"

namespace chakrasim::system::nccl {
namespace {

// Over this many times each neighbour's time in size, a row is a noise spike (CompareOptions).
constexpr double kSpikeRatio = 1.2;
// From here the bytes, not a latency, set a call's time: no floor is read above it.
constexpr std::uint64_t kLatencySizesBytes = std::uint64_t{1} << 20;
// From here a call's bytes outweigh its latency many times over: its time reads as a link's rate.
constexpr std::uint64_t kBandwidthSizesBytes = std::uint64_t{64} << 20;

double mean_log_ratio(const std::vector<double>& logs) {
  double sum = 0;
  for (const double l : logs) sum += l;
  return logs.empty() ? 0.0 : sum / static_cast<double>(logs.size());
}
double mean_abs_log_ratio(const std::vector<double>& logs) {
  double sum = 0;
  for (const double l : logs) sum += std::abs(l);
  return logs.empty() ? 0.0 : sum / static_cast<double>(logs.size());
}

// "+3.5%": the model against the measured figure, as each row's error is printed.
std::string signed_percent(double model, double measured) {
  return fmt::format("{:+.1f}%", 100 * (model / measured - 1));
}

// "512 B", "16.0 MiB": a size as the shape lines print it, an interpolated one too (and one past
// 2^63 bytes, which no integer holds).
std::string size_name(double bytes) {
  if (bytes < 1023.5) return fmt::format("{:.0f} B", bytes);
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = bytes / 1024;
  std::size_t unit = 0;
  while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

// The rows of each sweep: one type, operation and root, and the k-th row of each size of them
// in the k-th sweep (a log of two runs repeats its sizes), in the order the log first has each,
// each sweep's rows by size.
struct SweepRows {
  std::tuple<DataType, ReduceOp, std::uint32_t, std::uint32_t> key;  // type, operation, root, repeat
  std::vector<ComparedRow*> rows;
};
std::vector<SweepRows> sweeps_of(std::vector<ComparedRow>& rows) {
  std::vector<SweepRows> sweeps;
  std::map<std::tuple<DataType, ReduceOp, std::uint32_t, std::uint64_t>, std::uint32_t> seen;  // and size
  std::map<std::tuple<DataType, ReduceOp, std::uint32_t, std::uint32_t>, std::size_t> index;
  for (ComparedRow& r : rows) {
    const MeasuredRow& m = r.measured;
    const std::uint32_t repeat = seen[{m.type, m.op, m.root, m.size}]++;
    const auto key = std::tuple{m.type, m.op, m.root, repeat};
    auto [at, added] = index.try_emplace(key, sweeps.size());
    if (added) sweeps.push_back({key, {}});
    sweeps[at->second].rows.push_back(&r);
  }
  for (SweepRows& sweep : sweeps) {
    std::stable_sort(sweep.rows.begin(), sweep.rows.end(),
                     [](const ComparedRow* a, const ComparedRow* b) { return a->measured.size < b->measured.size; });
  }
  return sweeps;
}

void mark_spikes(const std::vector<ComparedRow*>& sweep) {
  for (std::size_t i = 0; i + 1 < sweep.size(); ++i) {
    const double t = sweep[i]->measured.out_of_place_us;
    const bool over_next = t > kSpikeRatio * sweep[i + 1]->measured.out_of_place_us;
    const bool over_last = i == 0 || t > kSpikeRatio * sweep[i - 1]->measured.out_of_place_us;
    sweep[i]->spike = over_next && over_last;
  }
}

ComparedShape compared_shape(const SweepRows& sweep) {
  ComparedShape shape;
  std::tie(shape.type, shape.op, shape.root, shape.repeat) = sweep.key;
  std::vector<SweepPoint> measured, model;
  for (const ComparedRow* r : sweep.rows) {
    if (shape.model_choices.empty() || shape.model_choices.back().second != r->choice) {
      shape.model_choices.emplace_back(r->measured.size, r->choice);
    }
    if (r->spike) continue;
    measured.push_back({r->measured.size, r->measured.out_of_place_us});
    model.push_back({r->measured.size, r->model_out_of_place_us});
  }
  // Never empty: a sweep's largest size is never a spike.
  shape.measured = sweep_shape(measured);
  shape.model = sweep_shape(model);
  for (const ComparedRow* r : sweep.rows) {
    if (!r->spike && r->measured.size == shape.measured.floor_size_bytes) {
      shape.model_at_measured_floor_us = r->model_out_of_place_us;
      break;
    }
  }
  return shape;
}

// The options nccl-tests' row of `type`, `op` and `root` was timed with, as one row of a sweep.
SweepOptions row_options(Collective collective, DataType type, ReduceOp op, std::uint32_t root,
                         const CompareOptions& options) {
  SweepOptions row;
  row.collective = collective;
  row.type = type;
  row.op = op;
  row.root = root;
  row.host_issue_us = options.host_issue_us();
  return row;
}

}  // namespace

Comparison compare_with_model(const MeasuredRun& run, const std::string& file, Collective collective,
                              const Machine& machine, const Enabled& enabled, const Efficiencies& efficiencies,
                              const CompareOptions& options) {
  // One pair of column models for each type and operation (what NCCL may run depends on them),
  // built once.
  std::map<std::pair<DataType, ReduceOp>, ColumnModels> models;
  Comparison c;
  c.options = options;
  for (const MeasuredRow& m : run.rows) {
    if (m.size == 0) continue;  // nothing runs, and nccl-tests prints no time for it
    const auto where = [&] { return fmt::format("{}:{}", file, m.line); };
    auto it = models.find({m.type, m.op});
    if (it == models.end()) {
      try {
        check_call(collective, m.type, machine);
      } catch (const Error& e) {
        throw Error(fmt::format("{}: {}", where(), e.what()));
      }
      Enabled call = enabled;
      restrict_to_call(call, collective, m.type, m.op, machine);
      it = models.emplace(std::pair{m.type, m.op}, ColumnModels(AchievedModel(machine, call, efficiencies))).first;
    }
    if (rooted(collective) && m.root >= machine.ranks()) {
      throw Error(fmt::format("{}: root {}; the machine's ranks are 0 to {} (--gpus-per-node x --nodes)", where(),
                              m.root, machine.ranks() - 1));
    }
    SweepOptions row_sweep = row_options(collective, m.type, m.op, m.root, options);
    SweepRow modelled = sweep_row(it->second, row_sweep, m.size);
    if (modelled.size != m.size) {
      // An nccl-tests before 2.13.12 split a gather's, scatter's or all-to-all's count in whole
      // elements a rank, not 16 bytes: its sizes are its own.
      row_sweep.share_in_16_bytes = false;
      const SweepRow unaligned = sweep_row(it->second, row_sweep, m.size);
      if (unaligned.size != m.size) {
        throw Error(fmt::format("{}: {} bytes of {}, which nccl-tests prints only on other numbers of ranks (on the "
                                "machine's {} it prints {}); expected the run's ranks (--gpus-per-node x --nodes)",
                                where(), m.size, data_type_name(m.type), machine.ranks(), modelled.size));
      }
      modelled = unaligned;
    }
    ComparedRow row;
    row.measured = m;
    row.model_out_of_place_us = modelled.out_of_place.time_us;
    row.model_in_place_us = modelled.in_place.time_us;
    row.choice = modelled.out_of_place.choice;
    c.rows.push_back(row);
  }
  if (c.rows.empty()) {
    throw Error(fmt::format("{}: no row of {} to compare: every size holds no element, and NCCL runs nothing for it",
                            file, collective_name(collective)));
  }
  const std::vector<SweepRows> sweeps = sweeps_of(c.rows);
  if (options.leave_out_spikes) {
    for (const SweepRows& sweep : sweeps) mark_spikes(sweep.rows);
  }
  std::vector<double> out_logs, in_logs;
  for (const ComparedRow& r : c.rows) {
    if (r.spike) {
      ++c.spikes;
      continue;
    }
    out_logs.push_back(std::log(r.model_out_of_place_us / r.measured.out_of_place_us));
    if (r.measured.in_place_us) in_logs.push_back(std::log(r.model_in_place_us / *r.measured.in_place_us));
  }
  c.out_of_place_error = std::exp(mean_abs_log_ratio(out_logs)) - 1;
  c.in_place_error = std::exp(mean_abs_log_ratio(in_logs)) - 1;  // 0 where no row prints one
  c.in_place_rows = in_logs.size();
  c.mean_signed_error = std::exp(mean_log_ratio(out_logs)) - 1;
  for (const SweepRows& sweep : sweeps) c.shapes.push_back(compared_shape(sweep));
  const ComparedShape& first = c.shapes.front();
  if (first.measured.peak_size_bytes >= kBandwidthSizesBytes) {
    const auto peak_bytes = first.measured.peak_size_bytes;
    c.peak_hint =
        share_hint(machine, enabled, efficiencies, row_options(collective, first.type, first.op, first.root, options),
                   peak_bytes, static_cast<double>(peak_bytes) / 1000 / first.measured.peak_algbw_gb_per_s);
  }
  return c;
}

namespace {

// A sweep's three figures, measured beside the model's, and where the model's choice changes.
std::string shape_lines(const ComparedShape& s, Collective collective, const Machine& machine) {
  std::string sweep = data_type_name(s.type);
  if (takes_op(collective)) sweep += std::string(" ") + reduce_op_name(s.op);
  if (rooted(collective)) sweep += fmt::format(" root {}", s.root);
  sweep += " rows";
  if (s.repeat > 0) sweep += fmt::format(" (the log's table {} of them)", s.repeat + 1);
  const SweepShape& m = s.measured;
  const SweepShape& model = s.model;
  std::string out = fmt::format("# shape of the {}, out of place, measured / model:\n", sweep);
  // The least time is a latency floor only where the sweep starts small enough to show one.
  const char* floor = m.floor_size_bytes < kLatencySizesBytes ? "latency floor (the least time)"
                                                              : "least time (from 1 MiB: no latency floor)";
  out +=
      fmt::format("#   {}: {:.2f} us at {} / {:.2f} at {} ({})\n", floor, m.floor_us,
                  size_name(static_cast<double>(m.floor_size_bytes)), model.floor_us,
                  size_name(static_cast<double>(model.floor_size_bytes)), signed_percent(model.floor_us, m.floor_us));
  const double bus = bus_factor(collective, machine.ranks());
  out += fmt::format("#   peak busbw: {:.1f} GB/s at {} / {:.1f} at {} ({})\n", bus * m.peak_algbw_gb_per_s,
                     size_name(static_cast<double>(m.peak_size_bytes)), bus * model.peak_algbw_gb_per_s,
                     size_name(static_cast<double>(model.peak_size_bytes)),
                     signed_percent(model.peak_algbw_gb_per_s, m.peak_algbw_gb_per_s));
  const auto half = [](const SweepShape& shape) {
    return shape.half_peak_size_bytes ? size_name(*shape.half_peak_size_bytes)
                                      : std::string("the smallest size or under");
  };
  out += fmt::format("#   half of the peak first reached at: {} / {}", half(m), half(model));
  if (m.half_peak_size_bytes && model.half_peak_size_bytes) {
    out += fmt::format(" ({:.2f}x the size)", *model.half_peak_size_bytes / *m.half_peak_size_bytes);
  }
  out += "\n#   the model's choice: ";
  for (std::size_t i = 0; i < s.model_choices.size(); ++i) {
    const auto& [size, choice] = s.model_choices[i];
    out += i == 0 ? choice_name(choice)
                  : fmt::format(", {} from {}", choice_name(choice), size_name(static_cast<double>(size)));
  }
  return out + "\n";
}

// What to set where the first sweep's floor, a latency (under 1 MiB), is above the model's time
// there: the host's launch where they set the model's time, else the platform's latency.
std::string floor_hint(const Comparison& c, const Machine& machine) {
  if (c.shapes.empty()) return "";
  const ComparedShape& s = c.shapes.front();
  const double measured = s.measured.floor_us, model = s.model_at_measured_floor_us;
  if (s.measured.floor_size_bytes >= kLatencySizesBytes || measured <= model) return "";
  const std::string at = size_name(static_cast<double>(s.measured.floor_size_bytes));
  const double host_issue_us = c.options.host_issue_us();
  if (model <= host_issue_us) {
    return fmt::format("# the floor, {:.2f} us at {}, is over the model's there, the host's {} launch(es) ({:.2f} "
                       "us): --host-launch-us {:.2f} would make them the measured floor\n",
                       measured, at, c.options.gpus_per_thread, host_issue_us, measured / c.options.gpus_per_thread);
  }
  return fmt::format("# the floor, {:.2f} us at {}, is {:.2f} us over the model's there: --platform-latency-us {:.2f} "
                     "would add it to every call\n",
                     measured, at, measured - model, machine.platform_latency_us + measured - model);
}

// What share binds the first sweep's peak in the model, and the value that gives its time.
std::string peak_hint(const Comparison& c, Collective collective, const Machine& machine) {
  if (!c.peak_hint) return "";
  const ShareHint& h = *c.peak_hint;
  const SweepShape& m = c.shapes.front().measured;
  const std::string peak =
      fmt::format("{:.1f} GB/s busbw at {}", bus_factor(collective, machine.ranks()) * m.peak_algbw_gb_per_s,
                  size_name(static_cast<double>(m.peak_size_bytes)));
  if (!h.reachable) {
    std::string out = fmt::format("# the peak, {}, is set in the model by {} ({} {:g}); even {} 1 leaves the model "
                                  "slower there",
                                  peak, h.binds, h.option, h.now, h.option);
    if (h.next_option != nullptr)
      out += fmt::format(", and at 1 {} binds it instead ({})", h.next_binds, h.next_option);
    return out + "\n";
  }
  return fmt::format("# the peak, {}, is set in the model by {} ({} {:g}): {} {:.3f} would give its time\n", peak,
                     h.binds, h.option, h.now, h.option, h.share);
}

}  // namespace

std::string comparison_table(const Comparison& c, Collective collective, const Machine& machine,
                             const std::string& file) {
  std::string out = fmt::format("# chakrasim nccl-tests --compare {}: {} on {}; the model's time beside each "
                                "measured one (docs/nccl.md)\n#\n",
                                file, collective_name(collective), machine_summary(machine));
  out += fmt::format("# {:>10}  {:>8}  {:>6}  {:>4}  {:^30}  {:^30}\n", "", "", "", "", "out-of-place", "in-place");
  out += fmt::format("# {:>10}  {:>8}  {:>6}  {:>4}  {:>10} {:>10} {:>8}  {:>10} {:>10} {:>8}  {}\n", "size", "type",
                     "redop", "root", "measured", "model", "error", "measured", "model", "error", "algorithm");
  out += fmt::format("# {:>10}  {:>8}  {:>6}  {:>4}  {:>10} {:>10} {:>8}  {:>10} {:>10} {:>8}\n", "(B)", "", "", "",
                     "(us)", "(us)", "", "(us)", "(us)", "");
  for (const ComparedRow& r : c.rows) {
    const MeasuredRow& m = r.measured;
    out += fmt::format("{:>12}  {:>8}  {:>6}  {:>4}  {:>10.2f} {:>10.2f} {:>8}", m.size, data_type_name(m.type),
                       takes_op(collective) ? reduce_op_name(m.op) : "none",
                       rooted(collective) ? std::to_string(m.root) : std::string("-1"), m.out_of_place_us,
                       r.model_out_of_place_us, signed_percent(r.model_out_of_place_us, m.out_of_place_us));
    if (m.in_place_us) {
      out += fmt::format("  {:>10.2f} {:>10.2f} {:>8}", *m.in_place_us, r.model_in_place_us,
                         signed_percent(r.model_in_place_us, *m.in_place_us));
    } else {
      out += fmt::format("  {:>10} {:>10.2f} {:>8}", "-", r.model_in_place_us, "");
    }
    out += "  " + choice_name(r.choice) + (r.spike ? "  (a spike: left out)\n" : "\n");
  }
  // A row's error is model / measured - 1; the means are of |ln(model / measured)|, so a model 2x
  // slow and one 2x fast weigh alike.
  out += fmt::format("# geomean |error| in time (exp of the mean |ln(model / measured)|, less 1): {:.1f}% out of "
                     "place over {} rows",
                     100 * c.out_of_place_error, c.rows.size() - c.spikes);
  if (c.in_place_rows > 0) {
    out += fmt::format(", {:.1f}% in place over {}", 100 * c.in_place_error, c.in_place_rows);
  }
  if (c.spikes > 0) {
    out += fmt::format(" ({} spike{} left out: over {} times each neighbour's time)", c.spikes,
                       c.spikes == 1 ? "" : "s", kSpikeRatio);
  } else if (c.options.leave_out_spikes) {
    out += " (no spike to leave out)";
  }
  out += fmt::format("\n# the model's times are {:.1f}% {} the measured ones overall (geometric mean, out of place)\n",
                     100 * std::abs(c.mean_signed_error), c.mean_signed_error < 0 ? "under" : "over");
  out += floor_hint(c, machine);
  out += peak_hint(c, collective, machine);
  for (const ComparedShape& shape : c.shapes) out += shape_lines(shape, collective, machine);
  out += "#\n";
  return out;
}

}  // namespace chakrasim::system::nccl
