// chakrasim.et: what a Chakra generator script imports from et_def_pb2 and protolib, under the
// same names, so that a script written for Chakra needs only its imports changed:
//
//   from chakrasim.et import (Node as ChakraNode, AttributeProto as ChakraAttr, BoolList,
//                             GlobalMetadata, COMP_NODE, COMM_COLL_NODE, ALL_REDUCE,
//                             encode_message)
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "chakra/et_file.h"
#include "python/bindings.h"
#include "python/proto_binding.h"

namespace chakrasim::python {
namespace {

// Each message of et_def.proto (chakra/et_def.proto), named as in Chakra's et_def_pb2.
void bind_messages(py::module_& et) {
  using namespace ChakraProtoMsg;
  bind_message<AttributeProto>(et, "AttributeProto");
  bind_message<DoubleList>(et, "DoubleList");
  bind_message<FloatList>(et, "FloatList");
  bind_message<Int32List>(et, "Int32List");
  bind_message<Int64List>(et, "Int64List");
  bind_message<Uint32List>(et, "Uint32List");
  bind_message<Uint64List>(et, "Uint64List");
  bind_message<Sint32List>(et, "Sint32List");
  bind_message<Sint64List>(et, "Sint64List");
  bind_message<Fixed32List>(et, "Fixed32List");
  bind_message<Fixed64List>(et, "Fixed64List");
  bind_message<Sfixed32List>(et, "Sfixed32List");
  bind_message<Sfixed64List>(et, "Sfixed64List");
  bind_message<BoolList>(et, "BoolList");
  bind_message<StringList>(et, "StringList");
  bind_message<BytesList>(et, "BytesList");
  bind_message<GlobalMetadata>(et, "GlobalMetadata");
  bind_message<IOInfo>(et, "IOInfo");
  bind_message<Tensor>(et, "Tensor");
  bind_message<Node>(et, "Node");
  // The names Chakra's scripts import them as.
  et.attr("ChakraNode") = et.attr("Node");
  et.attr("ChakraAttr") = et.attr("AttributeProto");
}

// NodeType and CollectiveCommType: each value as a module constant (COMP_NODE, ALL_REDUCE, ...)
// as et_def_pb2 has them, and a dict of each enum's names by value.
void bind_enums(py::module_& et) {
  const google::protobuf::FileDescriptor* file = ChakraProtoMsg::Node::descriptor()->file();
  for (int e = 0; e < file->enum_type_count(); ++e) {
    const google::protobuf::EnumDescriptor* type = file->enum_type(e);
    py::dict names;
    for (int v = 0; v < type->value_count(); ++v) {
      const google::protobuf::EnumValueDescriptor* value = type->value(v);
      et.attr(value->name().c_str()) = value->number();
      names[py::int_(value->number())] = value->name();
    }
    et.attr(fmt::format("{}_NAMES", type->name()).c_str()) = names;
  }
}

// A length as protobuf's base-128 varint, the framing of an .et file (docs/chakra-format.md §1.1).
std::string varint_bytes(std::uint64_t value) {
  std::string bytes;
  while (value >= 0x80) {
    bytes.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  bytes.push_back(static_cast<char>(value));
  return bytes;
}

// Writes `message` to the binary file object `file` (anything with write(bytes)) as Chakra's
// encodeMessage does: its length as a varint, then its bytes.
void encode_message(py::handle file, const ProtoMessage& message) {
  const std::string body = message.SerializeAsString();
  file.attr("write")(py::bytes(varint_bytes(body.size()) + body));
}

// Reads the next message of `file` into `message`, as Chakra's decodeMessage does: false at the
// end of the file. Unlike it, a cut or unreadable message raises instead of ending the file, and
// an empty message (0 bytes, e.g. a Node with every field at its default) is read as one.
bool decode_message(py::handle file, ProtoMessage& message, py::handle error) {
  std::uint64_t length = 0;
  for (int shift = 0;; shift += 7) {
    const std::string byte = file.attr("read")(1).cast<std::string>();
    if (byte.empty()) {
      if (shift == 0) return false;
      PyErr_SetString(error.ptr(), "decode_message: the file ends inside a message's length");
      throw py::error_already_set();
    }
    if (shift > 63) {
      PyErr_SetString(error.ptr(), "decode_message: a message's length is longer than 10 bytes");
      throw py::error_already_set();
    }
    const auto b = static_cast<unsigned char>(byte[0]);
    length |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
  }
  const std::string body = file.attr("read")(length).cast<std::string>();
  if (body.size() != length || !message.ParseFromString(body)) {
    const std::string what =
        body.size() != length
            ? fmt::format("decode_message: the file ends {} bytes into a {}-byte {}", body.size(), length,
                          message.GetDescriptor()->name())
            : fmt::format("decode_message: {} bytes do not parse as a {}", length, message.GetDescriptor()->name());
    PyErr_SetString(error.ptr(), what.c_str());
    throw py::error_already_set();
  }
  return true;
}

}  // namespace

void bind_et(py::module_& et, py::handle error) {
  et.doc() = "Chakra execution traces: the messages, node and collective types, and the framing of .et files, "
             "named as in Chakra's et_def_pb2 and protolib";
  bind_message_base(et);
  bind_messages(et);
  bind_enums(et);

  et.def("encode_message", &encode_message, py::arg("file"), py::arg("message"),
         "Write MESSAGE to the binary FILE as a varint length and its bytes (Chakra's encodeMessage)");
  et.def(
      "decode_message",
      [error = py::object(py::reinterpret_borrow<py::object>(error))](py::handle file, ProtoMessage& message) {
        return decode_message(file, message, error);
      },
      py::arg("file"), py::arg("message"),
      "Read the next message of the binary FILE into MESSAGE; False at the end of the file (Chakra's decodeMessage)");
  et.attr("encodeMessage") = et.attr("encode_message");
  et.attr("decodeMessage") = et.attr("decode_message");

  // The C++ reader and writer of chakrasim itself, for checking and for whole files at once.
  et.def(
      "read_trace",
      [](const std::string& path) {
        chakra::Trace trace;
        {
          py::gil_scoped_release unlocked;
          trace = chakra::read_trace(path);
        }
        py::list nodes;
        for (chakra::Node& node : trace.nodes) nodes.append(py::cast(std::move(node)));
        return py::make_tuple(py::cast(std::move(trace.metadata)), nodes);
      },
      py::arg("path"), "Read an .et file with chakrasim's reader: (GlobalMetadata, [Node, ...])");
  et.def(
      "write_trace",
      [](const std::string& path, const chakra::GlobalMetadata& metadata, const py::iterable& nodes) {
        chakra::Trace trace;
        trace.metadata = metadata;
        for (py::handle node : nodes) trace.nodes.push_back(node.cast<const chakra::Node&>());
        py::gil_scoped_release unlocked;
        chakra::write_trace(path, trace);
      },
      py::arg("path"), py::arg("metadata"), py::arg("nodes"),
      "Write an .et file with chakrasim's writer: METADATA, then each of NODES");
}

}  // namespace chakrasim::python
