#include "system/nccl/sweep.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "system/nccl/sparse_ring.h"

namespace chakrasim::system::nccl {
namespace {

constexpr std::uint64_t kSweepLimit = 10000;  // rows: far beyond any real sweep, short of a hang

// nccl-tests' number formatting: two decimals, fewer when the width is too narrow.
std::string fixed(double value, int width) {
  for (const char* format : {"{:{}.2f}", "{:{}.1f}", "{:{}.0f}"}) {
    std::string text = fmt::format(fmt::runtime(format), value, width);
    if (static_cast<int>(text.size()) <= width) return text;
  }
  return fmt::format("{:{}.1e}", value, width);
}

// nccl-tests' sizes for `size` requested: the parameter's element count, and the bytes it
// prints (the larger of send and receive buffers). Gathers, scatters and all-to-all split the
// count per rank, rounded down to 16 bytes (or, `share_in_16_bytes` false, to whole elements).
std::pair<std::uint64_t, std::uint64_t> sizes_of(Collective c, std::uint64_t size, std::uint32_t ranks, DataType type,
                                                 bool share_in_16_bytes) {
  const std::uint64_t bytes = element_bytes(type);
  const std::uint64_t count = size / bytes;
  if (c == Collective::kAllGather || c == Collective::kReduceScatter || c == Collective::kAllToAll) {
    const std::uint64_t elements_a_share = share_in_16_bytes ? std::max<std::uint64_t>(1, 16 / bytes) : 1;
    const std::uint64_t per_rank = count / ranks / elements_a_share * elements_a_share;
    return {per_rank, per_rank * ranks * bytes};
  }
  return {count, count * bytes};
}

// What nccl-tests' back-to-back timing takes off a ring LL all-reduce whose chunks are not all
// filled, us (sparse_ring.h): the steps its calls overlap, at an LL step's latency (NCCL's, and the
// GPU's own beyond it). Only where every channel takes NCCL's one order of GPUs (one node on
// NVSwitches): across nodes and on a mesh (RCCL's rings on MI300X) the cycle is not this one, and
// nothing is taken off. Simple waits on its steps' counters even for an empty chunk: no overlap.
double back_to_back_saving_us(const AchievedModel& model, Collective c, const TuningModel::Choice& choice,
                              std::uint64_t count, std::uint32_t element_bytes) {
  const TuningModel& tuning = model.tuning();
  const Machine& m = tuning.machine();
  if (c != Collective::kAllReduce || choice.algorithm != Algorithm::kRing || choice.protocol != Protocol::kLL ||
      !tuning.graph(Algorithm::kRing).same_channels) {
    return 0;
  }
  const std::uint32_t ranks = m.ranks();
  const double step_us = tuning.link_step_us(Algorithm::kRing, Protocol::kLL) + m.gpu->ll_step_latency_us;
  return back_to_back_saved_steps(ranks, filled_chunks(count, element_bytes, ranks)) * step_us;
}

AchievedModel with_in_place(const AchievedModel& model, bool in_place) {
  Enabled enabled = model.tuning().enabled();
  enabled.in_place = in_place;
  return AchievedModel(model.tuning().machine(), enabled, model.efficiencies());
}

}  // namespace

ColumnModels::ColumnModels(const AchievedModel& model)
    : out_of_place(with_in_place(model, false)), in_place(with_in_place(model, true)) {}

SweepRow sweep_row(const ColumnModels& models, const SweepOptions& o, std::uint64_t size) {
  const Machine& machine = models.out_of_place.tuning().machine();
  const std::uint32_t ranks = machine.ranks();
  const auto [count, bytes] = sizes_of(o.collective, size, ranks, o.type, o.share_in_16_bytes);
  SweepRow row;
  row.size = bytes;
  row.count = count;
  row.type = o.type;
  row.op = o.op;
  row.root = o.root;
  if (count == 0 && o.collective != Collective::kSendRecv) {
    // NCCL discards an empty collective, its all-to-all too (enqueue.cc; it still posts an
    // empty send and receive): the host's share of a call is all it takes.
    row.empty = true;
    row.out_of_place.time_us = row.in_place.time_us = machine.platform_latency_us;
    return row;
  }
  for (const auto& [column, column_model] :
       {std::pair{&row.out_of_place, &models.out_of_place}, {&row.in_place, &models.in_place}}) {
    const Timing t = column_model->time(o.collective, bytes);
    const double gpus_us =
        t.us - back_to_back_saving_us(*column_model, o.collective, t.choice, count, element_bytes(o.type));
    // Launches and GPU work overlap from one call to the next: the slower of the two sets the
    // pace. An empty collective launches nothing, so it has no such floor.
    column->time_us = std::max(gpus_us, o.host_issue_us);
    // An efficiency next to 0 or a fixed cost next to the largest double makes a time no table
    // can hold: refuse it rather than print inf.
    if (!std::isfinite(column->time_us)) {
      throw Error(fmt::format("the model's {} of {} bytes takes {} us; expected a finite time (check the "
                              "efficiencies, rates and fixed costs given: one near 0 or near the largest number)",
                              collective_name(o.collective), bytes, column->time_us));
    }
    column->choice = t.choice;
    column->algbw = static_cast<double>(bytes) / 1e3 / column->time_us;  // GB/s
    column->busbw = column->algbw * bus_factor(o.collective, ranks);
  }
  return row;
}

std::vector<SweepRow> run_sweep(const AchievedModel& model, const SweepOptions& o) {
  if (o.min_bytes > o.max_bytes) {
    throw Error(fmt::format("the smallest size ({} bytes, -b) is above the largest ({} bytes, -e); expected -b <= -e",
                            o.min_bytes, o.max_bytes));
  }
  if (o.factor == 1 || (o.factor == 0 && o.step_bytes == 0)) {
    throw Error("a sweep that never grows; expected a factor (-f) of 2 or more, or a step (-i) above 0");
  }
  if (o.min_bytes == 0 && o.factor > 1 && o.max_bytes > 0) {  // nccl-tests itself loops on 0 for ever
    throw Error(fmt::format("-b 0 with a factor (-f {}) never grows to -e {}; expected -b 1 or more, a step (-i) "
                            "instead of the factor, or -e 0 for the empty call alone",
                            o.factor, o.max_bytes));
  }
  const ColumnModels models(model);
  std::vector<SweepRow> rows;
  for (std::uint64_t size = o.min_bytes; size <= o.max_bytes;) {
    if (rows.size() >= kSweepLimit) {
      throw Error(fmt::format("more than {} sizes from {} to {} bytes; expected a larger factor or step", kSweepLimit,
                              o.min_bytes, o.max_bytes));
    }
    rows.push_back(sweep_row(models, o, size));
    const std::uint64_t next = o.factor > 1 ? size * o.factor : size + o.step_bytes;
    if (next <= size) break;  // past 2^64: the sweep is done
    size = next;
  }
  return rows;
}

std::string machine_summary(const Machine& m) {
  std::string out = fmt::format("{} node(s) x {} {}", m.nodes, m.gpus_per_node, m.gpu->name);
  if (m.nodes > 1) out += fmt::format(", {} x {} NICs per node", m.nics_per_node, m.nic->name);
  return out;
}

std::string choice_name(const TuningModel::Choice& c) {
  return c.point_to_point ? fmt::format("P2P/{}", protocol_name(c.protocol))
                          : fmt::format("{}/{}", algorithm_name(c.algorithm), protocol_name(c.protocol));
}

std::string sweep_table(const AchievedModel& model, const SweepOptions& o, const std::vector<SweepRow>& rows,
                        bool algorithms) {
  const Machine& m = model.tuning().machine();
  std::string out = fmt::format("# chakrasim nccl-tests: {} on {}", collective_name(o.collective), machine_summary(m));
  out += fmt::format("; NCCL 2.30's choice of algorithm and protocol{}, timed by chakrasim's model (docs/nccl.md)\n",
                     std::any_of(rows.begin(), rows.end(),
                                 [](const SweepRow& r) {
                                   return !r.empty && (r.out_of_place.choice.algorithm == Algorithm::kMsccl ||
                                                       r.in_place.choice.algorithm == Algorithm::kMsccl);
                                 })
                         ? " (RCCL's MSCCL schedules first)"
                         : "");
  const auto host_bound = std::count_if(rows.begin(), rows.end(), [&](const SweepRow& r) {
    return !r.empty && o.host_issue_us > 0 &&
           (r.out_of_place.time_us == o.host_issue_us || r.in_place.time_us == o.host_issue_us);
  });
  if (host_bound > 0) {
    out += fmt::format("# {} of the {} rows take the host's {:g} us to launch a call, not the GPUs' time\n", host_bound,
                       rows.size(), o.host_issue_us);
  }
  out += "#\n";
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place      "
                     "    \n",
                     "", "", "", "", "");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  "
                     "{:>6}{}\n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                     "busbw", "#wrong", algorithms ? "  algorithm" : "");
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}\n",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  double busbw_sum = 0;
  const auto body = [](const SweepTiming& t) {
    return fmt::format("  {}  {}  {}    N/A", fixed(t.time_us, 7), fixed(t.algbw, 6), fixed(t.busbw, 6));
  };
  for (const SweepRow& r : rows) {
    const std::string root = rooted(o.collective) ? std::to_string(r.root) : "-1";
    out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}", r.size, r.count, data_type_name(r.type),
                       takes_op(o.collective) ? reduce_op_name(r.op) : "none", root, body(r.out_of_place),
                       body(r.in_place));
    if (algorithms) {
      const std::string out_of_place = choice_name(r.out_of_place.choice), in_place = choice_name(r.in_place.choice);
      out += r.empty                    ? std::string("  -")
             : out_of_place == in_place ? "  " + out_of_place
                                        : fmt::format("  {} (in place: {})", out_of_place, in_place);
    }
    out += "\n";
    busbw_sum += r.out_of_place.busbw + r.in_place.busbw;
  }
  out += fmt::format("# {:<20} : 0 OK\n", "Out of bounds values");
  // nccl-tests averages every call it times, in place and out of place.
  out += fmt::format("# {:<20} : {:g} \n", "Avg bus bandwidth",
                     rows.empty() ? 0.0 : busbw_sum / (2.0 * static_cast<double>(rows.size())));
  out += "#\n";
  return out;
}

}  // namespace chakrasim::system::nccl
