#include "python/proto_binding.h"

#include <google/protobuf/text_format.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace chakrasim::python {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Reflection;

// "Node.id", for error messages.
std::string field_label(const FieldDescriptor* field) {
  return fmt::format("{}.{}", field->containing_type()->name(), field->name());
}

std::string type_name_of(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

[[noreturn]] void wrong_type(const FieldDescriptor* field, const char* expected, py::handle value) {
  throw py::type_error(fmt::format("{}: expected {}, got {} ({})", field_label(field), expected,
                                   static_cast<std::string>(py::repr(value)), type_name_of(value)));
}

// An integer field's value, checked against the field's range: protobuf would otherwise keep
// only the low bits of 2**32 + 5, silently.
template <typename Int>
Int to_integer(const FieldDescriptor* field, py::handle value) {
  if (!PyLong_Check(value.ptr())) wrong_type(field, "an int", value);
  const py::int_ number = py::reinterpret_borrow<py::int_>(value);
  const bool below = number < py::int_(std::numeric_limits<Int>::min());
  const bool above = number > py::int_(std::numeric_limits<Int>::max());
  if (below || above) {
    throw py::value_error(fmt::format("{}: {} is out of range; expected an integer from {} to {}", field_label(field),
                                      static_cast<std::string>(py::str(value)), std::numeric_limits<Int>::min(),
                                      std::numeric_limits<Int>::max()));
  }
  return number.cast<Int>();
}

double to_double(const FieldDescriptor* field, py::handle value) {
  if (!PyFloat_Check(value.ptr()) && !PyLong_Check(value.ptr())) wrong_type(field, "a number", value);
  return value.cast<double>();
}

// The message a Python object wraps, or nullptr when it wraps none.
ProtoMessage* message_of(py::handle value) {
  try {
    return value.cast<ProtoMessage*>();
  } catch (const py::cast_error&) {
    return nullptr;
  }
}

// Messages whose one field is `repeated ... values` (BoolList, Int64List, ...): a plain list
// stands for them.
const FieldDescriptor* values_field_of(const Descriptor* type) {
  if (type->field_count() != 1) return nullptr;
  const FieldDescriptor* values = type->field(0);
  return values->is_repeated() && values->name() == "values" ? values : nullptr;
}

void add_element(ProtoMessage& message, const FieldDescriptor* field, py::handle value);

void set_message(ProtoMessage& target, const FieldDescriptor* field, py::handle value) {
  const ProtoMessage* source = message_of(value);
  if (source != nullptr) {
    if (source->GetDescriptor() != target.GetDescriptor()) {
      wrong_type(field, fmt::format("a {}", target.GetDescriptor()->name()).c_str(), value);
    }
    if (source != &target) target.CopyFrom(*source);
    return;
  }
  const FieldDescriptor* values = values_field_of(target.GetDescriptor());
  if (values == nullptr || !py::isinstance<py::iterable>(value) || py::isinstance<py::str>(value)) {
    wrong_type(field, fmt::format("a {}", target.GetDescriptor()->name()).c_str(), value);
  }
  target.Clear();
  for (py::handle item : value) add_element(target, values, item);
}

// Sets a singular field, or (with `repeated`) appends to a repeated one.
void store(ProtoMessage& message, const FieldDescriptor* field, py::handle value, bool repeated) {
  const Reflection* r = message.GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      const auto v = to_integer<std::int32_t>(field, value);
      repeated ? r->AddInt32(&message, field, v) : r->SetInt32(&message, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const auto v = to_integer<std::int64_t>(field, value);
      repeated ? r->AddInt64(&message, field, v) : r->SetInt64(&message, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const auto v = to_integer<std::uint32_t>(field, value);
      repeated ? r->AddUInt32(&message, field, v) : r->SetUInt32(&message, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const auto v = to_integer<std::uint64_t>(field, value);
      repeated ? r->AddUInt64(&message, field, v) : r->SetUInt64(&message, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      const double v = to_double(field, value);
      repeated ? r->AddDouble(&message, field, v) : r->SetDouble(&message, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const auto v = static_cast<float>(to_double(field, value));
      repeated ? r->AddFloat(&message, field, v) : r->SetFloat(&message, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      // Python's bool is an int; other ints are refused rather than read as true.
      if (!PyBool_Check(value.ptr())) wrong_type(field, "a bool", value);
      const bool v = value.cast<bool>();
      repeated ? r->AddBool(&message, field, v) : r->SetBool(&message, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      // Open enums (proto3): a value the schema does not name is kept, as Chakra's classes keep it.
      const auto v = to_integer<std::int32_t>(field, value);
      repeated ? r->AddEnumValue(&message, field, v) : r->SetEnumValue(&message, field, v);
      return;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string v;
      if (field->type() == FieldDescriptor::TYPE_BYTES) {
        if (!PyBytes_Check(value.ptr())) wrong_type(field, "bytes", value);
        v = value.cast<std::string>();
      } else {
        if (!PyUnicode_Check(value.ptr())) wrong_type(field, "a str", value);
        v = value.cast<std::string>();
      }
      repeated ? r->AddString(&message, field, std::move(v)) : r->SetString(&message, field, std::move(v));
      return;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      set_message(repeated ? *r->AddMessage(&message, field) : *r->MutableMessage(&message, field), field, value);
      return;
  }
}

void add_element(ProtoMessage& message, const FieldDescriptor* field, py::handle value) {
  store(message, field, value, true);
}

// The value of element `index` of a repeated field (a view, for a message).
py::object element(ProtoMessage& message, const FieldDescriptor* field, int index, py::handle owner) {
  const Reflection* r = message.GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return py::int_(r->GetRepeatedInt32(message, field, index));
    case FieldDescriptor::CPPTYPE_INT64: return py::int_(r->GetRepeatedInt64(message, field, index));
    case FieldDescriptor::CPPTYPE_UINT32: return py::int_(r->GetRepeatedUInt32(message, field, index));
    case FieldDescriptor::CPPTYPE_UINT64: return py::int_(r->GetRepeatedUInt64(message, field, index));
    case FieldDescriptor::CPPTYPE_DOUBLE: return py::float_(r->GetRepeatedDouble(message, field, index));
    case FieldDescriptor::CPPTYPE_FLOAT: return py::float_(r->GetRepeatedFloat(message, field, index));
    case FieldDescriptor::CPPTYPE_BOOL: return py::bool_(r->GetRepeatedBool(message, field, index));
    case FieldDescriptor::CPPTYPE_ENUM: return py::int_(r->GetRepeatedEnumValue(message, field, index));
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string text = r->GetRepeatedString(message, field, index);
      if (field->type() == FieldDescriptor::TYPE_BYTES) return py::bytes(text);
      return py::str(text);
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return py::cast(r->MutableRepeatedMessage(&message, field, index), py::return_value_policy::reference_internal,
                      owner);
  }
  return py::none();
}

// A repeated field seen from Python as a list: indexing, len, iteration, append, extend, and
// add(**fields) for messages. It keeps the Python object of its message alive.
class RepeatedField {
 public:
  RepeatedField(ProtoMessage& message, const FieldDescriptor* field) : message_(&message), field_(field) {}

  int size() const { return message_->GetReflection()->FieldSize(*message_, field_); }

  // A Python index (negative counts from the end) as a position; raises IndexError outside.
  int position(std::int64_t index) const {
    const std::int64_t n = size();
    const std::int64_t at = index < 0 ? index + n : index;
    if (at < 0 || at >= n) {
      throw py::index_error(fmt::format("{}: index {} out of range for {} elements", field_label(field_), index, n));
    }
    return static_cast<int>(at);
  }

  py::object get(std::int64_t index, py::handle self) { return element(*message_, field_, position(index), self); }

  py::list items(py::handle self) {
    py::list list;
    for (int i = 0, n = size(); i < n; ++i) list.append(element(*message_, field_, i, self));
    return list;
  }

  void set(std::int64_t index, py::handle value) {
    const int at = position(index);
    if (field_->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      set_message(*message_->GetReflection()->MutableRepeatedMessage(message_, field_, at), field_, value);
      return;
    }
    // Appended at the end, then moved into place: reflection has one setter per type, this needs
    // none of them.
    add_element(*message_, field_, value);
    const Reflection* r = message_->GetReflection();
    r->SwapElements(message_, field_, at, size() - 1);
    r->RemoveLast(message_, field_);
  }

  void remove(std::int64_t index) {
    if (field_->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      // Python may hold a view of the element; removing it would leave that view dangling.
      throw py::type_error(fmt::format("{}: elements of a message list cannot be removed; build a new {}",
                                       field_label(field_), field_->containing_type()->name()));
    }
    const Reflection* r = message_->GetReflection();
    for (int at = position(index); at + 1 < size(); ++at) r->SwapElements(message_, field_, at, at + 1);
    r->RemoveLast(message_, field_);
  }

  void append(py::handle value) { add_element(*message_, field_, value); }

  void extend(py::handle values) {
    if (!py::isinstance<py::iterable>(values)) wrong_type(field_, "an iterable", values);
    for (py::handle value : values) add_element(*message_, field_, value);
  }

  py::object add(const py::kwargs& kwargs, py::handle self) {
    if (field_->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      throw py::type_error(
          fmt::format("{}: add() makes a message; use append() for a list of values", field_label(field_)));
    }
    ProtoMessage* added = message_->GetReflection()->AddMessage(message_, field_);
    set_fields(*added, kwargs);
    return py::cast(added, py::return_value_policy::reference_internal, self);
  }

 private:
  ProtoMessage* message_;
  const FieldDescriptor* field_;
};

}  // namespace

py::object get_field(ProtoMessage& message, const FieldDescriptor* field, py::handle owner) {
  if (field->is_repeated()) {
    // keep_alive: the view refers to the message, whose Python object must outlive it.
    py::object view = py::cast(RepeatedField(message, field));
    py::detail::keep_alive_impl(view, owner);
    return view;
  }
  const Reflection* r = message.GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return py::int_(r->GetInt32(message, field));
    case FieldDescriptor::CPPTYPE_INT64: return py::int_(r->GetInt64(message, field));
    case FieldDescriptor::CPPTYPE_UINT32: return py::int_(r->GetUInt32(message, field));
    case FieldDescriptor::CPPTYPE_UINT64: return py::int_(r->GetUInt64(message, field));
    case FieldDescriptor::CPPTYPE_DOUBLE: return py::float_(r->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT: return py::float_(r->GetFloat(message, field));
    case FieldDescriptor::CPPTYPE_BOOL: return py::bool_(r->GetBool(message, field));
    case FieldDescriptor::CPPTYPE_ENUM: return py::int_(r->GetEnumValue(message, field));
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string text = r->GetString(message, field);
      if (field->type() == FieldDescriptor::TYPE_BYTES) return py::bytes(text);
      return py::str(text);
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      // Reading an unset member of a oneof must not select it (that would clear the member set).
      if (field->containing_oneof() != nullptr && !r->HasField(message, field)) {
        return py::cast(r->GetMessage(message, field).New(), py::return_value_policy::take_ownership);
      }
      return py::cast(r->MutableMessage(&message, field), py::return_value_policy::reference_internal, owner);
    }
  }
  return py::none();
}

void set_field(ProtoMessage& message, const FieldDescriptor* field, py::handle value) {
  if (!field->is_repeated()) {
    store(message, field, value, false);
    return;
  }
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    // Clearing the list would leave any view of its elements dangling.
    throw py::attribute_error(
        fmt::format("{}: a list of messages cannot be assigned; append() or extend() to it", field_label(field)));
  }
  if (!py::isinstance<py::iterable>(value) || py::isinstance<py::str>(value)) {
    wrong_type(field, "a list", value);
  }
  // Converted first, so that a bad element leaves the field as it was.
  std::unique_ptr<ProtoMessage> staged(message.New());
  for (py::handle item : value) add_element(*staged, field, item);
  message.GetReflection()->SwapFields(&message, staged.get(), {field});
}

void set_fields(ProtoMessage& message, const py::kwargs& kwargs) {
  const Descriptor* type = message.GetDescriptor();
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key);
    const FieldDescriptor* field = type->FindFieldByName(name);
    if (field == nullptr) {
      std::string valid;
      for (int i = 0; i < type->field_count(); ++i) valid += (i == 0 ? "" : ", ") + type->field(i)->name();
      throw py::value_error(fmt::format("{} has no field \"{}\"; its fields are {}", type->name(), name, valid));
    }
    if (field->is_repeated()) {
      // In a constructor a list of messages is fine: there is no element a view could refer to.
      if (!py::isinstance<py::iterable>(value) || py::isinstance<py::str>(value)) wrong_type(field, "a list", value);
      for (py::handle item : value) add_element(message, field, item);
    } else {
      set_field(message, field, value);
    }
  }
}

void bind_message_base(py::module_& module) {
  py::class_<ProtoMessage> base(module, "Message",
                                "Base of the Chakra messages: the methods of protobuf's Python messages");
  base.def("SerializeToString", [](const ProtoMessage& m) { return py::bytes(m.SerializeAsString()); })
      .def("ParseFromString",
           [](ProtoMessage& m, const py::bytes& data) {
             if (!m.ParseFromString(static_cast<std::string>(data))) {
               throw py::value_error(fmt::format("{}: the bytes do not parse", m.GetDescriptor()->name()));
             }
           })
      .def("CopyFrom",
           [](ProtoMessage& m, py::handle other) {
             const ProtoMessage* source = message_of(other);
             if (source == nullptr || source->GetDescriptor() != m.GetDescriptor()) {
               throw py::type_error(fmt::format("{}.CopyFrom: expected a {}, got {}", m.GetDescriptor()->name(),
                                                m.GetDescriptor()->name(), type_name_of(other)));
             }
             if (source != &m) m.CopyFrom(*source);
           })
      .def("Clear", [](ProtoMessage& m) { m.Clear(); })
      .def("ByteSize", [](const ProtoMessage& m) { return m.ByteSizeLong(); })
      .def("ListFields",
           [](py::object self) {
             auto& m = self.cast<ProtoMessage&>();
             std::vector<const FieldDescriptor*> fields;
             m.GetReflection()->ListFields(m, &fields);
             py::list list;
             for (const FieldDescriptor* f : fields) list.append(py::make_tuple(f->name(), get_field(m, f, self)));
             return list;
           })
      .def("HasField",
           [](const ProtoMessage& m, const std::string& name) {
             const FieldDescriptor* field = m.GetDescriptor()->FindFieldByName(name);
             if (field != nullptr && !field->is_repeated()) return m.GetReflection()->HasField(m, field);
             const auto* oneof = m.GetDescriptor()->FindOneofByName(name);
             if (oneof != nullptr) return m.GetReflection()->HasOneof(m, oneof);
             throw py::value_error(
                 fmt::format("{} has no singular field or oneof \"{}\"", m.GetDescriptor()->name(), name));
           })
      .def("ClearField",
           [](ProtoMessage& m, const std::string& name) {
             const FieldDescriptor* field = m.GetDescriptor()->FindFieldByName(name);
             if (field == nullptr) {
               throw py::value_error(fmt::format("{} has no field \"{}\"", m.GetDescriptor()->name(), name));
             }
             m.GetReflection()->ClearField(&m, field);
           })
      .def("WhichOneof",
           [](const ProtoMessage& m, const std::string& name) -> py::object {
             const auto* oneof = m.GetDescriptor()->FindOneofByName(name);
             if (oneof == nullptr) {
               throw py::value_error(fmt::format("{} has no oneof \"{}\"", m.GetDescriptor()->name(), name));
             }
             const FieldDescriptor* set = m.GetReflection()->GetOneofFieldDescriptor(m, oneof);
             if (set == nullptr) return py::none();
             return py::str(set->name());
           })
      .def("__eq__",
           [](const ProtoMessage& m, py::handle other) {
             const ProtoMessage* o = message_of(other);
             return o != nullptr && o->GetDescriptor() == m.GetDescriptor() &&
                    o->SerializeAsString() == m.SerializeAsString();
           })
      .def("__str__",
           [](const ProtoMessage& m) {
             std::string text;
             google::protobuf::TextFormat::PrintToString(m, &text);
             return text;
           })
      .def("__repr__", [](const ProtoMessage& m) {
        return fmt::format("{}({})", m.GetDescriptor()->name(), m.ShortDebugString());
      });
  // Mutable messages are not hashable, as in protobuf's Python classes.
  base.attr("__hash__") = py::none();

  // Methods that hand out views take their own Python object (`self`), which the views keep alive.
  auto field_of = [](py::handle self) -> RepeatedField& { return self.cast<RepeatedField&>(); };
  py::class_<RepeatedField>(module, "RepeatedField", "A repeated field of a message, seen as a list")
      .def("__len__", &RepeatedField::size)
      .def("__getitem__", [field_of](py::object self, std::int64_t i) { return field_of(self).get(i, self); })
      .def("__getitem__", [field_of](py::object self,
                                     const py::slice& slice) { return py::object(field_of(self).items(self)[slice]); })
      .def("__setitem__", &RepeatedField::set)
      .def("__delitem__", &RepeatedField::remove)
      .def("__iter__", [field_of](py::object self) { return field_of(self).items(self).attr("__iter__")(); })
      .def("__eq__",
           [field_of](py::object self, py::handle other) {
             return py::isinstance<py::sequence>(other) &&
                    field_of(self).items(self).equal(py::list(py::reinterpret_borrow<py::object>(other)));
           })
      .def("__repr__", [field_of](py::object self) { return py::repr(field_of(self).items(self)); })
      .def("append", &RepeatedField::append)
      .def("extend", &RepeatedField::extend)
      .def("add", [field_of](py::object self, const py::kwargs& kwargs) { return field_of(self).add(kwargs, self); });
}

}  // namespace chakrasim::python
