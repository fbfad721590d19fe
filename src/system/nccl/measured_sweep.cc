#include "system/nccl/measured_sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "system/nccl/sweep.h"

namespace chakrasim::system::nccl {
namespace {

// Rows one log may hold: far beyond a real run's table (even one of -i steps), short of a
// comparison that would take minutes.
constexpr std::size_t kRowLimit = 100000;

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t begin = line.find_first_not_of(" \t\r", at);
    if (begin == std::string_view::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t\r", begin), line.size());
    fields.push_back(line.substr(begin, end - begin));
    at = end;
  }
  return fields;
}

template <typename T>
std::optional<T> number(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The collective a "# Collective test starting: NAME" line names: nccl-tests' binary, with
// "_perf" and an MPI build's "_mpi" after it.
std::optional<Collective> section_collective(std::string_view line) {
  constexpr std::string_view kMark = "Collective test starting:";
  const std::size_t at = line.find(kMark);
  if (at == std::string_view::npos) return std::nullopt;
  const auto fields = fields_of(line.substr(at + kMark.size()));
  if (fields.empty()) return std::nullopt;
  std::string_view name = fields[0];
  if (name.ends_with("_mpi")) name.remove_suffix(4);
  return parse_collective(name);
}

double geomean_error(const std::vector<double>& logs, bool absolute) {
  if (logs.empty()) return 0;
  double sum = 0;
  for (const double l : logs) sum += absolute ? std::abs(l) : l;
  return std::exp(sum / static_cast<double>(logs.size())) - 1;
}

}  // namespace

MeasuredRun read_nccl_tests_log(std::string_view text, const std::string& file, Collective collective) {
  MeasuredRun run;
  std::set<std::string> sections;  // the collectives the log names
  bool sectioned = false, in_section = true;
  std::uint32_t max_rank = 0;
  bool any_rank = false;
  std::size_t line_number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (const auto named = section_collective(line)) {
      sectioned = true;
      in_section = *named == collective;
      sections.insert(collective_name(*named));
      continue;
    }
    const auto fields = fields_of(line);
    if (fields.empty() || !in_section) continue;
    if (fields[0] == "#") {
      // nccl-tests' header: "# nThread 1 nGpus 8 ..." and "#  Rank  3 Group  0 Pid ...".
      for (std::size_t i = 1; i + 1 < fields.size(); ++i) {
        if (fields[i] == "nGpus") {
          if (const auto n = number<std::uint32_t>(fields[i + 1])) run.gpus_per_thread = *n;
        }
      }
      if (fields.size() >= 3 && fields[1] == "Rank") {
        if (const auto n = number<std::uint32_t>(fields[2])) {
          max_rank = std::max(max_rank, *n);
          any_rank = true;
        }
      }
      continue;
    }
    if (fields.size() < 3 || !all_digits(fields[0]) || !parse_data_type(fields[2])) continue;
    // A row. With the root column (newer nccl-tests): times at 5 and 9; without it at 4 and 8.
    const auto where = [&] { return fmt::format("{}:{}", file, line_number); };
    std::size_t time_at = 0;
    bool has_root = false, has_in_place = false;
    switch (fields.size()) {
      case 13: has_root = has_in_place = true; break;
      case 12: has_in_place = true; break;
      case 9: has_root = true; break;
      case 8: break;
      default:
        throw Error(fmt::format("{}: a row of {} fields; expected 13 (size, count, type, redop, root, then time, "
                                "algbw, busbw, #wrong out of place and in place), 12 (without the root, as older "
                                "nccl-tests print them), or the out-of-place half of either",
                                where(), fields.size()));
    }
    time_at = has_root ? 5 : 4;
    MeasuredRow row;
    row.line = line_number;
    const auto size = number<std::uint64_t>(fields[0]);
    if (!size) throw Error(fmt::format("{}: size \"{}\"; expected bytes", where(), fields[0]));
    row.size = *size;
    row.type = *parse_data_type(fields[2]);
    if (fields[3] != "none") {
      const auto op = parse_reduce_op(fields[3]);
      if (!op) {
        throw Error(fmt::format("{}: redop \"{}\"; expected none or one of {}", where(), fields[3], reduce_op_names()));
      }
      row.op = *op;
    }
    if (has_root) {
      const auto root = number<std::int64_t>(fields[4]);
      if (!root || *root < -1) throw Error(fmt::format("{}: root \"{}\"; expected a rank, or -1", where(), fields[4]));
      row.root = *root < 0 ? 0 : static_cast<std::uint32_t>(*root);
    }
    const auto time = [&](std::size_t at, const char* column) {
      const auto us = number<double>(fields[at]);
      if (!us || !std::isfinite(*us) || *us < 0) {
        throw Error(fmt::format("{}: {} time \"{}\"; expected microseconds, 0 or more", where(), column, fields[at]));
      }
      return *us;
    };
    row.out_of_place_us = time(time_at, "out-of-place");
    if (has_in_place) {
      const double in_place = time(time_at + 4, "in-place");
      if (in_place > 0) row.in_place_us = in_place;
    }
    if (row.size > 0 && row.out_of_place_us == 0) {
      throw Error(fmt::format("{}: {} bytes in 0 us; expected a measured time", where(), row.size));
    }
    if (run.rows.size() == kRowLimit) {
      throw Error(fmt::format("{}: more than {} rows of {}; expected one run's table (nccl-tests prints tens)", file,
                              kRowLimit, collective_name(collective)));
    }
    run.rows.push_back(row);
  }
  if (any_rank) run.ranks = max_rank + 1;
  if (run.rows.empty()) {
    if (sectioned && sections.count(collective_name(collective)) == 0) {
      std::string found;
      for (const std::string& s : sections) found += (found.empty() ? "" : ", ") + s;
      throw Error(fmt::format("{}: no {} table; its \"Collective test starting\" lines name {}", file,
                              collective_name(collective), found));
    }
    throw Error(fmt::format("{}: no nccl-tests rows of {}; expected lines of size, count, type, redop, root, then "
                            "time, algbw, busbw and #wrong, as nccl-tests prints them",
                            file, collective_name(collective)));
  }
  return run;
}

Comparison compare_with_model(const MeasuredRun& run, Collective collective, const Machine& machine,
                              const Enabled& enabled, const Efficiencies& efficiencies, double host_issue_us) {
  // One model for each type and operation (what NCCL may run depends on them), built once.
  std::map<std::pair<DataType, ReduceOp>, AchievedModel> models;
  Comparison c;
  std::vector<double> out_logs, in_logs;
  for (const MeasuredRow& m : run.rows) {
    if (m.size == 0) continue;
    auto it = models.find({m.type, m.op});
    if (it == models.end()) {
      check_call(collective, m.type, machine);
      Enabled call = enabled;
      restrict_to_call(call, collective, m.type, m.op, machine);
      it = models.emplace(std::pair{m.type, m.op}, AchievedModel(machine, call, efficiencies)).first;
    }
    SweepOptions one;
    one.collective = collective;
    one.min_bytes = one.max_bytes = m.size;
    one.type = m.type;
    one.op = m.op;
    one.root = m.root;
    one.host_issue_us = host_issue_us;
    const SweepRow modelled = run_sweep(it->second, one).front();
    if (modelled.empty) continue;  // too few elements for the machine's ranks: nothing runs
    ComparedRow row;
    row.measured = m;
    row.model_out_of_place_us = modelled.out_of_place.time_us;
    row.model_in_place_us = modelled.in_place.time_us;
    row.choice = modelled.out_of_place.choice;
    out_logs.push_back(std::log(row.model_out_of_place_us / m.out_of_place_us));
    if (m.in_place_us) in_logs.push_back(std::log(row.model_in_place_us / *m.in_place_us));
    c.rows.push_back(row);
  }
  c.out_of_place_error = geomean_error(out_logs, true);
  c.in_place_error = geomean_error(in_logs, true);
  c.in_place_rows = in_logs.size();
  c.mean_signed_error = geomean_error(out_logs, false);
  return c;
}

std::string comparison_table(const Comparison& c, Collective collective, const Machine& machine,
                             const std::string& file) {
  std::string out = fmt::format("# chakrasim nccl-tests --compare {}: {} on {} node(s) x {} {}", file,
                                collective_name(collective), machine.nodes, machine.gpus_per_node, machine.gpu->name);
  if (machine.nodes > 1) out += fmt::format(", {} x {} NICs per node", machine.nics_per_node, machine.nic->name);
  out += "; the model's time beside each measured one (docs/nccl.md)\n#\n";
  out += fmt::format("# {:>10}  {:>8}  {:>6}  {:>4}  {:^26}  {:^26}\n", "", "", "", "", "out-of-place", "in-place");
  out += fmt::format("# {:>10}  {:>8}  {:>6}  {:>4}  {:>9} {:>9} {:>6}  {:>9} {:>9} {:>6}  {}\n", "size", "type",
                     "redop", "root", "measured", "model", "error", "measured", "model", "error", "algorithm");
  out += fmt::format("# {:>10}  {:>8}  {:>6}  {:>4}  {:>9} {:>9} {:>6}  {:>9} {:>9} {:>6}\n", "(B)", "", "", "", "(us)",
                     "(us)", "", "(us)", "(us)", "");
  const auto error = [](double model, double measured) {
    return fmt::format("{:+.1f}%", 100 * (model / measured - 1));
  };
  for (const ComparedRow& r : c.rows) {
    const MeasuredRow& m = r.measured;
    out += fmt::format("{:>12}  {:>8}  {:>6}  {:>4}  {:>9.2f} {:>9.2f} {:>6}", m.size, data_type_name(m.type),
                       takes_op(collective) ? reduce_op_name(m.op) : "none",
                       rooted(collective) ? std::to_string(m.root) : std::string("-1"), m.out_of_place_us,
                       r.model_out_of_place_us, error(r.model_out_of_place_us, m.out_of_place_us));
    if (m.in_place_us) {
      out += fmt::format("  {:>9.2f} {:>9.2f} {:>6}", *m.in_place_us, r.model_in_place_us,
                         error(r.model_in_place_us, *m.in_place_us));
    } else {
      out += fmt::format("  {:>9} {:>9.2f} {:>6}", "-", r.model_in_place_us, "");
    }
    out += r.choice.point_to_point
               ? fmt::format("  P2P/{}\n", protocol_name(r.choice.protocol))
               : fmt::format("  {}/{}\n", algorithm_name(r.choice.algorithm), protocol_name(r.choice.protocol));
  }
  out += fmt::format("# geomean |error| in time: {:.1f}% out of place over {} sizes", 100 * c.out_of_place_error,
                     c.rows.size());
  if (c.in_place_rows > 0) {
    out += fmt::format(", {:.1f}% in place over {}", 100 * c.in_place_error, c.in_place_rows);
  }
  out += fmt::format("\n# the model's times are {:.1f}% {} the measured ones overall (geometric mean, out of place)\n",
                     100 * std::abs(c.mean_signed_error), c.mean_signed_error < 0 ? "under" : "over");
  if (!c.rows.empty()) {
    const ComparedRow& first = c.rows.front();
    const double gap = first.measured.out_of_place_us - first.model_out_of_place_us;
    // Only a small call shows the platform's own latency: from 1 MiB the bytes take over.
    if (gap > 0 && first.measured.size < (std::uint64_t{1} << 20)) {
      out += fmt::format("# the smallest size takes {:.2f} us more than the model: a platform's own latency "
                         "(--platform-latency-us) adds such a time to every call\n",
                         gap);
    }
  }
  out += "#\n";
  return out;
}

}  // namespace chakrasim::system::nccl
