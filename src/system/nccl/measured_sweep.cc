#include "system/nccl/measured_sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/resources.h"
#include "system/nccl/sweep.h"

namespace chakrasim::system::nccl {
namespace {

// Rows one log may hold: far beyond a real run's table (even one of -i steps), short of a
// comparison that would take minutes.
constexpr std::size_t kLogRowLimit = 100000;
// Fields a line is split into: more than any row's 23, and a bound on the work a long line makes.
constexpr std::size_t kFieldLimit = 64;

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while (at < line.size() && fields.size() < kFieldLimit) {
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

// A line less the prefix a launcher puts on every line of a rank's output: Open MPI's
// --tag-output ("[1,0]<stdout>:"), MPICH's and Intel MPI's ("[0] "), srun --label's ("0: ").
std::string_view without_launcher_prefix(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos) return line;
  if (line[first] == '[') {
    const std::size_t close = line.find(']', first);
    if (close == std::string_view::npos) return line;
    std::string_view rest = line.substr(close + 1);
    for (const std::string_view tag : {"<stdout>:", "<stderr>:", ":"}) {
      if (rest.starts_with(tag)) {
        rest.remove_prefix(tag.size());
        break;
      }
    }
    return rest;
  }
  const std::size_t colon = line.find(':', first);
  if (colon != std::string_view::npos && colon + 1 < line.size() && line[colon + 1] == ' ' &&
      all_digits(line.substr(first, colon - first))) {
    return line.substr(colon + 1);
  }
  return line;
}

// The binary a "# Collective test starting: NAME" line names ("all_reduce_perf", an MPI
// build's "all_reduce_perf_mpi"), and the collective, if the model has it (nccl-tests also
// ships gather, scatter and hypercube tests).
struct Section {
  std::string name;
  std::optional<Collective> collective;
};
std::optional<Section> section_of(std::string_view line) {
  constexpr std::string_view kMark = "Collective test starting:";
  const std::size_t at = line.find(kMark);
  if (at == std::string_view::npos) return std::nullopt;
  const auto fields = fields_of(line.substr(at + kMark.size()));
  if (fields.empty()) return std::nullopt;
  std::string_view name = fields[0];
  if (name.ends_with("_mpi")) name.remove_suffix(4);
  if (name.ends_with("_perf")) name.remove_suffix(5);
  return Section{std::string(name), parse_collective(name)};
}

// Where a row's fields are, by their count. nccl-tests prints out-of-place then in-place halves;
// before its root column (2.13) the field after the type was the operation, or a broadcast's
// root, and all-gather and send/receive printed none.
struct Layout {
  int redop = -1, root = -1, out_of_place = 0, in_place = -1;
};
std::optional<Layout> layout_of(std::size_t fields, Collective c) {
  const bool old_root = c == Collective::kBroadcast;  // its root where others had the operation
  switch (fields) {
    case 13:
    case 15: return Layout{3, 4, 5, 9};  // -S 1 adds a timestamp
    case 21:
    case 23: return Layout{3, 4, 5, 13};  // -I 1: each half's iterations' spread
    case 9: return Layout{3, 4, 5, -1};   // the out-of-place half
    case 12: return old_root ? Layout{-1, 3, 4, 8} : Layout{3, -1, 4, 8};
    case 8: return old_root ? Layout{-1, 3, 4, -1} : Layout{3, -1, 4, -1};
    case 11: return Layout{-1, -1, 3, 7};
    case 7: return Layout{-1, -1, 3, -1};
    default: return std::nullopt;
  }
}

// A "# nThread 1 nGpus 8 ... agg iters: 1 validation: 1 graph: 0" header's value after `key`.
std::optional<std::int64_t> header_value(const std::vector<std::string_view>& fields, std::string_view key) {
  for (std::size_t i = 0; i + 1 < fields.size(); ++i) {
    if (fields[i] == key) return number<std::int64_t>(fields[i + 1]);
  }
  return std::nullopt;
}

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

}  // namespace

MeasuredRun read_nccl_tests_log(std::string_view text, const std::string& file, Collective collective) {
  MeasuredRun run;
  std::set<std::string> sections;  // the tests the log names
  bool in_section = true;          // a log before 2.16.7 names none: all its tables are read
  std::optional<std::int64_t> table_gpus;
  std::size_t table_line = 0, gpus_line = 0;
  std::map<std::string, std::set<std::uint32_t>> ranks_on;  // host -> its ranks
  std::uint32_t max_rank = 0;
  std::size_t line_number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string_view line = without_launcher_prefix(text.substr(begin, end - begin));
    begin = end + 1;
    ++line_number;
    const auto where = [&] { return fmt::format("{}:{}", file, line_number); };
    if (const auto section = section_of(line)) {
      in_section = section->collective == collective;
      sections.insert(section->name);
      continue;
    }
    if (line.find("Collective test concluded:") != std::string_view::npos) {
      in_section = false;
      continue;
    }
    const auto fields = fields_of(line);
    if (fields.empty() || !in_section) continue;
    if (fields[0] == "#") {
      if (header_value(fields, "nThread")) {  // a table's header
        table_line = line_number;
        table_gpus = header_value(fields, "nGpus");
        if (const auto graph = header_value(fields, "graph:"); graph && *graph != 0) {
          throw Error(fmt::format("{}: a run with CUDA graphs (graph: {}); the model times calls launched one by one "
                                  "(nccl-tests' -G 0)",
                                  where(), *graph));
        }
        for (std::size_t i = 0; i + 2 < fields.size(); ++i) {
          if (fields[i] == "agg" && fields[i + 1] == "iters:") {
            const auto agg = number<std::int64_t>(fields[i + 2]);
            if (agg && *agg != 1) {
              throw Error(fmt::format("{}: calls aggregated in groups of {} (agg iters); the model times one call at "
                                      "a time (nccl-tests' -m 1)",
                                      where(), *agg));
            }
          }
        }
      }
      // "#  Rank  3 Group  0 Pid 1234 on host device  3 [0000:61:00] NVIDIA H100 80GB HBM3"
      if (fields.size() >= 3 && fields[1] == "Rank") {
        if (const auto rank = number<std::uint32_t>(fields[2])) {
          max_rank = std::max(max_rank, *rank);
          const auto on = std::find(fields.begin(), fields.end(), std::string_view("on"));
          const std::string host = on + 1 < fields.end() ? std::string(*(on + 1)) : std::string();
          ranks_on[host].insert(*rank);
          const auto bus = std::find_if(fields.begin(), fields.end(), [](std::string_view f) { return f[0] == '['; });
          if (run.gpu_name.empty() && bus != fields.end()) {
            for (auto f = bus + 1; f != fields.end(); ++f)
              run.gpu_name += (run.gpu_name.empty() ? "" : " ") + std::string(*f);
          }
        }
      }
      continue;
    }
    const auto type = fields.size() >= 3 && all_digits(fields[0]) ? parse_data_type(fields[2]) : std::nullopt;
    if (!type) continue;
    const auto layout = layout_of(fields.size(), collective);
    if (!layout) {
      throw Error(fmt::format("{}: a row of {} fields; expected 13 (size, count, type, redop, root, then time, "
                              "algbw, busbw, #wrong out of place and in place), 15 (with -S 1's timestamp), 21 or 23 "
                              "(with -I 1's spread), 12 or 11 (older nccl-tests, without the root), or the "
                              "out-of-place half of any",
                              where(), fields.size()));
    }
    MeasuredRow row;
    row.line = line_number;
    const auto size = number<std::uint64_t>(fields[0]);
    if (!size) throw Error(fmt::format("{}: size \"{}\"; expected bytes", where(), fields[0]));
    row.size = *size;
    row.type = *type;
    // The operation and the root tell one collective's table from another's where the log does
    // not name it: nccl-tests prints an operation for those that take one, "none" for the rest,
    // and a root for a broadcast and a reduce alone.
    if (layout->redop >= 0) {
      const std::string_view redop = fields[static_cast<std::size_t>(layout->redop)];
      if (takes_op(collective)) {
        const auto op = parse_reduce_op(redop);
        if (!op) {
          throw Error(fmt::format("{}: redop \"{}\"; expected one of {} for {} (is this another collective's "
                                  "table?)",
                                  where(), redop, reduce_op_names(), collective_name(collective)));
        }
        row.op = *op;
      } else if (redop != "none" && layout->root >= 0) {  // older nccl-tests printed other words here
        throw Error(fmt::format("{}: redop \"{}\"; expected none for {} (is this another collective's table?)", where(),
                                redop, collective_name(collective)));
      }
    }
    if (layout->root >= 0) {
      const std::string_view text_root = fields[static_cast<std::size_t>(layout->root)];
      const auto root = number<std::int64_t>(text_root);
      if (!root || (rooted(collective) ? *root < 0 : *root != -1)) {
        throw Error(fmt::format("{}: root \"{}\"; expected {} for {} (is this another collective's table?)", where(),
                                text_root, rooted(collective) ? "a rank" : "-1", collective_name(collective)));
      }
      row.root = *root < 0 ? 0 : static_cast<std::uint32_t>(*root);
    }
    const auto time = [&](int at, const char* column) {
      const std::string_view t = fields[static_cast<std::size_t>(at)];
      const auto us = number<double>(t);
      if (!us || !std::isfinite(*us) || *us < 0) {
        throw Error(fmt::format("{}: {} time \"{}\"; expected microseconds, 0 or more", where(), column, t));
      }
      return *us;
    };
    row.out_of_place_us = time(layout->out_of_place, "out-of-place");
    if (layout->in_place >= 0) {
      // nccl-tests prints 0.00 for a column it timed nothing in (a size of no element).
      const double in_place = time(layout->in_place, "in-place");
      if (in_place > 0) row.in_place_us = in_place;
    }
    // A time too small for its bytes to have a rate (a subnormal number) is no measurement either.
    if (row.size > 0 && !std::isfinite(static_cast<double>(row.size) / row.out_of_place_us)) {
      throw Error(
          fmt::format("{}: {} bytes in {} us; expected a measured time", where(), row.size, row.out_of_place_us));
    }
    // One run: a second table of this collective (a log of two runs) must be timed alike.
    if (table_gpus && run.gpus_per_thread && *table_gpus != *run.gpus_per_thread) {
      throw Error(fmt::format("{}: a table of {} run with -g {} (nGpus, line {}) after one with -g {} (line {}); "
                              "expected one run's table, or the tables in files of their own",
                              where(), collective_name(collective), *table_gpus, table_line, *run.gpus_per_thread,
                              gpus_line));
    }
    if (table_gpus && !run.gpus_per_thread) {
      if (*table_gpus < 1) throw Error(fmt::format("{}: nGpus {}; expected 1 or more", file, *table_gpus));
      run.gpus_per_thread = static_cast<std::uint32_t>(*table_gpus);
      gpus_line = table_line;
    }
    if (run.rows.size() == kLogRowLimit) {
      throw Error(fmt::format("{}: more than {} rows of {}; expected one run's table (nccl-tests prints tens)", file,
                              kLogRowLimit, collective_name(collective)));
    }
    run.rows.push_back(row);
  }
  if (!ranks_on.empty()) {
    run.ranks = max_rank + 1;
    run.hosts = static_cast<std::uint32_t>(ranks_on.size());
    std::size_t most = 0;
    for (const auto& [host, ranks] : ranks_on) most = std::max(most, ranks.size());
    run.ranks_per_host = static_cast<std::uint32_t>(most);
  }
  if (run.rows.empty()) {
    if (!sections.empty() && sections.count(collective_name(collective)) == 0) {
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

namespace {

// The rows of one type, operation and root: a sweep of their own.
bool same_sweep(const MeasuredRow& a, const MeasuredRow& b) {
  return a.type == b.type && a.op == b.op && a.root == b.root;
}

// The rows of each type, operation and root, in the order the log first has each, each group's
// rows by size.
std::vector<std::vector<ComparedRow*>> sweeps_of(std::vector<ComparedRow>& rows) {
  std::vector<std::vector<ComparedRow*>> sweeps;
  std::vector<bool> done(rows.size(), false);
  for (std::size_t first = 0; first < rows.size(); ++first) {
    if (done[first]) continue;
    std::vector<ComparedRow*> sweep;
    for (std::size_t i = first; i < rows.size(); ++i) {
      if (done[i] || !same_sweep(rows[i].measured, rows[first].measured)) continue;
      done[i] = true;
      sweep.push_back(&rows[i]);
    }
    std::stable_sort(sweep.begin(), sweep.end(),
                     [](const ComparedRow* a, const ComparedRow* b) { return a->measured.size < b->measured.size; });
    sweeps.push_back(std::move(sweep));
  }
  return sweeps;
}

// Over 1.2 times each neighbour in size, the smallest size's one, never the largest's (header).
constexpr double kSpikeRatio = 1.2;

void mark_spikes(const std::vector<ComparedRow*>& sweep) {
  for (std::size_t i = 0; i + 1 < sweep.size(); ++i) {
    const double t = sweep[i]->measured.out_of_place_us;
    const bool over_next = t > kSpikeRatio * sweep[i + 1]->measured.out_of_place_us;
    const bool over_last = i == 0 || t > kSpikeRatio * sweep[i - 1]->measured.out_of_place_us;
    sweep[i]->spike = over_next && over_last;
  }
}

std::vector<ComparedShape> compared_shapes(const std::vector<std::vector<ComparedRow*>>& sweeps) {
  std::vector<ComparedShape> shapes;
  for (const std::vector<ComparedRow*>& sweep : sweeps) {
    std::vector<SweepPoint> measured, model;
    for (const ComparedRow* r : sweep) {
      if (r->spike) continue;
      measured.push_back({r->measured.size, r->measured.out_of_place_us});
      model.push_back({r->measured.size, r->model_out_of_place_us});
    }
    if (measured.empty()) continue;  // a sweep of spikes only: none (a lone row is never one)
    const MeasuredRow& m = sweep.front()->measured;
    shapes.push_back({m.type, m.op, m.root, sweep_shape(measured), sweep_shape(model)});
  }
  return shapes;
}

}  // namespace

Comparison compare_with_model(const MeasuredRun& run, const std::string& file, Collective collective,
                              const Machine& machine, const Enabled& enabled, const Efficiencies& efficiencies,
                              double host_issue_us, bool leave_out_spikes) {
  // One pair of column models for each type and operation (what NCCL may run depends on them),
  // built once.
  std::map<std::pair<DataType, ReduceOp>, ColumnModels> models;
  Comparison c;
  c.host_issue_us = host_issue_us;
  c.gpus_per_thread = run.gpus_per_thread.value_or(0);
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
    SweepOptions one;
    one.collective = collective;
    one.type = m.type;
    one.op = m.op;
    one.root = m.root;
    one.host_issue_us = host_issue_us;
    const SweepRow modelled = sweep_row(it->second, one, m.size);
    if (modelled.size != m.size) {
      throw Error(fmt::format("{}: {} bytes of {}, which nccl-tests prints only on other numbers of ranks (on the "
                              "machine's {} it prints {}); expected the run's ranks (--gpus-per-node x --nodes)",
                              where(), m.size, data_type_name(m.type), machine.ranks(), modelled.size));
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
  const auto sweeps = sweeps_of(c.rows);
  if (leave_out_spikes) {
    for (const auto& sweep : sweeps) mark_spikes(sweep);
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
  c.in_place_error = in_logs.empty() ? 0.0 : std::exp(mean_abs_log_ratio(in_logs)) - 1;
  c.in_place_rows = in_logs.size();
  c.mean_signed_error = std::exp(mean_log_ratio(out_logs)) - 1;
  c.shapes = compared_shapes(sweeps);
  return c;
}

namespace {

std::string size_name(double bytes) {
  return bytes < 1024 ? fmt::format("{:.0f} B", bytes) : format_bytes(static_cast<std::uint64_t>(std::llround(bytes)));
}

// A shape's three figures, measured beside the model's, and where the model's choice changes over
// its rows.
std::string shape_lines(const ComparedShape& s, const Comparison& c, Collective collective, const Machine& machine) {
  std::string sweep = data_type_name(s.type);
  if (takes_op(collective)) sweep += std::string(" ") + reduce_op_name(s.op);
  if (rooted(collective)) sweep += fmt::format(" root {}", s.root);
  const SweepShape& m = s.measured;
  const SweepShape& model = s.model;
  const auto percent = [](double model_value, double measured_value) {
    return fmt::format("{:+.1f}%", 100 * (model_value / measured_value - 1));
  };
  std::string out = fmt::format("# shape of the {} rows, out of place, measured / model:\n", sweep);
  out += fmt::format("#   latency floor (the least time, at {}): {:.2f} / {:.2f} us ({})\n",
                     size_name(static_cast<double>(m.floor_size)), m.floor_us, model.floor_us,
                     percent(model.floor_us, m.floor_us));
  const double bus = bus_factor(collective, machine.ranks());
  out += fmt::format("#   peak busbw: {:.1f} GB/s at {} / {:.1f} at {} ({})\n", bus * m.peak_algbw_gb_per_s,
                     size_name(static_cast<double>(m.peak_size)), bus * model.peak_algbw_gb_per_s,
                     size_name(static_cast<double>(model.peak_size)),
                     percent(model.peak_algbw_gb_per_s, m.peak_algbw_gb_per_s));
  const auto half = [](const SweepShape& shape) {
    return shape.half_peak_size ? size_name(*shape.half_peak_size) : std::string("the smallest size or under");
  };
  out += fmt::format("#   half of the peak first reached at: {} / {}", half(m), half(model));
  if (m.half_peak_size && model.half_peak_size) {
    out += fmt::format(" ({:.2f}x the size)", *model.half_peak_size / *m.half_peak_size);
  }
  out += "\n";
  std::vector<const ComparedRow*> rows;
  for (const ComparedRow& r : c.rows) {
    if (r.measured.type == s.type && r.measured.op == s.op && r.measured.root == s.root) rows.push_back(&r);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ComparedRow* x, const ComparedRow* y) { return x->measured.size < y->measured.size; });
  std::string choices = choice_name(rows.front()->choice);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (choice_name(rows[i]->choice) != choice_name(rows[i - 1]->choice)) {
      choices += fmt::format(", {} from {}", choice_name(rows[i]->choice),
                             size_name(static_cast<double>(rows[i]->measured.size)));
    }
  }
  out += fmt::format("#   the model's choice: {}\n", choices);
  return out;
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
  const auto error = [](double model, double measured) {
    return fmt::format("{:+.1f}%", 100 * (model / measured - 1));
  };
  for (const ComparedRow& r : c.rows) {
    const MeasuredRow& m = r.measured;
    out += fmt::format("{:>12}  {:>8}  {:>6}  {:>4}  {:>10.2f} {:>10.2f} {:>8}", m.size, data_type_name(m.type),
                       takes_op(collective) ? reduce_op_name(m.op) : "none",
                       rooted(collective) ? std::to_string(m.root) : std::string("-1"), m.out_of_place_us,
                       r.model_out_of_place_us, error(r.model_out_of_place_us, m.out_of_place_us));
    if (m.in_place_us) {
      out += fmt::format("  {:>10.2f} {:>10.2f} {:>8}", *m.in_place_us, r.model_in_place_us,
                         error(r.model_in_place_us, *m.in_place_us));
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
  }
  out += fmt::format("\n# the model's times are {:.1f}% {} the measured ones overall (geometric mean, out of place)\n",
                     100 * std::abs(c.mean_signed_error), c.mean_signed_error < 0 ? "under" : "over");
  // The smallest size shows a platform's own latency, where the model's time there is its own
  // (not the host's launches), and it is under 1 MiB (from there the bytes take over).
  const auto smallest = std::min_element(c.rows.begin(), c.rows.end(), [](const ComparedRow& a, const ComparedRow& b) {
    return a.measured.size < b.measured.size;
  });
  if (smallest != c.rows.end() && smallest->measured.size < (std::uint64_t{1} << 20)) {
    const double gap = smallest->measured.out_of_place_us - smallest->model_out_of_place_us;
    if (smallest->model_out_of_place_us <= c.host_issue_us) {
      out += fmt::format("# the smallest size's model time is the host's launches ({:.2f} us); --host-launch-us sets "
                         "a GPU's launch",
                         c.host_issue_us);
      // The log's -g says how many launches make the measured time: each one's share of it.
      if (c.gpus_per_thread > 0) {
        out += fmt::format(": {:.2f} would make them the measured {:.2f} (nGpus {})",
                           smallest->measured.out_of_place_us / c.gpus_per_thread, smallest->measured.out_of_place_us,
                           c.gpus_per_thread);
      }
      out += "\n";
    } else if (gap > 0) {
      out += fmt::format("# the smallest size takes {:.2f} us more than the model: --platform-latency-us {:.2f} would "
                         "add it to every call\n",
                         gap, machine.platform_latency_us + gap);
    }
  }
  for (const ComparedShape& shape : c.shapes) out += shape_lines(shape, c, collective, machine);
  out += "#\n";
  return out;
}

}  // namespace chakrasim::system::nccl
