// The Python module `chakrasim` (docs/python.md): chakrasim.et builds and reads Chakra traces,
// chakrasim.run simulates them, chakrasim.sweep runs a design-space sweep.
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

  chakrasim::python::bind_sweep(module);
}
