#include "report/html_report.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/resources.h"
#include "report/html_parts.h"
#include "report/summary.h"

namespace chakrasim::report {

namespace html {

std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace html

namespace {

using html::escape;

constexpr std::uint32_t kMaxNpuBars = 64;
constexpr std::size_t kMaxRows = 200;
constexpr std::uint32_t kMaxLinks = 24;
constexpr std::uint32_t kBins = 60;

const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; } td, th { padding: 2px 10px; text-align: left; }
th { background: #f2f2f2; } tr:nth-child(even) td { background: #fafafa; } td.num { text-align: right; }
.note { color: #666; font-size: 0.85em; } .warning { color: #a00; } tr.impossible td { color: #a00; } svg text { font-size: 11px; fill: #333; }
.compute { fill: #4e79a7; } .comm { fill: #f28e2b; } .p2p { fill: #e15759; } .memory { fill: #59a14f; } .idle { fill: #d9d9d9; }
)";

void section_inputs(std::string& html, const sim::Inputs& inputs, const sim::Result& result, const ReportSources& src) {
  html += "<h2 id=\"inputs\">Inputs and totals</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    html += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape(k), escape(v));
  };
  row("workload", src.workload);
  row("system", src.system);
  row("network", src.network);
  std::string dims;
  for (const network::DimensionSpec& d : inputs.network.dims) {
    dims += fmt::format("{}{} {} × {} GiB/s ({:.1f} GB/s), {} ns", dims.empty() ? "" : "; ",
                        network::dimension_kind_name(d.kind), d.npus, d.bandwidth_gib_per_s,
                        network::bytes_per_ns(d.bandwidth_gib_per_s), d.latency_ns);
  }
  row("network dimensions", dims);
  row("backend", inputs.backend);
  row("NPUs", std::to_string(result.npus.size()));
  row("splits / active chunks",
      fmt::format("{} / {}", inputs.system.preferred_dataset_splits, inputs.system.active_chunks_per_dimension));
  const Tick finish = result.max_finish_ns();
  row("run time", format_duration(finish));
  std::size_t finished = 0;
  for (const sim::NpuResult& n : result.npus) finished += n.finished;
  row("NPUs finished", fmt::format("{} of {}", finished, result.npus.size()));
  row("events simulated", fmt::format("{}{}", result.events,
                                      result.symmetric ? " (NPU 0 alone: every NPU runs the same timeline)"
                                      : result.classes_simulated > 0 ? fmt::format(" (one NPU of each of {} classes "
                                                                                   "that run the same "
                                                                                   "timelines)",
                                                                                   result.classes_simulated)
                                                                     : std::string()));
  html += "</table>\n";
}

void section_collectives(std::string& html, const sim::Inputs& inputs, const sim::Result& result, const NodeLog& log) {
  const std::vector<CollectiveRow> rows = collective_rows(inputs, log, 0);
  html::section_collective_summary(html, inputs, result, rows);
  html += "<h2 id=\"collectives\">Collectives (NPU 0), one by one</h2>\n";
  if (rows.empty()) {
    html += "<p>No collective ran on NPU 0.</p>\n";
    return;
  }
  const auto impossible =
      std::count_if(rows.begin(), rows.end(), [](const CollectiveRow& r) { return r.exceeds_links(); });
  if (impossible > 0) {
    std::string why = bandwidth_explanation(inputs.backend);
    why[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(why[0])));
    html += fmt::format("<p class=\"warning\" id=\"impossible-collectives\">⚠ {} of {} collectives show a bus "
                        "bandwidth above what NPU 0's links in the dimensions they used can carry (marked ⚠ below). "
                        "{}.</p>\n",
                        impossible, rows.size(), escape(why));
  }
  html += "<table "
          "id=\"collective-table\">\n<tr><th>node</th><th>collective</th><th>size</th><th>group</th><th>NPUs</th>"
          "<th>algorithm</th><th>start</th><th>duration</th><th>algbw GB/s</th><th>busbw GB/s</th><th>links "
          "GB/s</th></tr>\n";
  for (std::size_t i = 0; i < rows.size() && i < kMaxRows; ++i) {
    const CollectiveRow& r = rows[i];
    html += fmt::format("<tr{}><td>{} {}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td "
                        "class=\"num\">{}</td><td>{}</td>"
                        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2f}</td><td "
                        "class=\"num\">{}{:.2f}</td><td class=\"num\">{:.1f}</td></tr>\n",
                        r.exceeds_links() ? " class=\"impossible\"" : "", r.node_id, escape(r.name), r.kind,
                        format_bytes(r.bytes), r.group.empty() ? "all" : escape(r.group), r.npus, escape(r.algorithm),
                        format_duration(r.start), format_duration(r.duration), r.algbw_gb_per_s,
                        r.exceeds_links() ? "⚠ " : "", r.busbw_gb_per_s, r.links_gb_per_s);
  }
  html += "</table>\n";
  if (rows.size() > kMaxRows)
    html += fmt::format("<p class=\"note\">The first {} of {} collectives.</p>\n", kMaxRows, rows.size());
  html += "<p class=\"note\">As nccl-tests reports them: size is the all-reduce's buffer, the all-gather's output "
          "(n × each NPU's shard), the reduce-scatter's input and the all-to-all's send buffer; algbw = size / "
          "duration; busbw = algbw × 2(n−1)/n for all-reduce, × (n−1)/n for all-gather, reduce-scatter and "
          "all-to-all. links: what NPU 0 can send at once over its links in the dimensions the collective "
          "used (2 per ring, n−1 fully connected, 1 up to a switch). GB/s = 10<sup>9</sup> B/s.</p>\n";
}

void section_links(std::string& html, const sim::Result& result, const LinkLog* links) {
  if (links == nullptr || result.link_names.empty()) return;
  html += "<h2 id=\"links\">Link utilisation</h2>\n";
  html::section_link_summary(html, result, *links);
  html += "<h3>Over time</h3>\n";
  std::vector<std::uint32_t> order(result.link_names.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return links->busy_total(a) > links->busy_total(b); });
  if (order.size() > kMaxLinks) order.resize(kMaxLinks);
  const Tick horizon = std::max<Tick>(1, result.max_finish_ns());
  const int label = 330, cell = 9, row = 14;
  html += fmt::format("<svg id=\"link-heatmap\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"link "
                      "utilisation\">\n",
                      label + static_cast<int>(kBins) * cell + 60, static_cast<int>(order.size()) * row + 20);
  int y = 0;
  for (const std::uint32_t l : order) {
    const std::vector<Tick> busy = links->busy_per_bin(l, horizon, kBins);
    const double average = static_cast<double>(links->busy_total(l)) / static_cast<double>(horizon);
    html += fmt::format("<text x=\"0\" y=\"{}\">{}</text>\n", y + 10, escape(result.link_names[l]));
    for (std::uint32_t b = 0; b < kBins; ++b) {
      const double width = static_cast<double>(horizon) / kBins;
      const double u = std::min(1.0, static_cast<double>(busy[b]) / width);
      html += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#e15759\" "
                          "fill-opacity=\"{:.2f}\"/>",
                          label + static_cast<int>(b) * cell, y, cell - 1, row - 2, u);
    }
    html += fmt::format("\n<text x=\"{}\" y=\"{}\">{:.0f}%</text>\n", label + static_cast<int>(kBins) * cell + 6,
                        y + 10, average * 100);
    y += row;
  }
  html += fmt::format("<text x=\"{}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\">{}</text>\n</svg>\n", label, y + 14,
                      label + static_cast<int>(kBins) * cell - 60, y + 14, format_duration(horizon));
  html += fmt::format("<p class=\"note\">The {} busiest of {} links; each cell is 1/{} of the run, darker is busier; "
                      "the last column is the average over the run.</p>\n",
                      order.size(), result.link_names.size(), kBins);
}

void section_critical_path(std::string& html, const sim::Inputs& inputs, const sim::Result& result,
                           const NodeLog& log) {
  NpuId last = 0;
  for (NpuId n = 0; n < result.npus.size(); ++n) {
    if (log.recorded(n) && result.npus[n].finish_ns > result.npus[last].finish_ns) last = n;
  }
  const chakra::Graph& g = *inputs.graphs[last];
  const std::vector<NodeSpan> path = critical_path(g, log.spans(last));
  html += fmt::format("<h2 id=\"critical-path\">Critical path (NPU {}, which finishes last)</h2>\n", last);
  html::section_path_summary(html, g, path);
  html += "<table id=\"critical-path-table\">\n<tr><th>node</th><th>type</th><th>start</th><th>duration</th><th>waited "
          "before</th></tr>\n";
  Tick previous_end = 0;
  for (std::size_t i = 0; i < path.size() && i < kMaxRows; ++i) {
    const NodeSpan& s = path[i];
    html += fmt::format("<tr><td>{} {}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                        "class=\"num\">{}</td></tr>\n",
                        g.id(s.node), escape(g.name(s.node)), chakra::node_type_name(g.raw_type(s.node)),
                        format_duration(s.start), format_duration(s.end - s.start),
                        format_duration(s.start > previous_end ? s.start - previous_end : 0));
    previous_end = s.end;
  }
  html += "</table>\n";
  if (path.size() > kMaxRows)
    html += fmt::format("<p class=\"note\">The first {} of {} nodes.</p>\n", kMaxRows, path.size());
}

}  // namespace

std::string html_report(const sim::Inputs& inputs, const sim::Result& result, const NodeLog& log, const LinkLog* links,
                        const ReportSources& sources, const FlowLog* flows) {
  std::string html = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>chakrasim run "
                     "report</title>\n<style>";
  html += kStyle;
  html += "</style></head>\n<body>\n<h1>chakrasim run report</h1>\n";
  section_inputs(html, inputs, result, sources);
  html::section_npu_classes(html, inputs, result, kMaxNpuBars);
  html::section_compute_layers(html, inputs, result, log);
  section_collectives(html, inputs, result, log);
  section_links(html, result, links);
  if (flows != nullptr) section_flows(html, *flows);
  section_critical_path(html, inputs, result, log);
  // Marks a page that loaded and parsed to the end; the headless-browser test reads it.
  html += "<script>document.documentElement.dataset.charts = document.querySelectorAll('svg').length;</script>\n";
  html += "</body></html>\n";
  return html;
}

std::string write_html_report(const std::string& dir, const sim::Inputs& inputs, const sim::Result& result,
                              const NodeLog& log, const LinkLog* links, const ReportSources& sources,
                              const FlowLog* flows) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("{}: cannot create the report directory: {}", dir, ec.message());
  const std::string path = (std::filesystem::path(dir) / "index.html").string();
  write_file_atomically(path, html_report(inputs, result, log, links, sources, flows), "the report");
  return path;
}

}  // namespace chakrasim::report
