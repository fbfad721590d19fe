// The parts of the Python module `chakrasim` (docs/python.md), each registered by one function.
#pragma once

#include <pybind11/pybind11.h>

namespace chakrasim::python {

namespace py = pybind11;

// chakrasim.et: Chakra's messages, node and collective types, encode_message / decode_message
// (the names of Chakra's et_def_pb2 and protolib), read_trace / write_trace. `error` is the
// exception chakrasim's errors raise.
void bind_et(py::module_& et, py::handle error);

// chakrasim.run and its result (RunResult); `error` is the exception chakrasim's errors raise,
// `deadlock` the one a run that stops making progress raises.
void bind_run(py::module_& module, py::handle error, py::handle deadlock);

// chakrasim.sweep and its result (SweepResult): `chakrasim sweep` in process.
void bind_sweep(py::module_& module);

}  // namespace chakrasim::python
