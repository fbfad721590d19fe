// A sweep's results: one row per point, the varied keys then the figures (docs/sweep.md). Read
// back to resume a sweep, merged from shards, and written as CSV.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace chakrasim::sweep {

// The figures of a point, after its axes: each a column of every table.
const std::vector<std::string>& figure_columns();

struct Row {
  std::size_t point = 0;
  std::vector<std::string> cells;  // "point", the axes, then figure_columns()
};

struct Table {
  std::vector<std::string> header;
  std::map<std::size_t, Row> rows;  // by point index
};

// The header of a sweep whose varied keys are `axes`.
std::vector<std::string> table_header(const std::vector<std::string>& axes);

// The table as CSV (RFC 4180 quoting), rows by point.
std::string csv_text(const Table& table);

// Reads a CSV written by csv_text; errors name `source` and the line. `header` must match.
Table parse_csv(const std::string& text, const std::string& source, const std::vector<std::string>& header);

// A row's cells as one CSV line (no newline), and one line's cells.
std::string csv_line(const std::vector<std::string>& cells);

}  // namespace chakrasim::sweep
