#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/resources.h"
#include "report/html_parts.h"
#include "report/summary.h"

namespace chakrasim::report::html {
namespace {

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

void aggregate_table(std::string& out, const char* id, const char* key_name,
                     const std::vector<CollectiveAggregate>& list, bool exposed) {
  out += fmt::format("<table id=\"{}\">\n<tr><th>{}</th><th>count</th><th>bytes</th><th>time</th>{}<th>algbw "
                     "GB/s</th><th>busbw GB/s</th></tr>\n",
                     id, key_name, exposed ? "<th>exposed</th>" : "");
  for (const CollectiveAggregate& a : list) {
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}"
                       "<td class=\"num\">{:.1f}</td><td class=\"num\">{:.1f}</td></tr>\n",
                       escape(a.key), a.count, format_bytes(a.bytes), format_duration(a.time_ns),
                       exposed ? fmt::format("<td class=\"num\">{}</td>", format_duration(a.exposed_ns)) : "",
                       a.algbw_gb_per_s, a.busbw_gb_per_s);
  }
  out += "</table>\n";
}

// busbw (y) against nccl-tests' size (x, log scale), one dot per collective, a colour per type.
void busbw_plot(std::string& out, const std::vector<CollectiveRow>& rows) {
  std::vector<const CollectiveRow*> dots;
  for (const CollectiveRow& r : rows) {
    if (r.bytes > 0 && r.duration > 0) dots.push_back(&r);
  }
  if (dots.empty()) return;
  double min_b = 1e300, max_b = 0, max_bw = 0;
  for (const CollectiveRow* r : dots) {
    min_b = std::min(min_b, static_cast<double>(r->bytes));
    max_b = std::max(max_b, static_cast<double>(r->bytes));
    max_bw = std::max({max_bw, r->busbw_gb_per_s, r->links_gb_per_s});
  }
  const double lo = std::floor(std::log2(min_b)), hi = std::max(lo + 1, std::ceil(std::log2(max_b)));
  const int width = 700, height = 300, left = 60, bottom = 40;
  const double plot_w = width - left - 20, plot_h = height - bottom - 20;
  static const char* const kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"};
  std::vector<std::string> kinds;
  out += fmt::format("<svg id=\"busbw-plot\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"bus bandwidth "
                     "against size\">\n",
                     width + 160, height);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#999\"/><line x1=\"{0}\" y1=\"20\" "
                     "x2=\"{0}\" y2=\"{1}\" stroke=\"#999\"/>\n",
                     left, height - bottom, width - 20);
  for (double e = lo; e <= hi; ++e) {
    const double x = left + (e - lo) / (hi - lo) * plot_w;
    out += fmt::format("<text x=\"{:.0f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, height - bottom + 15,
                       format_bytes(static_cast<std::uint64_t>(std::exp2(e))));
  }
  for (int i = 0; i <= 4; ++i) {
    const double y = height - bottom - i * plot_h / 4;
    out +=
        fmt::format("<text x=\"{}\" y=\"{:.0f}\" text-anchor=\"end\">{:.0f}</text>\n", left - 5, y + 4, max_bw * i / 4);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">size (nccl-tests' convention)</text>\n",
                     left + plot_w / 2, height - 5);
  out += fmt::format("<text x=\"12\" y=\"{}\" transform=\"rotate(-90 12 {})\" text-anchor=\"middle\">busbw "
                     "GB/s</text>\n",
                     20 + plot_h / 2, 20 + plot_h / 2);
  for (const CollectiveRow* r : dots) {
    auto it = std::find(kinds.begin(), kinds.end(), r->kind);
    if (it == kinds.end()) it = kinds.insert(kinds.end(), r->kind);
    const auto colour = kColours[static_cast<std::size_t>(it - kinds.begin()) % std::size(kColours)];
    const double x = left + (std::log2(static_cast<double>(r->bytes)) - lo) / (hi - lo) * plot_w;
    const double y = height - bottom - r->busbw_gb_per_s / std::max(max_bw, 1e-9) * plot_h;
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" fill-opacity=\"0.6\"><title>{} {}: "
                       "{:.1f} GB/s</title></circle>\n",
                       x, y, colour, escape(r->kind), format_bytes(r->bytes), r->busbw_gb_per_s);
  }
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    out +=
        fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", width + 5,
                    30 + k * 18, kColours[k % std::size(kColours)], width + 15, 34 + k * 18, escape(kinds[k]));
  }
  out += "</svg>\n";
}

}  // namespace

void section_npu_classes(std::string& out, const sim::Inputs& inputs, const sim::Result& result,
                         std::size_t max_classes) {
  out += "<h2 id=\"npus\">Where the time went</h2>\n";
  const std::vector<NpuClass> classes = npu_classes(inputs, result, max_classes);
  const Tick finish = std::max<Tick>(1, result.max_finish_ns());
  const int width = 1000, label = 230, bar = 18, gap = 5;
  const int height = static_cast<int>(classes.size()) * (bar + gap) + 30;
  out += fmt::format("<svg id=\"npu-bars\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"time breakdown per "
                     "class of NPUs\">\n",
                     width, height);
  const double scale = static_cast<double>(width - label - 10) / static_cast<double>(finish);
  int y = 0;
  for (const NpuClass& c : classes) {
    std::string name = c.label.size() > 30 ? c.label.substr(0, 27) + "..." : c.label;
    out +=
        fmt::format("<text x=\"0\" y=\"{}\">{}<title>{}</title></text>\n", y + bar - 5, escape(name), escape(c.label));
    double x = label;
    const sim::TimeSplit& b = c.split;
    const std::pair<const char*, Tick> parts[] = {{"compute", b.compute_ns},
                                                  {"comm", b.collective_ns},
                                                  {"p2p", b.p2p_wait_ns},
                                                  {"memory", b.memory_ns},
                                                  {"idle", b.idle_ns}};
    for (const auto& [cls, t] : parts) {
      const double w = static_cast<double>(t) * scale;
      if (w > 0) {
        out += fmt::format("<rect class=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"><title>{}: {} "
                           "{}</title></rect>\n",
                           cls, x, y, w, bar, escape(c.label), cls, format_duration(t));
      }
      x += w;
    }
    y += bar + gap;
  }
  int lx = label;
  for (const auto& [cls, text] :
       {std::pair{"compute", "compute"}, std::pair{"comm", "exposed collectives"},
        std::pair{"p2p", "p2p waits, bubbles"}, std::pair{"memory", "exposed memory"}, std::pair{"idle", "idle"}}) {
    out += fmt::format("<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\"/><text x=\"{}\" "
                       "y=\"{}\">{}</text>\n",
                       cls, lx, y + 6, lx + 16, y + 16, text);
    lx += 150;
  }
  out += "</svg>\n";
  out += fmt::format("<p class=\"note\">One bar per class of NPUs with the same time split ({} classes of {} NPUs; a "
                     "pipeline stage, typically), each its members' mean; hover for the figures.</p>\n",
                     classes.size(), result.npus.size());
  // The split by group kind, per class, as a table.
  // Only the group kinds some class spent time on.
  std::vector<std::size_t> kinds;
  for (std::size_t k = 0; k < result.group_kinds.size(); ++k) {
    for (const NpuClass& c : classes) {
      if (k < c.split.by_group_kind_ns.size() && c.split.by_group_kind_ns[k] > 0) {
        kinds.push_back(k);
        break;
      }
    }
  }
  out += "<table id=\"npu-class-table\">\n<tr><th>NPUs</th><th>compute</th><th>exposed collectives</th>";
  for (const std::size_t k : kinds) out += fmt::format("<th>{}</th>", escape(result.group_kinds[k]));
  out += "<th>p2p waits, bubbles</th><th>idle</th></tr>\n";
  for (const NpuClass& c : classes) {
    const Tick total = std::max<Tick>(1, c.split.compute_ns + c.split.collective_ns + c.split.p2p_wait_ns +
                                             c.split.memory_ns + c.split.idle_ns);
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>", escape(c.label),
                       percent(static_cast<double>(c.split.compute_ns) / static_cast<double>(total)),
                       percent(static_cast<double>(c.split.collective_ns) / static_cast<double>(total)));
    for (const std::size_t k : kinds) {
      const Tick t = k < c.split.by_group_kind_ns.size() ? c.split.by_group_kind_ns[k] : 0;
      out += fmt::format("<td class=\"num\">{}</td>", format_duration(t));
    }
    out += fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                       percent(static_cast<double>(c.split.p2p_wait_ns) / static_cast<double>(total)),
                       percent(static_cast<double>(c.split.idle_ns) / static_cast<double>(total)));
  }
  out += "</table>\n";
}

void section_collective_summary(std::string& out, const sim::Inputs& inputs, const sim::Result& result,
                                const std::vector<CollectiveRow>& rows) {
  if (rows.empty()) return;
  out += "<h2 id=\"collective-summary\">Collectives summed up (NPU 0)</h2>\n";
  out += "<h3>Per group kind</h3>\n";
  aggregate_table(out, "group-kind-table", "group kind", aggregate_by_group_kind(inputs, result, rows), true);
  out += "<h3>Per collective type</h3>\n";
  aggregate_table(out, "collective-type-table", "collective", aggregate_by_type(rows), true);
  out += "<p class=\"note\">time: the collectives' running time summed; exposed: of it, the time no compute ran on "
         "NPU 0 (per group kind the time split's figure, which counts overlapping collectives once; per type each "
         "collective's own, summed); algbw = bytes / time; busbw: each "
         "collective's, weighted by its time. GB/s = 10<sup>9</sup> B/s.</p>\n";
  out += "<h3>Bus bandwidth against size</h3>\n";
  busbw_plot(out, rows);
}

void section_link_summary(std::string& out, const sim::Result& result, const LinkLog& links) {
  const std::vector<DimensionLinks> dims = links_per_dimension(result, links, 3);
  out += "<table id=\"link-dimension-table\">\n<tr><th>dimension</th><th>links</th><th>mean busy</th><th>busiest</th>"
         "<th>the busiest links</th></tr>\n";
  for (const DimensionLinks& d : dims) {
    std::string hottest;
    for (const auto& [name, busy] : d.hottest) {
      hottest += fmt::format("{}{} ({})", hottest.empty() ? "" : "; ", escape(name), percent(busy));
    }
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "<td>{}</td></tr>\n",
                       d.dim, d.links, percent(d.mean_busy), percent(d.max_busy), hottest);
  }
  out += "</table>\n";
}

void section_path_summary(std::string& out, const chakra::Graph& graph, const std::vector<NodeSpan>& path) {
  const std::vector<PathKind> kinds = critical_path_by_kind(graph, path);
  Tick total = 0;
  for (const PathKind& k : kinds) total += k.ns;
  out += "<table id=\"critical-path-summary\">\n<tr><th>on the path</th><th>nodes</th><th>time</th><th>share</th>"
         "</tr>\n";
  for (const PathKind& k : kinds) {
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                       "</tr>\n",
                       k.kind, k.nodes, format_duration(k.ns),
                       percent(static_cast<double>(k.ns) / static_cast<double>(std::max<Tick>(1, total))));
  }
  out += "</table>\n";
}

}  // namespace chakrasim::report::html
