// `chakrasim chakra inspect`: a readable summary of one .et file or every rank of a prefix,
// with every problem found; exits 1 when there are errors.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/chakra_tools.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_path.h"
#include "core/resources.h"
#include "report/summary.h"
#include "tools/inspect/inspector.h"

namespace chakrasim::cli {

namespace {

constexpr std::size_t kProblemsShown = 100;
constexpr std::size_t kListShown = 8;  // entries of a one-line list before it folds

// Keys in the order a person expects: numbers (group ids) by value, before other text.
template <typename Map>
std::vector<const typename Map::value_type*> in_numeric_order(const Map& map) {
  std::vector<const typename Map::value_type*> order;
  for (const auto& entry : map) order.push_back(&entry);
  auto number = [](const std::string& key) -> std::optional<std::uint64_t> {
    if (key.empty() || key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoull(key);
  };
  std::stable_sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
    const auto x = number(a->first), y = number(b->first);
    if (x && y) return *x < *y;
    return x.has_value() && !y.has_value();
  });
  return order;
}

// "a, b, c", folded after kListShown entries: "..., and 24 more (--json lists them all)".
template <typename Map, typename Show>
std::string joined(const Map& map, Show&& show) {
  if (map.empty()) return "none";
  std::string out;
  std::size_t shown = 0;
  for (const auto* entry : in_numeric_order(map)) {
    if (shown == kListShown) {
      out += fmt::format(", and {} more (--json lists them all)", map.size() - shown);
      break;
    }
    out += (out.empty() ? "" : ", ") + show(entry->first, entry->second);
    ++shown;
  }
  return out;
}

std::string human_micros(std::uint64_t micros) { return report::format_duration(micros * 1000); }

std::string plural(std::uint64_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

void print_figures(std::ostream& out, const tools::TraceSummary& s, const char* path_label) {
  auto count = [](const std::string& k, std::uint64_t v) { return fmt::format("{} {}", k, v); };
  auto micros = [](const std::string& k, std::uint64_t v) { return fmt::format("{} {}", k, human_micros(v)); };
  // How many, and their bytes in all.
  auto volume = [](const std::string& k, const tools::Volume& v) {
    return fmt::format("{} {} ({})", k, v.count, format_bytes(v.bytes));
  };
  auto group = [](const std::string& k, const tools::Volume& v) {
    return fmt::format("{} {} ({})", k.empty() ? "all NPUs" : "group " + k, v.count, format_bytes(v.bytes));
  };
  out << "  nodes           " << joined(s.nodes_by_type, count) << "\n";
  out << "  time by type    " << joined(s.micros_by_type, micros) << "\n";
  out << fmt::format("  compute         {} (GPU {}, CPU {})\n", human_micros(s.compute_micros),
                     human_micros(s.gpu_compute_micros), human_micros(s.cpu_compute_micros));
  out << "  collectives     " << joined(s.collectives, volume) << "\n";
  out << "  by group        " << joined(s.groups, group) << "\n";
  out << fmt::format("  point-to-point  sends {} ({}), receives {} ({})\n", s.sends.count, format_bytes(s.sends.bytes),
                     s.recvs.count, format_bytes(s.recvs.bytes));
  if (s.critical_path_micros) {
    out << fmt::format("  {}{} over {}\n", path_label, human_micros(*s.critical_path_micros),
                       plural(s.critical_path_nodes, "node"));
  } else {
    out << "  " << path_label << "none (dependency cycle)\n";
  }
}

void print_text(std::ostream& out, const tools::Inspection& in) {
  if (!in.is_prefix) {
    const tools::TraceSummary& s = in.ranks.front();
    if (s.readable) {
      out << fmt::format("{}: {}, version \"{}\"\n", s.file, plural(s.nodes, "node"), s.version);
      print_figures(out, s, "critical path   ");
    }
  } else {
    out << fmt::format("{}: {} (.0.et to .{}.et)\n", in.input, plural(in.ranks.size(), "rank"), in.ranks.size() - 1);
    // One line per rank; consecutive ranks with the same figures share a line ("0-7").
    out << "  ranks        nodes     compute  collectives        sent  critical path  problems\n";
    auto row = [](const tools::TraceSummary& r) {
      std::uint64_t coll_bytes = 0;
      for (const auto& [k, v] : r.collectives) coll_bytes += v.bytes;
      const std::string path = r.critical_path_micros ? human_micros(*r.critical_path_micros) : "-";
      return fmt::format("{:>9} {:>11} {:>12} {:>11} {:>14} {:>9}", r.nodes, human_micros(r.compute_micros),
                         format_bytes(coll_bytes), format_bytes(r.sends.bytes), path, r.problems.size());
    };
    for (std::size_t first = 0; first < in.ranks.size();) {
      const std::string figures = row(in.ranks[first]);
      std::size_t last = first;
      while (last + 1 < in.ranks.size() && row(in.ranks[last + 1]) == figures) ++last;
      const std::string ranks = last == first ? std::to_string(first) : fmt::format("{}-{}", first, last);
      out << fmt::format("  {:<9} {}\n", ranks, figures);
      first = last + 1;
    }
    const tools::TraceSummary t = tools::totals(in);
    out << fmt::format("all ranks: {}\n", plural(t.nodes, "node"));
    print_figures(out, t, "longest critical path  ");
  }
  std::vector<const tools::Problem*> problems;
  for (const tools::TraceSummary& r : in.ranks) {
    for (const tools::Problem& p : r.problems) problems.push_back(&p);
  }
  for (const tools::Problem& p : in.problems) problems.push_back(&p);
  if (problems.empty()) {
    out << "no problems\n";
    return;
  }
  out << fmt::format("{}, {}:\n", plural(in.errors(), "error"), plural(in.warnings(), "warning"));
  for (std::size_t i = 0; i < problems.size() && i < kProblemsShown; ++i) {
    const tools::Problem& p = *problems[i];
    out << "  " << tools::severity_name(p.severity) << ": " << (p.file.empty() ? "" : p.file + ": ") << p.message
        << "\n";
  }
  if (problems.size() > kProblemsShown) {
    out << fmt::format("  ... and {} more (--json lists them all)\n", problems.size() - kProblemsShown);
  }
}

nlohmann::json volumes_json(const std::map<std::string, tools::Volume>& volumes) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : volumes) out[k] = {{"count", v.count}, {"bytes", v.bytes}};
  return out;
}

nlohmann::json problem_json(const tools::Problem& p) {
  nlohmann::json out = {{"severity", tools::severity_name(p.severity)}, {"file", p.file}, {"message", p.message}};
  out["node"] = p.node ? nlohmann::json(*p.node) : nlohmann::json(nullptr);
  return out;
}

nlohmann::json summary_json(const tools::TraceSummary& s) {
  nlohmann::json out = {{"file", s.file},
                        {"readable", s.readable},
                        {"version", s.version},
                        {"nodes", s.nodes},
                        {"nodes_by_type", s.nodes_by_type},
                        {"micros_by_type", s.micros_by_type},
                        {"compute_micros",
                         {{"total", s.compute_micros}, {"gpu", s.gpu_compute_micros}, {"cpu", s.cpu_compute_micros}}},
                        {"collectives", volumes_json(s.collectives)},
                        {"groups", volumes_json(s.groups)},
                        {"sends", {{"count", s.sends.count}, {"bytes", s.sends.bytes}}},
                        {"recvs", {{"count", s.recvs.count}, {"bytes", s.recvs.bytes}}}};
  out["rank"] = s.rank ? nlohmann::json(*s.rank) : nlohmann::json(nullptr);
  out["critical_path"] = s.critical_path_micros
                             ? nlohmann::json{{"micros", *s.critical_path_micros}, {"nodes", s.critical_path_nodes}}
                             : nlohmann::json(nullptr);
  nlohmann::json problems = nlohmann::json::array();
  for (const tools::Problem& p : s.problems) problems.push_back(problem_json(p));
  out["problems"] = std::move(problems);
  return out;
}

// {"input", "prefix", "ranks": [...], "totals", "problems" (across ranks), "errors", "warnings"};
// each rank lists its figures and its problems.
nlohmann::json to_json(const tools::Inspection& in) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const tools::TraceSummary& r : in.ranks) ranks.push_back(summary_json(r));
  nlohmann::json totals_json = summary_json(tools::totals(in));
  totals_json.erase("problems");
  totals_json.erase("rank");
  totals_json.erase("version");
  nlohmann::json problems = nlohmann::json::array();
  for (const tools::Problem& p : in.problems) problems.push_back(problem_json(p));
  return {{"input", in.input},        {"prefix", in.is_prefix},          {"ranks", std::move(ranks)},
          {"totals", totals_json},    {"problems", std::move(problems)}, {"errors", in.errors()},
          {"warnings", in.warnings()}};
}

}  // namespace

Command add_inspect(CLI::App& chakra) {
  struct InspectArgs {
    std::string path;
    std::string json;  // --json's FILE; "" or "-": standard output
  };
  auto args = std::make_shared<InspectArgs>();
  CLI::App* app = chakra.add_subcommand("inspect", "A readable summary of a Chakra ET (or every rank of a prefix) and "
                                                   "its problems");
  app->footer("Examples:\n"
              "  chakrasim chakra inspect traces/all_reduce.0.et\n"
              "  chakrasim chakra inspect traces/all_reduce        (every traces/all_reduce.<rank>.et)\n"
              "  chakrasim chakra inspect traces/all_reduce --json            (JSON on standard output)\n"
              "  chakrasim chakra inspect traces/all_reduce --json out.json   (JSON into a file, as run --json)\n"
              "Counts nodes by type, sums durations and communication volume by collective and group,\n"
              "measures the critical path, and lists every problem: missing parents, cycles, duplicate ids,\n"
              "attributes of the wrong type or missing, and, across ranks, collectives that differ and\n"
              "unmatched sends and receives. Exits 1 when there is an error (warnings alone exit 0).");
  app->add_option("path", args->path, "A .et file, or PREFIX for PREFIX.0.et, PREFIX.1.et, ...");
  app->add_option("--json", args->json,
                  "Write the inspection as JSON to FILE, as every command's --json does; without FILE (or with -) "
                  "to standard output")
      ->expected(0, 1);

  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    // `inspect --json PREFIX`: the option took the path; it meant JSON on standard output.
    if (args->path.empty() && !args->json.empty()) std::swap(args->path, args->json);
    if (args->path.empty()) fail("inspect: a .et file or a PREFIX is required");
    const bool json = app->count("--json") > 0;
    const bool to_file = json && !args->json.empty() && args->json != "-";
    if (to_file) prepare_output_file(args->json, "--json");
    const tools::Inspection in = tools::inspect(args->path);
    if (to_file) {
      write_file_atomically(args->json, to_json(in).dump(2) + "\n", "the --json file");
    } else if (json) {
      std::cout << to_json(in).dump(2) << "\n";
    } else {
      print_text(std::cout, in);
    }
    return in.errors() > 0 ? 1 : 0;
  };
}

}  // namespace chakrasim::cli
