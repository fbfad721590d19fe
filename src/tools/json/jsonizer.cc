// ET -> JSON: `chakra jsonize` (the reader, `chakra dejsonize`, is dejsonizer.cc).
#include "tools/json/jsonizer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/unknown_field_set.h>

#include "core/error.h"
#include "tools/common/text_format.h"

namespace chakrasim::tools {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr std::string_view kBase64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Standard alphabet with '=' padding, as Python's base64.b64encode (json_format's bytes).
std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      group = (group << 8) | (k < n ? static_cast<std::uint8_t>(bytes[i + k]) : 0u);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out += k <= n ? kBase64Alphabet[(group >> (18 - 6 * k)) & 0x3f] : '=';
    }
  }
  return out;
}

// Writes messages as Python's json_format.MessageToJson (indent 2) does: fields in number
// order under their json_name, default values left out, ensure_ascii escaping.
class PythonStyleWriter {
 public:
  explicit PythonStyleWriter(std::string& out) : out_(out) {}

  // `node_index` names the message in a UTF-8 error: -1 for the metadata.
  void message(const Message& m, int depth, long node_index) {
    node_index_ = node_index;
    write_message(m, depth);
  }

 private:
  void newline(int depth) {
    out_ += '\n';
    out_.append(2 * static_cast<std::size_t>(depth), ' ');
  }

  void write_message(const Message& m, int depth) {
    const Reflection* reflection = m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    reflection->ListFields(m, &fields);  // set fields only, in field-number order
    const auto& unknown = reflection->GetUnknownFields(m);
    if (fields.empty() && unknown.empty()) {
      out_ += "{}";
      return;
    }
    out_ += '{';
    bool first = true;
    auto key = [&](std::string_view name) {
      if (!first) out_ += ',';
      first = false;
      newline(depth + 1);
      write_string(name);
      out_ += ": ";
    };
    for (const FieldDescriptor* field : fields) {
      key(field->json_name());
      if (!field->is_repeated()) {
        write_value(m, field, -1, depth + 1);
        continue;
      }
      out_ += '[';
      const int count = reflection->FieldSize(m, field);
      for (int i = 0; i < count; ++i) {
        if (i > 0) out_ += ',';
        newline(depth + 2);
        write_value(m, field, i, depth + 2);
      }
      newline(depth + 1);
      out_ += ']';
    }
    if (!unknown.empty()) {
      std::string bytes;
      unknown.SerializeToString(&bytes);
      key(kUnknownFieldsKey);
      write_string(base64_encode(bytes));
    }
    newline(depth);
    out_ += '}';
  }

  template <typename Floating>
  void write_floating(Floating value) {
    if (std::isnan(value)) out_ += "\"NaN\"";
    else if (std::isinf(value)) out_ += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    else if constexpr (std::is_same_v<Floating, float>) out_ += python_float_repr(shortest_float(value));
    else out_ += python_float_repr(value);
  }

  // json_format's ToShortestFloat: the value rounded to the fewest significant digits, from 6
  // up, that give the float back when read as a double and then rounded to a float. That
  // differs from the shortest text that reads back as the float directly for one positive float
  // and its negative (0x15ae43fd: 7.0385307e-26, not 7.038531e-26), and it starts at 6 digits
  // (1.4013e-45, not 1e-45); dejsonize reads any of them. Checked against Python on 200,000
  // random floats and doubles: the same text for every one.
  static double shortest_float(float value) {
    double rounded = value;
    for (int digits = 6; digits <= 9; ++digits) {
      const std::string text = fmt::format("{:.{}g}", static_cast<double>(value), digits);
      std::from_chars(text.data(), text.data() + text.size(), rounded);
      if (rounds_to(rounded, value)) break;
    }
    return rounded;
  }

  // Whether the double rounds to the float (to nearest, as Python's struct.pack('f') does).
  static bool rounds_to(double d, float f) {
    const double largest = std::numeric_limits<float>::max();
    if (std::abs(d) <= largest) return static_cast<float>(d) == f;
    const double halfway_to_infinity = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
    return std::abs(f) == largest && (d > 0) == (f > 0) && std::abs(d) < halfway_to_infinity;
  }

  // One value of `field`: the singular one (index -1) or element `index` of a repeated one.
  void write_value(const Message& m, const FieldDescriptor* field, int index, int depth) {
    const Reflection* r = m.GetReflection();
    const bool rep = index >= 0;
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        out_ += std::to_string(rep ? r->GetRepeatedInt32(m, field, index) : r->GetInt32(m, field));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        out_ += std::to_string(rep ? r->GetRepeatedUInt32(m, field, index) : r->GetUInt32(m, field));
        break;
      case FieldDescriptor::CPPTYPE_INT64:  // 64-bit integers are strings in canonical JSON
        write_string(std::to_string(rep ? r->GetRepeatedInt64(m, field, index) : r->GetInt64(m, field)));
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        write_string(std::to_string(rep ? r->GetRepeatedUInt64(m, field, index) : r->GetUInt64(m, field)));
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        write_floating(rep ? r->GetRepeatedDouble(m, field, index) : r->GetDouble(m, field));
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        write_floating(rep ? r->GetRepeatedFloat(m, field, index) : r->GetFloat(m, field));
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        out_ += (rep ? r->GetRepeatedBool(m, field, index) : r->GetBool(m, field)) ? "true" : "false";
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int number = rep ? r->GetRepeatedEnumValue(m, field, index) : r->GetEnumValue(m, field);
        const auto* known = field->enum_type()->FindValueByNumber(number);
        if (known != nullptr) write_string(known->name());
        else out_ += std::to_string(number);  // a newer schema's value: its number, as protobuf does
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& text =
            rep ? r->GetRepeatedStringReference(m, field, index, &scratch) : r->GetStringReference(m, field, &scratch);
        if (field->type() == FieldDescriptor::TYPE_BYTES) write_string(base64_encode(text));
        else write_string(text, field);
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        write_message(rep ? r->GetRepeatedMessage(m, field, index) : r->GetMessage(m, field), depth);
        break;
    }
  }

  // A JSON string with json.dumps' ensure_ascii escaping: \" \\ \b \f \n \r \t, and every other
  // character outside ' '..'~' as \uXXXX (lowercase hex; a surrogate pair above U+FFFF).
  void write_string(std::string_view text, const FieldDescriptor* field = nullptr) {
    out_ += '"';
    for (std::size_t i = 0; i < text.size();) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x20 && c < 0x7f) {
        if (c == '"' || c == '\\') out_ += '\\';
        out_ += static_cast<char>(c);
        ++i;
        continue;
      }
      const char* short_escape = c == '\b'   ? "\\b"
                                 : c == '\f' ? "\\f"
                                 : c == '\n' ? "\\n"
                                 : c == '\r' ? "\\r"
                                 : c == '\t' ? "\\t"
                                             : nullptr;
      if (short_escape != nullptr) {
        out_ += short_escape;
        ++i;
        continue;
      }
      const std::optional<Utf8Char> character = decode_utf8(text, i);
      if (!character) bad_utf8(field);
      const std::uint32_t code_point = character->code_point;
      if (code_point >= 0x10000) {
        const std::uint32_t v = code_point - 0x10000;
        out_ += fmt::format("\\u{:04x}\\u{:04x}", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
      } else {
        out_ += fmt::format("\\u{:04x}", code_point);
      }
      i += character->length;
    }
    out_ += '"';
  }

  [[noreturn]] void bad_utf8(const FieldDescriptor* field) const {
    fail("{}: string field {} is not valid UTF-8 (protobuf strings must be)",
         node_index_ < 0 ? std::string("metadata") : fmt::format("node {}", node_index_),
         field != nullptr ? field->full_name() : std::string("?"));
  }

  std::string& out_;
  long node_index_ = -1;
};

}  // namespace

std::string trace_to_json(const chakra::Trace& trace, JsonForm form) {
  std::string out;
  PythonStyleWriter writer(out);
  if (form == JsonForm::kCompat) {
    writer.message(trace.metadata, 0, -1);
    for (std::size_t i = 0; i < trace.nodes.size(); ++i) writer.message(trace.nodes[i], 0, static_cast<long>(i));
    return out;
  }
  out += "{\n  \"metadata\": ";
  writer.message(trace.metadata, 1, -1);
  out += ",\n  \"nodes\": [";
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    writer.message(trace.nodes[i], 2, static_cast<long>(i));
  }
  out += trace.nodes.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

void jsonize_file(const std::string& et_path, const std::string& json_path, JsonForm form) {
  const chakra::Trace trace = chakra::read_trace(et_path);
  std::string json;
  try {
    json = trace_to_json(trace, form);
  } catch (const Error& e) {
    fail("{}: {}", et_path, e.what());
  }
  std::ofstream out(json_path, std::ios::binary | std::ios::trunc);
  if (!out) fail("{}: cannot create the JSON file (does the directory exist?)", json_path);
  out.write(json.data(), static_cast<std::streamsize>(json.size()));
  if (!out) fail("{}: error while writing the JSON file", json_path);
}

}  // namespace chakrasim::tools
