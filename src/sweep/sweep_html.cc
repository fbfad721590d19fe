#include "sweep/sweep_html.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>

namespace chakrasim::sweep {
namespace {

std::string escaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::optional<double> numeric(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

constexpr double kWidth = 520, kHeight = 300, kLeft = 70, kBottom = 50, kTop = 20, kRight = 20;

// An SVG scatter of (x, y); categorical x (labels) when `labels` is not empty.
std::string scatter(const std::string& title, const std::string& x_name, const std::string& y_name,
                    const std::vector<double>& x, const std::vector<double>& y, const std::vector<std::string>& labels,
                    const std::vector<std::size_t>& line) {
  std::string svg = fmt::format("<figure><figcaption>{}</figcaption><svg viewBox=\"0 0 {} {}\" width=\"{}\" "
                                "height=\"{}\" role=\"img\">",
                                escaped(title), kWidth, kHeight, kWidth, kHeight);
  if (x.empty()) return svg + "</svg></figure>";
  const auto [xmin_it, xmax_it] = std::minmax_element(x.begin(), x.end());
  const auto [ymin_it, ymax_it] = std::minmax_element(y.begin(), y.end());
  const double xmin = *xmin_it, xmax = *xmax_it == *xmin_it ? *xmin_it + 1 : *xmax_it;
  const double ymin = std::min(0.0, *ymin_it), ymax = *ymax_it == ymin ? ymin + 1 : *ymax_it * 1.05;
  auto px = [&](double v) { return kLeft + (v - xmin) / (xmax - xmin) * (kWidth - kLeft - kRight); };
  auto py = [&](double v) { return kHeight - kBottom - (v - ymin) / (ymax - ymin) * (kHeight - kBottom - kTop); };
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"axis\"/><line x1=\"{0}\" y1=\"{3}\" "
                     "x2=\"{0}\" y2=\"{1}\" class=\"axis\"/>",
                     kLeft, kHeight - kBottom, kWidth - kRight, kTop);
  for (int t = 0; t <= 4; ++t) {
    const double v = ymin + (ymax - ymin) * t / 4;
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{:.4g}</text>", kLeft - 6,
                       py(v) + 4, v);
  }
  if (!labels.empty()) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                         px(static_cast<double>(i)), kHeight - kBottom + 16, escaped(labels[i]));
    }
  } else {
    for (int t = 0; t <= 4; ++t) {
      const double v = xmin + (xmax - xmin) * t / 4;
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{:.4g}</text>", px(v),
                         kHeight - kBottom + 16, v);
    }
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\" text-anchor=\"middle\">{}</text>",
                     (kLeft + kWidth - kRight) / 2, kHeight - 12, escaped(x_name));
  svg += fmt::format("<text x=\"14\" y=\"{}\" class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">"
                     "{}</text>",
                     (kTop + kHeight - kBottom) / 2, (kTop + kHeight - kBottom) / 2, escaped(y_name));
  if (line.size() > 1) {
    std::string points;
    for (const std::size_t i : line) points += fmt::format("{:.1f},{:.1f} ", px(x[i]), py(y[i]));
    svg += "<polyline class=\"front\" points=\"" + points + "\"/>";
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    const bool on_line = std::find(line.begin(), line.end(), i) != line.end();
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" class=\"{}\"><title>{:.6g}, "
                       "{:.6g}</title></circle>",
                       px(x[i]), py(y[i]), on_line ? 4 : 3, on_line ? "best" : "dot", x[i], y[i]);
  }
  return svg + "</svg></figure>";
}

}  // namespace

std::vector<std::size_t> pareto_front(const std::vector<double>& cost, const std::vector<double>& time) {
  std::vector<std::size_t> order(cost.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return cost[a] != cost[b] ? cost[a] < cost[b] : time[a] < time[b]; });
  std::vector<std::size_t> front;
  double best = INFINITY;
  for (const std::size_t i : order) {
    if (time[i] < best) {
      front.push_back(i);
      best = time[i];
    }
  }
  return front;
}

std::string html_page(const SweepSpec& spec, const Table& table) {
  const std::vector<std::string> axes = columns(spec);
  const std::size_t status_col = 1 + axes.size();
  std::size_t time_col = 0;
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    if (table.header[c] == "iteration_ns") time_col = c;
  }
  std::vector<const Row*> ok;
  for (const auto& [point, row] : table.rows) {
    if (row.cells[status_col] == "ok" && numeric(row.cells[time_col])) ok.push_back(&row);
  }
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>chakrasim sweep: " +
                     escaped(spec.source) +
                     "</title><style>\n"
                     "body{font-family:sans-serif;margin:2em;color:#222}figure{display:inline-block;margin:0 1em 1em "
                     "0}figcaption{font-weight:bold}svg{background:#fafafa}.axis{stroke:#444}.tick{font-size:11px;fill:"
                     "#444}.label{font-size:12px}.dot{fill:#4a7bd0;opacity:.6}.best{fill:#d0452a}.front{fill:none;"
                     "stroke:#d0452a;stroke-width:1.5}table{border-collapse:collapse;font-size:12px}th,td{border:1px "
                     "solid #ccc;padding:2px 6px;text-align:right}th{cursor:pointer;background:#eee}"
                     "\n</style></head><body>\n";
  page += fmt::format("<h1>Sweep {}</h1><p>{} points in the table, {} ran to completion. Times are iteration times in "
                      "ms (the slowest NPU's finish).</p>\n",
                      escaped(spec.source), table.rows.size(), ok.size());
  // The iteration time against each axis; the fastest point per value joined.
  page += "<h2>Iteration time against each axis</h2>\n";
  for (std::size_t a = 0; a < axes.size(); ++a) {
    std::vector<double> x, y;
    std::vector<std::string> labels;
    bool all_numeric = true;
    for (const Row* r : ok) all_numeric &= numeric(r->cells[1 + a]).has_value();
    std::map<std::string, std::size_t> category;
    for (const Row* r : ok) {
      const std::string& v = r->cells[1 + a];
      double xv = 0;
      if (all_numeric) {
        xv = *numeric(v);
      } else {
        const auto [it, fresh] = category.emplace(v, labels.size());
        if (fresh) labels.push_back(v);
        xv = static_cast<double>(it->second);
      }
      x.push_back(xv);
      y.push_back(*numeric(r->cells[time_col]) / 1e6);
    }
    std::map<double, std::size_t> best;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto it = best.find(x[i]);
      if (it == best.end() || y[i] < y[it->second]) best[x[i]] = i;
    }
    std::vector<std::size_t> line;
    for (const auto& [xv, i] : best) line.push_back(i);
    page += scatter(axes[a], axes[a], "iteration time (ms)", x, y, labels, line);
  }
  if (!spec.cost.empty()) {
    const auto it = std::find(axes.begin(), axes.end(), spec.cost);
    std::vector<double> cost, time;
    std::vector<const Row*> rows;
    for (const Row* r : ok) {
      const auto c = numeric(r->cells[1 + static_cast<std::size_t>(it - axes.begin())]);
      if (!c) continue;
      cost.push_back(*c);
      time.push_back(*numeric(r->cells[time_col]) / 1e6);
      rows.push_back(r);
    }
    const std::vector<std::size_t> front = pareto_front(cost, time);
    page += "<h2>Pareto front: iteration time against " + escaped(spec.cost) + "</h2>\n";
    page += scatter("time vs " + spec.cost, spec.cost, "iteration time (ms)", cost, time, {}, front);
    page += "<p>On the front (no point both cheaper and faster): points";
    for (const std::size_t i : front) page += " " + rows[i]->cells[0];
    page += ".</p>\n";
  }
  page += "<h2>Table</h2><p>Click a column to sort by it.</p>\n<table id=\"results\"><thead><tr>";
  for (const std::string& h : table.header) page += "<th>" + escaped(h) + "</th>";
  page += "</tr></thead><tbody>\n";
  for (const auto& [point, row] : table.rows) {
    page += "<tr>";
    for (const std::string& c : row.cells) page += "<td>" + escaped(c) + "</td>";
    page += "</tr>\n";
  }
  page += "</tbody></table>\n<script>\n"
          "document.querySelectorAll('#results th').forEach(function (th, col) {\n"
          "  th.addEventListener('click', function () {\n"
          "    var body = document.querySelector('#results tbody');\n"
          "    var rows = Array.prototype.slice.call(body.rows);\n"
          "    var up = th.dataset.order !== 'up';\n"
          "    th.dataset.order = up ? 'up' : 'down';\n"
          "    rows.sort(function (a, b) {\n"
          "      var x = a.cells[col].textContent, y = b.cells[col].textContent;\n"
          "      var nx = parseFloat(x), ny = parseFloat(y);\n"
          "      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);\n"
          "      return up ? c : -c;\n"
          "    });\n"
          "    rows.forEach(function (r) { body.appendChild(r); });\n"
          "  });\n"
          "});\n"
          "document.body.setAttribute('data-sortable-columns', document.querySelectorAll('#results th').length);\n"
          "</script>\n</body></html>\n";
  return page;
}

}  // namespace chakrasim::sweep
