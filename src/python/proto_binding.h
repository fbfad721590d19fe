// Chakra's protobuf messages (chakra/et_def.proto) as Python classes that read and write like
// the ones Chakra's generated Python code offers: `node.id = 1`, `node.data_deps.append(0)`,
// `node.attr.append(AttributeProto(name="comm_size", uint64_val=1024))`, keyword constructors,
// SerializeToString / ParseFromString / CopyFrom / HasField / WhichOneof.
//
// Every field is reached through protobuf's reflection, so the Python classes follow the schema:
// a field added to et_def.proto appears in Python without a line here. A Python object wraps the
// C++ message itself (no copy): chakrasim.run and encode_message take the very bytes the C++
// writer would write.
//
// Where this differs from Chakra's Python classes (all documented in docs/python.md):
//   - a sub-message read from a message is a view into it, valid while the message keeps it
//     (Clear(), or setting another member of its oneof, discards it);
//   - reading a singular sub-message field (node.inputs) marks it present, as C++ protobuf
//     does, except for an unset member of a oneof, which reads as a detached default;
//   - scalar and repeated scalar fields may be assigned a list (node.data_deps = [1, 2]), and a
//     *List field of AttributeProto a plain list (bool_list=[True]);
//   - elements of a repeated message field cannot be deleted (build a new message instead).
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

namespace chakrasim::python {

namespace py = pybind11;
using ProtoMessage = google::protobuf::Message;

// Registers the base class "Message" (the methods every message has) and "RepeatedField" (the
// list-like view of a repeated field) in `module`; call once, before bind_message.
void bind_message_base(py::module_& module);

// The Python value of `field` of `message`: an int, float, bool, str or bytes; a view of a
// sub-message (kept alive with `owner`, the Python object of `message`); or a RepeatedField view.
py::object get_field(ProtoMessage& message, const google::protobuf::FieldDescriptor* field, py::handle owner);
// Sets `field` of `message` from a Python value; raises TypeError or ValueError naming the field.
void set_field(ProtoMessage& message, const google::protobuf::FieldDescriptor* field, py::handle value);
// Sets the fields named by `kwargs`; an unknown name raises ValueError listing the valid ones.
void set_fields(ProtoMessage& message, const py::kwargs& kwargs);

// Registers message type T as class `name` of `module`: a keyword constructor and one property
// per field of its descriptor.
template <typename T>
py::class_<T, ProtoMessage> bind_message(py::module_& module, const char* name) {
  py::class_<T, ProtoMessage> cls(module, name);
  cls.def(py::init([](const py::kwargs& kwargs) {
    auto message = std::make_unique<T>();
    set_fields(*message, kwargs);
    return message;
  }));
  cls.def("__copy__", [](const T& message) { return T(message); });
  cls.def("__deepcopy__", [](const T& message, const py::dict&) { return T(message); });
  const google::protobuf::Descriptor* descriptor = T::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    cls.def_property(
        field->name().c_str(), [field](py::object self) { return get_field(self.cast<ProtoMessage&>(), field, self); },
        [field](ProtoMessage& self, py::handle value) { set_field(self, field, value); });
  }
  return cls;
}

}  // namespace chakrasim::python
