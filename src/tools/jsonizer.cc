#include "tools/jsonizer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/unknown_field_set.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/read_file.h"

namespace chakrasim::tools {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Json = nlohmann::ordered_json;

constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

// Accepts the standard and the URL-safe alphabets, padded or not, as protobuf's parsers do.
bool base64_decode(std::string_view text, std::string& out) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return false;
  out.clear();
  std::uint32_t bits = 0;
  int bit_count = 0;
  for (char c : text) {
    std::uint32_t sextet;
    if (c >= 'A' && c <= 'Z') sextet = static_cast<std::uint32_t>(c - 'A');
    else if (c >= 'a' && c <= 'z') sextet = static_cast<std::uint32_t>(c - 'a' + 26);
    else if (c >= '0' && c <= '9') sextet = static_cast<std::uint32_t>(c - '0' + 52);
    else if (c == '+' || c == '-') sextet = 62;
    else if (c == '/' || c == '_') sextet = 63;
    else return false;
    bits = (bits << 6) | sextet;
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      out += static_cast<char>((bits >> bit_count) & 0xff);
    }
  }
  return true;
}

// Python's repr of a finite number, which json.dumps prints: the shortest digits that read
// back as the same value (for a float field, the same float: json_format's ToShortestFloat),
// fixed notation for decimal exponents -4 .. 15 and "d.ddde+XX" outside, ".0" on whole numbers.
template <typename Floating>
std::string python_repr(Floating value) {
  std::array<char, 64> buf;
  const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), value, std::chars_format::scientific).ptr;
  std::string_view text(buf.data(), static_cast<std::size_t>(end - buf.data()));
  std::string out;
  if (text.front() == '-') {
    out += '-';
    text.remove_prefix(1);
  }
  const std::size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  std::string_view exponent_text = text.substr(e + 1);
  const bool negative_exponent = exponent_text.front() == '-';
  exponent_text.remove_prefix(1);  // to_chars always writes the exponent's sign
  int exponent = 0;
  std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);
  if (negative_exponent) exponent = -exponent;
  const auto n = static_cast<int>(digits.size());
  const int point = exponent + 1;  // the value is 0.DIGITS x 10^point
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out.append("0.").append(static_cast<std::size_t>(-point), '0').append(digits);
    } else if (point >= n) {
      out.append(digits).append(static_cast<std::size_t>(point - n), '0').append(".0");
    } else {
      const auto whole = static_cast<std::size_t>(point);
      out.append(digits, 0, whole).append(1, '.').append(digits, whole);
    }
    return out;
  }
  out += digits[0];
  if (n > 1) out.append(1, '.').append(digits, 1);
  fmt::format_to(std::back_inserter(out), "e{}{:02}", exponent < 0 ? '-' : '+', std::abs(exponent));
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
    else out_ += python_repr(value);
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
        const std::string& text = rep ? r->GetRepeatedStringReference(m, field, index, &scratch)
                                      : r->GetStringReference(m, field, &scratch);
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
      const char* short_escape = c == '\b' ? "\\b" : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : nullptr;
      if (short_escape != nullptr) {
        out_ += short_escape;
        ++i;
        continue;
      }
      std::uint32_t code_point = c;
      std::size_t length = 1;
      if (c >= 0x80) {
        length = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (length == 0 || i + length > text.size()) bad_utf8(field);
        code_point = c & (0x7fu >> length);
        for (std::size_t k = 1; k < length; ++k) {
          const auto next = static_cast<unsigned char>(text[i + k]);
          if ((next & 0xc0) != 0x80) bad_utf8(field);
          code_point = (code_point << 6) | (next & 0x3fu);
        }
        const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code_point < smallest[length] || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) {
          bad_utf8(field);
        }
      }
      if (code_point >= 0x10000) {
        const std::uint32_t v = code_point - 0x10000;
        out_ += fmt::format("\\u{:04x}\\u{:04x}", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
      } else {
        out_ += fmt::format("\\u{:04x}", code_point);
      }
      i += length;
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


// Where a value sits inside one message, as a chain of keys and indices ("attr[2].int64Val"),
// rendered only when an error needs it.
struct KeyPath {
  const KeyPath* parent = nullptr;
  std::string_view key;  // empty: an element of the parent array
  int index = -1;

  std::string render() const {
    std::string head = parent != nullptr ? parent->render() : std::string();
    if (key.empty()) return head + fmt::format("[{}]", index);
    return head.empty() ? std::string(key) : head + "." + std::string(key);
  }
};

// Fills messages from parsed JSON with protobuf's JSON mapping: a field by its json_name or its
// proto name; 64-bit integers as strings or numbers; floats as numbers or "NaN"/"Infinity";
// enums by name or number; null as "not given"; bytes and _unknownFields as base64.
class MessageReader {
 public:
  MessageReader(const std::string& source, std::string where) : source_(source), where_(std::move(where)) {}

  void read(const Json& json, Message& m, const KeyPath* path) const {
    const Descriptor* descriptor = m.GetDescriptor();
    if (!json.is_object()) bad(path, fmt::format("a JSON object (a {})", descriptor->name()), json);
    const Reflection* reflection = m.GetReflection();
    std::vector<const std::string*> given_as(static_cast<std::size_t>(descriptor->field_count()), nullptr);
    for (const auto& [key, value] : json.items()) {
      const KeyPath here{path, key};
      if (key == kUnknownFieldsKey) {
        std::string bytes;
        if (!value.is_string() || !base64_decode(value.get_ref<const std::string&>(), bytes) ||
            !reflection->MutableUnknownFields(&m)->ParseFromString(bytes)) {
          bad(&here, "the base64 of protobuf wire bytes (fields this schema does not know)", value);
        }
        continue;
      }
      const FieldDescriptor* field = field_named(descriptor, key);
      if (field == nullptr) {
        std::string valid;
        for (int i = 0; i < descriptor->field_count(); ++i) valid += descriptor->field(i)->json_name() + ", ";
        fail("{}: {}: unknown key \"{}\" in a {}; expected one of {}or {}", source_, where_, here.render(),
             descriptor->name(), valid, kUnknownFieldsKey);
      }
      const std::string*& earlier = given_as[static_cast<std::size_t>(field->index())];
      if (earlier != nullptr) {
        fail("{}: {}: key \"{}\": field {} is already given as \"{}\"", source_, where_, here.render(), field->name(), *earlier);
      }
      earlier = &key;
      if (value.is_null()) continue;
      if (const auto* oneof = field->containing_oneof(); oneof != nullptr && reflection->HasOneof(m, oneof)) {
        fail("{}: {}: key \"{}\": \"{}\" is already set, and a {} holds only one member of `{}`", source_, where_,
             here.render(), reflection->GetOneofFieldDescriptor(m, oneof)->json_name(), descriptor->name(), oneof->name());
      }
      if (!field->is_repeated()) {
        set_value(m, field, value, &here);
        continue;
      }
      if (!value.is_array()) bad(&here, "a JSON array", value);
      for (std::size_t i = 0; i < value.size(); ++i) {
        const KeyPath element{&here, {}, static_cast<int>(i)};
        set_value(m, field, value[i], &element);
      }
    }
  }

 private:
  static const FieldDescriptor* field_named(const Descriptor* descriptor, const std::string& key) {
    for (int i = 0; i < descriptor->field_count(); ++i) {
      const FieldDescriptor* field = descriptor->field(i);
      if (field->json_name() == key || field->name() == key) return field;
    }
    return nullptr;
  }

  [[noreturn]] void bad(const KeyPath* path, std::string_view expected, const Json& got) const {
    std::string shown = got.dump();
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    if (path == nullptr) fail("{}: {}: expected {}, got {}", source_, where_, expected, shown);
    fail("{}: {}: key \"{}\": expected {}, got {}", source_, where_, path->render(), expected, shown);
  }

  template <typename Int>
  Int integer(const Json& v, const KeyPath* path) const {
    constexpr bool wide = sizeof(Int) == 8;
    const std::string expected = fmt::format("{} {}-bit integer{}", std::is_signed_v<Int> ? "a signed" : "an unsigned",
                                             sizeof(Int) * 8, wide ? " (a string of digits, or a number)" : "");
    if (v.is_number_unsigned()) {
      if (const auto u = v.get<std::uint64_t>(); std::in_range<Int>(u)) return static_cast<Int>(u);
    } else if (v.is_number_integer()) {
      if (const auto s = v.get<std::int64_t>(); std::in_range<Int>(s)) return static_cast<Int>(s);
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      const double limit = std::ldexp(1.0, std::numeric_limits<Int>::digits);
      if (std::trunc(d) == d && d < limit && d >= (std::is_signed_v<Int> ? -limit : 0.0)) return static_cast<Int>(d);
    } else if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      Int parsed{};
      const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), parsed);
      if (!s.empty() && error == std::errc() && end == s.data() + s.size()) return parsed;
    }
    bad(path, expected, v);
  }

  double floating(const Json& v, const KeyPath* path) const {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (s == "Infinity") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
      double parsed = 0;
      const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), parsed);
      if (!s.empty() && error == std::errc() && end == s.data() + s.size()) return parsed;
    }
    bad(path, "a number (or \"NaN\", \"Infinity\", \"-Infinity\")", v);
  }

  // The float that printed as the text `d` was read from. Rounding that text to a double and
  // then to a float can, rarely, land on a neighbour; the float whose shortest text reads back
  // as `d` is the one that was written.
  float single(const Json& v, const KeyPath* path) const {
    const double d = floating(v, path);
    if (std::isnan(d)) return std::numeric_limits<float>::quiet_NaN();
    const double overflow = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);  // rounds to infinity
    if (std::isinf(d)) return d > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    if (std::abs(d) >= overflow) bad(path, "a number in the range of a 32-bit float", v);
    const float nearest = static_cast<float>(d);
    for (float candidate : {nearest, std::nextafter(nearest, -INFINITY), std::nextafter(nearest, INFINITY)}) {
      std::array<char, 32> buf;
      const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), candidate).ptr;
      double back = 0;
      std::from_chars(buf.data(), end, back);
      if (back == d) return candidate;
    }
    return nearest;
  }

  int enum_number(const FieldDescriptor* field, const Json& v, const KeyPath* path) const {
    const auto* type = field->enum_type();
    if (v.is_string()) {
      if (const auto* known = type->FindValueByName(v.get_ref<const std::string&>())) return known->number();
    } else if (v.is_number()) {
      return integer<std::int32_t>(v, path);  // proto3 enums are open: a newer value is kept
    }
    std::string names;
    for (int i = 0; i < type->value_count(); ++i) names += (i > 0 ? ", " : "") + type->value(i)->name();
    bad(path, fmt::format("a {} name ({}) or number", type->name(), names), v);
  }

  void set_value(Message& m, const FieldDescriptor* field, const Json& v, const KeyPath* path) const {
    const Reflection* r = m.GetReflection();
    const bool rep = field->is_repeated();
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: {
        const auto x = integer<std::int32_t>(v, path);
        rep ? r->AddInt32(&m, field, x) : r->SetInt32(&m, field, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT32: {
        const auto x = integer<std::uint32_t>(v, path);
        rep ? r->AddUInt32(&m, field, x) : r->SetUInt32(&m, field, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_INT64: {
        const auto x = integer<std::int64_t>(v, path);
        rep ? r->AddInt64(&m, field, x) : r->SetInt64(&m, field, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_UINT64: {
        const auto x = integer<std::uint64_t>(v, path);
        rep ? r->AddUInt64(&m, field, x) : r->SetUInt64(&m, field, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_DOUBLE: {
        const double x = floating(v, path);
        rep ? r->AddDouble(&m, field, x) : r->SetDouble(&m, field, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_FLOAT: {
        const float x = single(v, path);
        rep ? r->AddFloat(&m, field, x) : r->SetFloat(&m, field, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_BOOL: {
        if (!v.is_boolean()) bad(path, "true or false", v);
        rep ? r->AddBool(&m, field, v.get<bool>()) : r->SetBool(&m, field, v.get<bool>());
        break;
      }
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int x = enum_number(field, v, path);
        rep ? r->AddEnumValue(&m, field, x) : r->SetEnumValue(&m, field, x);
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        const bool bytes = field->type() == FieldDescriptor::TYPE_BYTES;
        std::string x;
        if (!v.is_string() || (bytes && !base64_decode(v.get_ref<const std::string&>(), x))) {
          bad(path, bytes ? "a base64 string" : "a string", v);
        }
        if (!bytes) x = v.get<std::string>();
        rep ? r->AddString(&m, field, std::move(x)) : r->SetString(&m, field, std::move(x));
        break;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        read(v, rep ? *r->AddMessage(&m, field) : *r->MutableMessage(&m, field), path);
        break;
    }
  }

  const std::string& source_;
  std::string where_;
};

// The JSON values in `text`, one after another (the compat form is several objects back to
// back). Malformed JSON fails with the file's line and column.
std::vector<Json> parse_values(std::string_view text, const std::string& source) {
  std::istringstream in{std::string(text)};
  std::vector<Json> values;
  while (true) {
    in >> std::ws;
    if (in.peek() == std::char_traits<char>::eof()) break;
    const auto start = static_cast<std::size_t>(in.tellg());
    try {
      in >> values.emplace_back();
    } catch (const Json::parse_error& e) {
      const std::size_t at = std::min(text.size(), start + (e.byte > 0 ? e.byte - 1 : 0));
      const std::size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
      const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
      const std::size_t column = line_start == std::string_view::npos ? at + 1 : at - line_start;
      std::string reason = e.what();
      if (const std::size_t colon = reason.find(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
      fail("{}: line {}, column {}: not valid JSON: {}", source, line, column, reason);
    }
  }
  return values;
}

std::string node_where(const Json& node, std::size_t index) {
  const auto id = node.is_object() ? node.find("id") : node.end();
  if (id == node.end()) return fmt::format("node {} (id 0)", index);
  return fmt::format("node {} (id {})", index, id->is_string() ? id->get<std::string>() : id->dump());
}

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

chakra::Trace trace_from_json(std::string_view json, const std::string& source) {
  std::vector<Json> values = parse_values(json, source);
  if (values.empty()) {
    fail("{}: the file holds no JSON; expected {{\"metadata\": ..., \"nodes\": [...]}} as `chakra jsonize` writes "
         "it, or the GlobalMetadata and Node objects back to back (`--compat`)",
         source);
  }
  chakra::Trace trace;
  const Json& first = values.front();
  const bool document = first.is_object() && (first.contains("metadata") || first.contains("nodes"));
  if (!document) {  // the compat form: the GlobalMetadata, then one object per node
    MessageReader(source, "metadata (the first JSON object)").read(first, trace.metadata, nullptr);
    trace.nodes.resize(values.size() - 1);
    for (std::size_t i = 1; i < values.size(); ++i) {
      MessageReader(source, node_where(values[i], i - 1)).read(values[i], trace.nodes[i - 1], nullptr);
    }
    return trace;
  }
  if (values.size() > 1) {
    fail("{}: more JSON after the document's closing brace; expected one document {{\"metadata\": ..., \"nodes\": [...]}}",
         source);
  }
  for (const auto& [key, value] : first.items()) {
    if (value.is_null()) continue;  // as protobuf reads null: not given
    if (key == "metadata") {
      MessageReader(source, "metadata").read(value, trace.metadata, nullptr);
    } else if (key == "nodes") {
      if (!value.is_array()) fail("{}: key \"nodes\": expected a JSON array of Node objects, got {}", source, value.type_name());
      trace.nodes.resize(value.size());
      for (std::size_t i = 0; i < value.size(); ++i) {
        MessageReader(source, node_where(value[i], i)).read(value[i], trace.nodes[i], nullptr);
      }
    } else {
      fail("{}: unknown top-level key \"{}\"; expected \"metadata\" and \"nodes\"", source, key);
    }
  }
  return trace;
}

void jsonize_file(const std::string& et_path, const std::string& json_path, JsonForm form) {
  const std::string json = trace_to_json(chakra::read_trace(et_path), form);
  std::ofstream out(json_path, std::ios::binary | std::ios::trunc);
  if (!out) fail("{}: cannot create the JSON file (does the directory exist?)", json_path);
  out.write(json.data(), static_cast<std::streamsize>(json.size()));
  if (!out) fail("{}: error while writing the JSON file", json_path);
}

void dejsonize_file(const std::string& json_path, const std::string& et_path) {
  const std::string json = read_file(json_path, "JSON trace", "a JSON file written by `chakrasim chakra jsonize`");
  chakra::write_trace(et_path, trace_from_json(json, json_path));
}

}  // namespace chakrasim::tools
