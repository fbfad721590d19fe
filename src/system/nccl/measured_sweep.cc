#include "system/nccl/measured_sweep.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/parse_number.h"
#include "system/nccl/sweep.h"

namespace chakrasim::system::nccl {
namespace {

// Rows one log may hold: far beyond a real run's table (even one of -i steps), short of a
// comparison that would take minutes.
constexpr std::size_t kLogRowLimit = 100000;
// Fields a line is split into: more than any row's 23, and a bound on the work a long line makes.
constexpr std::size_t kFieldLimit = 64;
// What a row may measure: a sweep's sizes (kLargestSweepBytes), and under 10^12 us (11.6 days) a
// call, past which a time is no measurement and its ratio to the model's overflows the means.
constexpr double kLongestUs = 1e12;

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

// A field as an error message shows it: a log's control bytes (a NUL, an escape) as '?'.
std::string shown(std::string_view field) {
  std::string out(field);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
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
    if (fields[i] == key) return parse_number<std::int64_t>(fields[i + 1]);
  }
  return std::nullopt;
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
            const auto agg = parse_number<std::int64_t>(fields[i + 2]);
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
        if (const auto rank = parse_number<std::uint32_t>(fields[2])) {
          max_rank = std::max(max_rank, *rank);
          const auto on = std::find(fields.begin(), fields.end(), std::string_view("on"));
          const std::string host = on + 1 < fields.end() ? std::string(*(on + 1)) : std::string();
          ranks_on[host].insert(*rank);
          const auto bus = std::find_if(fields.begin(), fields.end(), [](std::string_view f) { return f[0] == '['; });
          if (run.gpu_name.empty() && bus != fields.end()) {
            for (auto f = bus + 1; f != fields.end(); ++f) {
              if (!run.gpu_name.empty()) run.gpu_name.push_back(' ');
              run.gpu_name.append(*f);
            }
          }
        }
      }
      continue;
    }
    const auto type = fields.size() >= 3 ? parse_data_type(fields[2]) : std::nullopt;
    const bool sized = all_digits(fields[0]);
    if (!(sized && type)) {
      // A line shaped as a row, but for its size or its type, is a row that could not be read, not
      // a line of other text: leaving it out would compare fewer rows than the table has.
      if ((sized || type) && fields.size() >= 7 && layout_of(fields.size(), collective)) {
        if (!type) {
          throw Error(fmt::format("{}: type \"{}\"; expected one of nccl-tests' types ({})", where(), shown(fields[2]),
                                  data_type_names()));
        }
        throw Error(fmt::format("{}: size \"{}\"; expected bytes", where(), shown(fields[0])));
      }
      continue;
    }
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
    const auto size = parse_number<std::uint64_t>(fields[0]);
    if (!size || *size > kLargestSweepBytes) {
      throw Error(fmt::format("{}: size \"{}\"; expected bytes, at most 2^62", where(), shown(fields[0])));
    }
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
                                  where(), shown(redop), reduce_op_names(), collective_name(collective)));
        }
        row.op = *op;
      } else if (redop != "none" && layout->root >= 0) {  // older nccl-tests printed other words here
        throw Error(fmt::format("{}: redop \"{}\"; expected none for {} (is this another collective's table?)", where(),
                                shown(redop), collective_name(collective)));
      }
    }
    if (layout->root >= 0) {
      const std::string_view text_root = fields[static_cast<std::size_t>(layout->root)];
      const auto root = parse_number<std::int64_t>(text_root);
      if (!root || (rooted(collective) ? *root < 0 : *root != -1)) {
        throw Error(fmt::format("{}: root \"{}\"; expected {} for {} (is this another collective's table?)", where(),
                                shown(text_root), rooted(collective) ? "a rank" : "-1", collective_name(collective)));
      }
      row.root = *root < 0 ? 0 : static_cast<std::uint32_t>(*root);
    }
    const auto time = [&](int at, const char* column) {
      const std::string_view t = fields[static_cast<std::size_t>(at)];
      const auto us = parse_number<double>(t);
      if (!us || !std::isfinite(*us) || *us < 0 || *us > kLongestUs) {
        throw Error(fmt::format("{}: {} time \"{}\"; expected microseconds, 0 or more and under 10^12", where(), column,
                                shown(t)));
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
    const auto rateless = [&](double us) { return !std::isfinite(static_cast<double>(row.size) / us); };
    if (row.size > 0 && rateless(row.out_of_place_us)) {
      throw Error(
          fmt::format("{}: {} bytes in {} us; expected a measured time", where(), row.size, row.out_of_place_us));
    }
    if (row.size > 0 && row.in_place_us && rateless(*row.in_place_us)) {
      throw Error(
          fmt::format("{}: {} bytes in {} us in place; expected a measured time", where(), row.size, *row.in_place_us));
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

}  // namespace chakrasim::system::nccl
