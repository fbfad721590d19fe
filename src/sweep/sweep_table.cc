#include "sweep/sweep_table.h"

#include <fmt/format.h>

#include "core/error.h"

namespace chakrasim::sweep {
namespace {

// The cells of one record starting at `at`; advances `at` past its line end. Quoted cells may
// hold commas, quotes ("") and newlines.
std::vector<std::string> read_record(const std::string& text, std::size_t& at, const std::string& source,
                                     std::size_t line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  while (at < text.size()) {
    const char c = text[at++];
    if (quoted) {
      if (c == '"' && at < text.size() && text[at] == '"') {
        cells.back() += '"';
        ++at;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c == '\n') {
      return cells;
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  if (quoted) fail("{}: line {}: a quoted cell is not closed", source, line);
  return cells;
}

}  // namespace

const std::vector<std::string>& figure_columns() {
  static const std::vector<std::string> kColumns = {"status",
                                                    "error",
                                                    "iteration_ns",
                                                    "npus",
                                                    "finished_npus",
                                                    "compute_ns",
                                                    "exposed_collective_ns",
                                                    "p2p_wait_ns",
                                                    "memory_ns",
                                                    "idle_ns",
                                                    "mfu",
                                                    "busbw_all_reduce_gbps",
                                                    "busbw_all_gather_gbps",
                                                    "busbw_reduce_scatter_gbps",
                                                    "busbw_all_to_all_gbps",
                                                    "link_peak_util",
                                                    "wall_s"};
  return kColumns;
}

std::vector<std::string> table_header(const std::vector<std::string>& axes) {
  std::vector<std::string> header = {"point"};
  header.insert(header.end(), axes.begin(), axes.end());
  header.insert(header.end(), figure_columns().begin(), figure_columns().end());
  return header;
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    const std::string& c = cells[i];
    if (c.find_first_of(",\"\n\r") == std::string::npos) {
      out += c;
      continue;
    }
    out += '"';
    for (const char ch : c) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    out += '"';
  }
  return out;
}

std::string csv_text(const Table& table) {
  std::string out = csv_line(table.header) + "\n";
  for (const auto& [point, row] : table.rows) out += csv_line(row.cells) + "\n";
  return out;
}

Table parse_csv(const std::string& text, const std::string& source, const std::vector<std::string>& header) {
  Table table;
  table.header = header;
  std::size_t at = 0, line = 1;
  if (text.empty()) return table;
  const std::vector<std::string> first = read_record(text, at, source, line);
  if (first != header) {
    fail("{}: line 1: the columns are not this sweep's ({}...); expected {}...", source,
         fmt::join(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(first.size(), 4)),
                   ","),
         fmt::join(header.begin(),
                   header.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(header.size(), 4)), ","));
  }
  while (at < text.size()) {
    ++line;
    Row row;
    row.cells = read_record(text, at, source, line);
    if (row.cells.size() == 1 && row.cells[0].empty()) continue;
    if (row.cells.size() != header.size()) {
      fail("{}: line {}: {} cells; expected {}", source, line, row.cells.size(), header.size());
    }
    const std::string& p = row.cells[0];
    if (p.empty() || p.find_first_not_of("0123456789") != std::string::npos || p.size() > 12) {
      fail("{}: line {}: point \"{}\" is not a point number", source, line, p);
    }
    row.point = std::stoull(p);
    table.rows[row.point] = std::move(row);
  }
  return table;
}

}  // namespace chakrasim::sweep
