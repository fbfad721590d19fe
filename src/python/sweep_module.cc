// chakrasim.sweep: `chakrasim sweep` from Python (docs/python.md, docs/sweep.md). The spec is a
// file or a dict of the same keys; the points run on threads with the GIL released; the result
// holds the table, as dicts of typed values or a pandas DataFrame.
#include <thread>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "cli/sweep_runner.h"
#include "core/atomic_file.h"
#include "core/read_file.h"
#include "python/bindings.h"
#include "sweep/sweep_html.h"

namespace chakrasim::python {
namespace {

struct SweepResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> cells;  // by point

  // A cell as Python reads it: an int, a float, or the text (lists stay their JSON text).
  static py::object typed(const std::string& text) {
    if (text.empty()) return py::none();
    char* end = nullptr;
    const long long i = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() + text.size()) return py::int_(i);
    const double d = std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size()) return py::float_(d);
    return py::str(text);
  }

  py::list rows() const {
    py::list list;
    for (const auto& row : cells) {
      py::dict d;
      for (std::size_t c = 0; c < columns.size(); ++c) d[py::str(columns[c])] = typed(row[c]);
      list.append(d);
    }
    return list;
  }
};

}  // namespace

void bind_sweep(py::module_& module) {
  py::class_<SweepResult>(module, "SweepResult", "The table of a sweep: one row per point")
      .def_readonly("columns", &SweepResult::columns)
      .def("rows", &SweepResult::rows, "One dict per point: its axes and figures (as chakrasim sweep's CSV)")
      .def(
          "to_dataframe",
          [](const SweepResult& r) {
            py::module_ pandas;
            try {
              pandas = py::module_::import("pandas");
            } catch (py::error_already_set& e) {
              if (!e.matches(PyExc_ImportError)) throw;
              PyErr_SetString(PyExc_ImportError, "SweepResult.to_dataframe needs pandas, which is not installed "
                                                 "(Debian: apt-get install python3-pandas); SweepResult.rows() "
                                                 "gives the same table as a list of dicts");
              throw py::error_already_set();
            }
            return pandas.attr("DataFrame")(r.rows(), py::arg("columns") = r.columns).attr("set_index")("point");
          },
          "The table as a pandas DataFrame indexed by point (needs pandas)")
      .def("__len__", [](const SweepResult& r) { return r.cells.size(); })
      .def("__repr__", [](const SweepResult& r) {
        return fmt::format("SweepResult(points={}, columns={})", r.cells.size(), r.columns.size());
      });
  module.def(
      "sweep",
      [](py::handle spec, py::object out, py::object html, std::size_t jobs) {
        std::string text, source;
        if (py::isinstance<py::dict>(spec)) {
          // JSON is YAML: the dict goes through the same reader as a file.
          text = py::module_::import("json").attr("dumps")(spec).cast<std::string>();
          source = "the sweep dict";
        } else {
          source = py::str(spec).cast<std::string>();
          text = read_file(source, "sweep spec", "a sweep YAML");
        }
        const cli::SweepRunner runner(sweep::parse_spec(text, source));
        sweep::Table table;
        table.header = runner.header();
        std::vector<std::size_t> todo(runner.points());
        for (std::size_t p = 0; p < todo.size(); ++p) todo[p] = p;
        {
          py::gil_scoped_release released;
          cli::run_points_on_threads(runner, todo, jobs > 0 ? jobs : std::max(1u, std::thread::hardware_concurrency()),
                                     [&](sweep::Row row) { table.rows[row.point] = std::move(row); });
        }
        if (!out.is_none()) {
          write_file_atomically(py::str(out).cast<std::string>(), sweep::csv_text(table), "the sweep table");
        }
        if (!html.is_none()) {
          write_file_atomically(py::str(html).cast<std::string>(), sweep::html_page(runner.spec(), table),
                                "the sweep page");
        }
        SweepResult result;
        result.columns = table.header;
        for (const auto& [point, row] : table.rows) result.cells.push_back(row.cells);
        return result;
      },
      py::arg("spec"), py::kw_only(), py::arg("out") = py::none(), py::arg("html") = py::none(), py::arg("jobs") = 0,
      "Runs every point of a sweep (a spec file, or a dict of its keys: base, axes, zip, derived, cost; "
      "docs/sweep.md) on `jobs` threads (default: every core) and returns its table; `out` and `html` also write "
      "the CSV and the page");
}

}  // namespace chakrasim::python
