// The report's section on how compute used the chip, for compute models with per-node figures
// (the systolic array): one row per operation shape on the NPU that finishes last, and a bar of
// compute utilisation per row.
#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "compute/compute_model.h"
#include "report/html_parts.h"
#include "report/summary.h"

namespace chakrasim::report::html {
namespace {

constexpr std::size_t kMaxLayerRows = 60;
constexpr std::size_t kMaxPlotRows = 30;

// The nodes of one shape (or, for shape "", those the model left to its fallback).
struct LayerRow {
  std::string shape;
  std::string example;  // the first node's name
  std::uint64_t nodes = 0;
  Tick time_ns = 0;
  compute::NodeFigures figures;  // of one node
};

std::string bytes_text(std::uint64_t bytes) {
  if (bytes >= 1'000'000'000) return fmt::format("{:.2f} GB", static_cast<double>(bytes) / 1e9);
  if (bytes >= 1'000'000) return fmt::format("{:.2f} MB", static_cast<double>(bytes) / 1e6);
  if (bytes >= 1'000) return fmt::format("{:.1f} kB", static_cast<double>(bytes) / 1e3);
  return fmt::format("{} B", bytes);
}

}  // namespace

void section_compute_layers(std::string& out, const sim::Inputs& inputs, const sim::Result& result,
                            const NodeLog& log) {
  const std::unique_ptr<compute::ComputeModel> model = compute::make_figures_model(inputs.compute, inputs.replay_only);
  if (model == nullptr) return;
  NpuId last = 0;
  for (NpuId n = 0; n < result.npus.size(); ++n) {
    if (log.recorded(n) && result.npus[n].finish_ns > result.npus[last].finish_ns) last = n;
  }
  const chakra::Graph& g = *inputs.graphs[last];
  std::map<std::string, LayerRow> by_shape;
  Tick total_ns = 0;
  for (const NodeSpan& s : log.spans(last)) {
    if (s.end == kNeverTick || g.type(s.node) != chakra::NodeType::kComp || g.is_cpu_op(s.node)) continue;
    const std::optional<compute::NodeFigures> f = model->figures(g, s.node);
    LayerRow& row = by_shape[f ? f->shape : ""];
    if (row.nodes++ == 0) {
      row.example = g.name(s.node);
      if (f) row.figures = *f, row.shape = f->shape;
    }
    row.time_ns += s.end - s.start;
    total_ns += s.end - s.start;
  }
  std::vector<const LayerRow*> rows;
  for (const auto& [shape, row] : by_shape) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(), [](const LayerRow* a, const LayerRow* b) {
    return a->time_ns != b->time_ns ? a->time_ns > b->time_ns : a->shape < b->shape;
  });
  out +=
      fmt::format("<h2 id=\"compute-layers\">Compute by layer (NPU {}, {} model)</h2>\n", last, inputs.compute.model);
  out += "<table id=\"compute-layer-table\">\n<tr><th>shape</th><th>first node</th><th>nodes</th><th>time</th><th>share"
         "</th><th>cycles each</th><th>stall cycles</th><th>compute util</th><th>mapping eff.</th><th>SRAM read / "
         "write</th><th>DRAM read / write</th></tr>\n";
  for (std::size_t i = 0; i < rows.size() && i < kMaxLayerRows; ++i) {
    const LayerRow& r = *rows[i];
    const double share = total_ns > 0 ? 100.0 * static_cast<double>(r.time_ns) / static_cast<double>(total_ns) : 0;
    if (r.shape.empty()) {
      out += fmt::format("<tr><td>no shape (the {} model's fallback)</td><td>{}</td><td class=\"num\">{}</td><td "
                         "class=\"num\">{}</td>"
                         "<td class=\"num\">{:.1f}%</td><td colspan=\"6\"></td></tr>\n",
                         inputs.compute.model, escape(r.example), r.nodes, format_duration(r.time_ns), share);
      continue;
    }
    const compute::NodeFigures& f = r.figures;
    out += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
                       "class=\"num\">{:.1f}%</td>"
                       "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td><td "
                       "class=\"num\">{:.1f}%</td>"
                       "<td class=\"num\">{} / {}</td><td class=\"num\">{} / {}</td></tr>\n",
                       escape(r.shape), escape(r.example), r.nodes, format_duration(r.time_ns), share, f.cycles,
                       f.stall_cycles, 100 * f.compute_util, 100 * f.mapping_efficiency, bytes_text(f.sram_read_bytes),
                       bytes_text(f.sram_write_bytes), bytes_text(f.dram_read_bytes), bytes_text(f.dram_write_bytes));
  }
  out += "</table>\n";
  if (rows.size() > kMaxLayerRows) {
    out +=
        fmt::format("<p class=\"note\">The {} of {} shapes that take the most time.</p>\n", kMaxLayerRows, rows.size());
  }
  // Utilisation per shape, in the table's order.
  std::vector<const LayerRow*> plotted;
  for (const LayerRow* r : rows) {
    if (!r->shape.empty() && plotted.size() < kMaxPlotRows) plotted.push_back(r);
  }
  if (plotted.empty()) return;
  constexpr int kLabel = 330, kBar = 520, kRow = 18;
  const int height = static_cast<int>(plotted.size()) * kRow + 24;
  out += fmt::format("<svg id=\"compute-util-plot\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"compute "
                     "utilisation per layer shape\">\n",
                     kLabel + kBar + 60, height);
  for (std::size_t i = 0; i < plotted.size(); ++i) {
    const LayerRow& r = *plotted[i];
    const int y = static_cast<int>(i) * kRow;
    const double util = std::clamp(r.figures.compute_util, 0.0, 1.0);
    out += fmt::format("<text x=\"0\" y=\"{}\">{}</text><rect class=\"compute\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" "
                       "height=\"{}\"><title>{}: {:.1f}% compute utilisation</title></rect><text x=\"{:.1f}\" "
                       "y=\"{}\">{:.1f}%</text>\n",
                       y + 13, escape(r.shape), kLabel, y + 3, util * kBar, kRow - 4, escape(r.shape), 100 * util,
                       kLabel + util * kBar + 4, y + 13, 100 * util);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\">0%</text><text x=\"{}\" y=\"{}\">100%</text>\n</svg>\n", kLabel,
                     height - 4, kLabel + kBar - 30, height - 4);
  out += "<p class=\"note\">Compute utilisation: MACs over cycles x MAC units of the chip, stalls included; mapping "
         "efficiency: the share of the array a fold maps, averaged over folds.</p>\n";
}

}  // namespace chakrasim::report::html
