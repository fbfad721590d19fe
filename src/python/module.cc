// The Python module `chakrasim` (docs/python.md): chakrasim.et builds and reads Chakra traces,
// chakrasim.run simulates them.
#include <pybind11/pybind11.h>

#include "core/error.h"
#include "python/bindings.h"

PYBIND11_MODULE(chakrasim, module) {
  namespace py = pybind11;
  module.doc() = "chakrasim: simulate distributed AI training from Chakra execution traces";
  module.attr("__version__") = CHAKRASIM_VERSION;

  // chakrasim::Error carries the message a user needs (file, key, value, what was expected).
  const py::exception<chakrasim::Error>& error =
      py::register_exception<chakrasim::Error>(module, "Error", PyExc_RuntimeError);
  const py::object deadlock = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc("chakrasim.DeadlockError",
                                                                                          "A run stopped making "
                                                                                          "progress; the message "
                                                                                          "reports the nodes each NPU "
                                                                                          "still holds",
                                                                                          error.ptr(), nullptr));
  module.attr("DeadlockError") = deadlock;

  py::module_ et = module.def_submodule("et");
  chakrasim::python::bind_et(et, error);
  // So that `from chakrasim.et import Node` finds the submodule of this one-file module.
  py::module_::import("sys").attr("modules")["chakrasim.et"] = et;

  chakrasim::python::bind_run(module, error, deadlock);

  // A sweep (one run per combination of options) belongs here once the `chakrasim sweep`
  // command exists; it is being built separately, and this module will call the same code.
  module.def(
      "sweep",
      [](const py::args&, const py::kwargs&) {
        PyErr_SetString(PyExc_NotImplementedError, "chakrasim.sweep is not available yet (it will follow the "
                                                   "`chakrasim sweep` command); "
                                                   "call chakrasim.run in a loop meanwhile");
        throw py::error_already_set();
      },
      "Not available yet: will run a sweep as `chakrasim sweep` does");
}
