// `chakrasim chakra inspect`: a readable summary of one .et file or every rank of a prefix,
// with every problem found; exits 1 when there are errors.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/chakra_tools.h"
#include "tools/inspect/inspector.h"

namespace chakrasim::cli {

namespace {

constexpr std::size_t kProblemsShown = 100;

template <typename Map, typename Show>
std::string joined(const Map& map, Show&& show) {
  if (map.empty()) return "none";
  std::string out;
  for (const auto& [key, value] : map) out += (out.empty() ? "" : ", ") + show(key, value);
  return out;
}

std::string plural(std::uint64_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

void print_figures(std::ostream& out, const tools::TraceSummary& s, const char* path_label) {
  auto count = [](const std::string& k, std::uint64_t v) { return fmt::format("{} {}", k, v); };
  auto micros = [](const std::string& k, std::uint64_t v) { return fmt::format("{} {} µs", k, v); };
  auto volume = [](const std::string& k, const tools::Volume& v) {
    return fmt::format("{} {} x {} B", k, v.count, v.bytes);
  };
  auto group = [](const std::string& k, const tools::Volume& v) {
    return fmt::format("{} {} x {} B", k.empty() ? "all NPUs" : "\"" + k + "\"", v.count, v.bytes);
  };
  out << "  nodes           " << joined(s.nodes_by_type, count) << "\n";
  out << "  time by type    " << joined(s.micros_by_type, micros) << "\n";
  out << fmt::format("  compute         {} µs (GPU {} µs, CPU {} µs)\n", s.compute_micros, s.gpu_compute_micros,
                     s.cpu_compute_micros);
  out << "  collectives     " << joined(s.collectives, volume) << "\n";
  out << "  by group        " << joined(s.groups, group) << "\n";
  out << fmt::format("  point-to-point  sends {} x {} B, receives {} x {} B\n", s.sends.count, s.sends.bytes,
                     s.recvs.count, s.recvs.bytes);
  if (s.critical_path_micros) {
    out << fmt::format("  {}{} µs over {}\n", path_label, *s.critical_path_micros,
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
    out << "  ranks        nodes  compute µs  collective B     sent B  critical path µs  problems\n";
    auto row = [](const tools::TraceSummary& r) {
      std::uint64_t coll_bytes = 0;
      for (const auto& [k, v] : r.collectives) coll_bytes += v.bytes;
      const std::string path = r.critical_path_micros ? std::to_string(*r.critical_path_micros) : "-";
      return fmt::format("{:>9} {:>11} {:>13} {:>10} {:>17} {:>9}", r.nodes, r.compute_micros, coll_bytes,
                         r.sends.bytes, path, r.problems.size());
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
    bool json = false;
  };
  auto args = std::make_shared<InspectArgs>();
  CLI::App* app = chakra.add_subcommand("inspect", "A readable summary of a Chakra ET (or every rank of a prefix) and "
                                                   "its problems");
  app->footer("Examples:\n"
              "  chakrasim chakra inspect traces/all_reduce.0.et\n"
              "  chakrasim chakra inspect traces/all_reduce        (every traces/all_reduce.<rank>.et)\n"
              "  chakrasim chakra inspect traces/all_reduce --json\n"
              "Counts nodes by type, sums durations and communication volume by collective and group,\n"
              "measures the critical path, and lists every problem: missing parents, cycles, duplicate ids,\n"
              "attributes of the wrong type or missing, and, across ranks, collectives that differ and\n"
              "unmatched sends and receives. Exits 1 when there is an error (warnings alone exit 0).");
  app->add_option("path", args->path, "A .et file, or PREFIX for PREFIX.0.et, PREFIX.1.et, ...")->required();
  app->add_flag("--json", args->json, "Machine-readable output");

  return [app, args]() -> int {
    if (!app->parsed()) return -1;
    const tools::Inspection in = tools::inspect(args->path);
    if (args->json) {
      std::cout << to_json(in).dump(2) << "\n";
    } else {
      print_text(std::cout, in);
    }
    return in.errors() > 0 ? 1 : 0;
  };
}

}  // namespace chakrasim::cli
