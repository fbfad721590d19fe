#include "tools/jsonizer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <istream>
#include <limits>
#include <optional>
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

// Python's repr of a finite double, which json.dumps prints: the shortest digits that read back
// as the same value, fixed notation for decimal exponents -4 .. 15 and "d.ddde+XX" outside,
// ".0" on whole numbers.
std::string python_repr(double value) {
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
    else if constexpr (std::is_same_v<Floating, float>) out_ += python_repr(shortest_float(value));
    else out_ += python_repr(value);
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


// One scalar JSON value as the SAX parser hands it over. `text` is a string's value, or a
// float's own text (so that a float field reads the float that was printed, not the double).
struct Scalar {
  enum class Kind { kNull, kBool, kSigned, kUnsigned, kFloat, kString } kind = Kind::kNull;
  bool boolean = false;
  std::int64_t signed_value = 0;
  std::uint64_t unsigned_value = 0;
  double floating = 0;
  std::string_view text{};

  std::string shown() const {
    switch (kind) {
      case Kind::kNull: return "null";
      case Kind::kBool: return boolean ? "true" : "false";
      case Kind::kSigned: return std::to_string(signed_value);
      case Kind::kUnsigned: return std::to_string(unsigned_value);
      case Kind::kFloat: return std::string(text);
      case Kind::kString: break;
    }
    std::string quoted = Json(std::string(text)).dump();
    return quoted.size() > 60 ? quoted.substr(0, 57) + "..." : quoted;
  }
};

template <typename Number>
bool parse_whole(std::string_view text, Number& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

// Integers as protobuf's JSON parser takes them: a number (an integral float too) or a string
// of digits, in range.
template <typename Int>
std::optional<Int> to_integer(const Scalar& v) {
  using Kind = Scalar::Kind;
  Int parsed{};
  if (v.kind == Kind::kUnsigned && std::in_range<Int>(v.unsigned_value)) return static_cast<Int>(v.unsigned_value);
  if (v.kind == Kind::kSigned && std::in_range<Int>(v.signed_value)) return static_cast<Int>(v.signed_value);
  if (v.kind == Kind::kFloat) {
    const double limit = std::ldexp(1.0, std::numeric_limits<Int>::digits);
    const double d = v.floating;
    if (std::trunc(d) == d && d < limit && d >= (std::is_signed_v<Int> ? -limit : 0.0)) return static_cast<Int>(d);
  }
  if (v.kind == Kind::kString && parse_whole(v.text, parsed)) return parsed;
  return std::nullopt;
}

// Doubles and floats: a number, a numeric string, or "NaN", "Infinity", "-Infinity". A float is
// read from the number's text, so it is the float whose shortest text was printed.
template <typename Floating>
std::optional<Floating> to_floating(const Scalar& v) {
  using Kind = Scalar::Kind;
  if (v.kind == Kind::kSigned) return static_cast<Floating>(v.signed_value);
  if (v.kind == Kind::kUnsigned) return static_cast<Floating>(v.unsigned_value);
  if (v.kind != Kind::kFloat && v.kind != Kind::kString) return std::nullopt;
  if (v.text == "NaN") return std::numeric_limits<Floating>::quiet_NaN();
  if (v.text == "Infinity") return std::numeric_limits<Floating>::infinity();
  if (v.text == "-Infinity") return -std::numeric_limits<Floating>::infinity();
  Floating parsed{};
  if (parse_whole(v.text, parsed)) return parsed;  // out of range for the type fails here
  return std::nullopt;
}

// What a field takes, for error messages.
std::string expected_for(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return "a signed 32-bit integer";
    case FieldDescriptor::CPPTYPE_UINT32: return "an unsigned 32-bit integer";
    case FieldDescriptor::CPPTYPE_INT64: return "a signed 64-bit integer (a string of digits, or a number)";
    case FieldDescriptor::CPPTYPE_UINT64: return "an unsigned 64-bit integer (a string of digits, or a number)";
    case FieldDescriptor::CPPTYPE_DOUBLE: return "a number (or \"NaN\", \"Infinity\", \"-Infinity\")";
    case FieldDescriptor::CPPTYPE_FLOAT: return "a number in the range of a 32-bit float (or \"NaN\", \"Infinity\", \"-Infinity\")";
    case FieldDescriptor::CPPTYPE_BOOL: return "true or false";
    case FieldDescriptor::CPPTYPE_STRING: return field->type() == FieldDescriptor::TYPE_BYTES ? "a base64 string" : "a string";
    case FieldDescriptor::CPPTYPE_MESSAGE: return fmt::format("a JSON object (a {})", field->message_type()->name());
    case FieldDescriptor::CPPTYPE_ENUM: break;
  }
  std::string names;
  const auto* type = field->enum_type();
  for (int i = 0; i < type->value_count(); ++i) names += (i > 0 ? ", " : "") + type->value(i)->name();
  return fmt::format("a {} name ({}) or number", type->name(), names);
}

// Sets a singular field or appends to a repeated one, through the Set/Add pair of its type.
template <typename T, typename Value>
bool store(Message& m, const FieldDescriptor* field, const std::optional<Value>& value,
           void (Reflection::*set)(Message*, const FieldDescriptor*, T) const,
           void (Reflection::*add)(Message*, const FieldDescriptor*, T) const) {
  if (!value) return false;
  (m.GetReflection()->*(field->is_repeated() ? add : set))(&m, field, *value);
  return true;
}

// Sets `field` from a scalar with protobuf's JSON mapping; false if the scalar does not fit.
bool set_scalar(Message& m, const FieldDescriptor* field, const Scalar& v) {
  using R = Reflection;
  using Kind = Scalar::Kind;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return store(m, field, to_integer<std::int32_t>(v), &R::SetInt32, &R::AddInt32);
    case FieldDescriptor::CPPTYPE_UINT32: return store(m, field, to_integer<std::uint32_t>(v), &R::SetUInt32, &R::AddUInt32);
    case FieldDescriptor::CPPTYPE_INT64: return store(m, field, to_integer<std::int64_t>(v), &R::SetInt64, &R::AddInt64);
    case FieldDescriptor::CPPTYPE_UINT64: return store(m, field, to_integer<std::uint64_t>(v), &R::SetUInt64, &R::AddUInt64);
    case FieldDescriptor::CPPTYPE_DOUBLE: return store(m, field, to_floating<double>(v), &R::SetDouble, &R::AddDouble);
    case FieldDescriptor::CPPTYPE_FLOAT: return store(m, field, to_floating<float>(v), &R::SetFloat, &R::AddFloat);
    case FieldDescriptor::CPPTYPE_BOOL:
      return store(m, field, v.kind == Kind::kBool ? std::optional(v.boolean) : std::nullopt, &R::SetBool, &R::AddBool);
    case FieldDescriptor::CPPTYPE_ENUM: {
      std::optional<int> number;
      if (v.kind == Kind::kString) {
        if (const auto* known = field->enum_type()->FindValueByName(std::string(v.text))) number = known->number();
      } else if (v.kind != Kind::kFloat) {
        number = to_integer<std::int32_t>(v);  // proto3 enums are open: a newer value is kept
      }
      return store(m, field, number, &R::SetEnumValue, &R::AddEnumValue);
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::optional<std::string> value;
      std::string decoded;
      if (v.kind == Kind::kString && field->type() != FieldDescriptor::TYPE_BYTES) value = std::string(v.text);
      else if (v.kind == Kind::kString && base64_decode(v.text, decoded)) value = std::move(decoded);
      return store(m, field, value, &R::SetString, &R::AddString);
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: return false;
  }
  return false;
}

const FieldDescriptor* field_named(const Descriptor* descriptor, const std::string& key) {
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->json_name() == key || field->name() == key) return field;
  }
  return nullptr;
}

// A std::istream over text already in memory: nlohmann's stream input stops right after one
// value, which is how the compat form's back-to-back objects are read one by one.
class ViewBuffer : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // only ever read
    setg(begin, begin, begin + text.size());
  }

 protected:
  pos_type seekoff(off_type offset, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    if (offset != 0 || dir != std::ios_base::cur) return pos_type(off_type(-1));
    return pos_type(gptr() - eback());
  }
};

// Builds the trace straight from nlohmann's SAX events, with protobuf's JSON mapping (a field by
// its json_name or proto name; null as "not given"; _unknownFields as base64 wire bytes), so
// that no JSON tree is held: memory stays that of the trace. A stack of frames follows the
// nesting; each knows the key it is filling, which gives error paths like "attr[2].int64Val".
class TraceReader {
 public:
  TraceReader(const std::string& source, std::string_view text, chakra::Trace& trace)
      : source_(source), text_(text), trace_(trace) {}

  void begin_value(std::size_t offset) {
    value_start_ = offset;
    ++values_;
  }
  std::size_t values() const { return values_; }

  // The SAX interface (see nlohmann::json_sax).
  bool null() { return scalar({}); }
  bool boolean(bool b) { return scalar({.kind = Scalar::Kind::kBool, .boolean = b}); }
  bool number_integer(std::int64_t i) { return scalar({.kind = Scalar::Kind::kSigned, .signed_value = i}); }
  bool number_unsigned(std::uint64_t u) { return scalar({.kind = Scalar::Kind::kUnsigned, .unsigned_value = u}); }
  bool number_float(double d, const std::string& text) { return scalar({.kind = Scalar::Kind::kFloat, .floating = d, .text = text}); }
  bool string(std::string& s) { return scalar({.kind = Scalar::Kind::kString, .text = s}); }
  bool binary(Json::binary_t&) { return true; }  // JSON text has no binary values

  bool start_object(std::size_t) {
    if (stack_.empty()) {  // a value at the top of the file
      if (form_ == Form::kDocument) fail("{}: more JSON after the document's closing brace; expected one {}", source_, kDocumentShape);
      if (values_ == 1) stack_.push_back({.kind = Frame::Kind::kFirst});  // the metadata, or the whole document
      else push_message(trace_.nodes.emplace_back(), static_cast<long>(trace_.nodes.size()) - 1);
      return true;
    }
    Frame& top = stack_.back();
    if (top.kind == Frame::Kind::kDocument) {
      if (top.key == "metadata" && top.element < 0) push_message(trace_.metadata, -1);
      else if (top.key == "nodes" && top.element >= 0) push_message(trace_.nodes.emplace_back(), top.element);
      else bad_document_value("an object");
      return true;
    }
    const FieldDescriptor* field = field_for_value(top, nullptr);
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) bad(expected_for(field), "an object");
    const Reflection* r = top.message->GetReflection();
    Message& child = field->is_repeated() ? *r->AddMessage(top.message, field) : *r->MutableMessage(top.message, field);
    stack_.push_back({.kind = Frame::Kind::kMessage, .message = &child});
    return true;
  }

  bool key(std::string& key) {
    Frame& top = stack_.back();
    if (top.kind == Frame::Kind::kFirst) {  // the first key tells the forms apart
      const bool document = key == "metadata" || key == "nodes";
      form_ = document ? Form::kDocument : Form::kCompat;
      top = document ? Frame{.kind = Frame::Kind::kDocument} : Frame{.kind = Frame::Kind::kMessage, .message = &trace_.metadata};
    }
    top.key = key;
    top.element = -1;
    top.field = nullptr;
    if (top.kind == Frame::Kind::kDocument) {
      const std::uint64_t bit = key == "metadata" ? 1 : key == "nodes" ? 2 : 0;
      if (bit == 0) fail("{}: unknown top-level key \"{}\"; expected \"metadata\" and \"nodes\"", source_, key);
      if ((top.given & bit) != 0) fail("{}: top-level key \"{}\" is given twice", source_, key);
      top.given |= bit;
      return true;
    }
    if (key == kUnknownFieldsKey) return true;
    const Descriptor* descriptor = top.message->GetDescriptor();
    top.field = field_named(descriptor, key);
    if (top.field == nullptr) {
      std::string valid;
      for (int i = 0; i < descriptor->field_count(); ++i) valid += descriptor->field(i)->json_name() + ", ";
      fail("{}: {}: unknown key \"{}\" in a {}; expected one of {}or {}", source_, where(), path(), descriptor->name(),
           valid, kUnknownFieldsKey);
    }
    const std::uint64_t bit = std::uint64_t{1} << (top.field->index() % 64);
    if ((top.given & bit) != 0) fail("{}: {}: key \"{}\": field {} is given twice", source_, where(), path(), top.field->name());
    top.given |= bit;
    return true;
  }

  bool end_object() {
    if (stack_.back().kind == Frame::Kind::kFirst) form_ = Form::kCompat;  // "{}": an empty GlobalMetadata
    stack_.pop_back();
    if (!stack_.empty() && stack_.back().element >= 0) ++stack_.back().element;
    return true;
  }

  bool start_array(std::size_t) {
    if (stack_.empty()) bad_top_level("an array");
    Frame& top = stack_.back();
    if (top.kind == Frame::Kind::kDocument) {
      if (top.key != "nodes" || top.element >= 0) bad_document_value("an array");
    } else if (const FieldDescriptor* field = top.field; field == nullptr || !field->is_repeated() || top.element >= 0) {
      bad(field == nullptr ? std::string(kUnknownExpected) : expected_for(field), "an array");
    }
    top.element = 0;
    return true;
  }

  bool end_array() {
    stack_.back().element = -1;
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const Json::exception& e) {
    const std::size_t at = std::min(text_.size(), value_start_ + (position > 0 ? position - 1 : 0));
    const std::size_t line_start = at == 0 ? std::string_view::npos : text_.rfind('\n', at - 1);
    const auto line = 1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    const std::size_t column = line_start == std::string_view::npos ? at + 1 : at - line_start;
    std::string reason = e.what();
    if (const std::size_t colon = reason.find(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
    fail("{}: line {}, column {}: not valid JSON: {}", source_, line, column, reason);
  }

 private:
  static constexpr std::string_view kDocumentShape = "document {\"metadata\": {...}, \"nodes\": [{...}, ...]}";
  static constexpr std::string_view kUnknownExpected = "the base64 of protobuf wire bytes (fields this schema does not know)";

  struct Frame {
    enum class Kind { kFirst, kDocument, kMessage } kind;
    Message* message = nullptr;               // the message being filled (kMessage)
    const FieldDescriptor* field = nullptr;   // the field the current key names; null for _unknownFields
    std::string key{};                        // the current key
    long element = -1;                        // inside the current key's array: the element's index
    std::uint64_t given = 0;                  // one bit per field already given, to catch repeats
  };
  enum class Form { kUnknown, kDocument, kCompat };

  void push_message(Message& m, long node) {
    node_ = node;
    stack_.push_back({.kind = Frame::Kind::kMessage, .message = &m});
  }

  bool scalar(const Scalar& v) {
    if (stack_.empty()) bad_top_level(v.shown());
    Frame& top = stack_.back();
    if (top.kind == Frame::Kind::kDocument) {
      if (v.kind != Scalar::Kind::kNull || top.element >= 0) bad_document_value(v.shown());
      return true;  // null: not given
    }
    if (top.field == nullptr) {  // _unknownFields
      std::string bytes;
      if (v.kind != Scalar::Kind::kString || !base64_decode(v.text, bytes) ||
          !top.message->GetReflection()->MutableUnknownFields(top.message)->ParseFromString(bytes)) {
        bad(std::string(kUnknownExpected), v.shown());
      }
      return true;
    }
    if (v.kind == Scalar::Kind::kNull && top.element < 0) return true;  // as protobuf reads null: not given
    const FieldDescriptor* field = field_for_value(top, &v);
    if (!set_scalar(*top.message, field, v)) bad(expected_for(field), v.shown());
    if (top.element >= 0) ++top.element;
    return true;
  }

  // The field a value that starts now (`scalar`, or an object when null) belongs to: a repeated
  // field takes only an array, and a oneof only one member.
  const FieldDescriptor* field_for_value(const Frame& top, const Scalar* scalar) const {
    const FieldDescriptor* field = top.field;
    auto got = [&] { return scalar != nullptr ? scalar->shown() : std::string("an object"); };
    if (field == nullptr) bad(std::string(kUnknownExpected), got());
    if (field->is_repeated() && top.element < 0) bad("a JSON array", got());
    const Reflection* r = top.message->GetReflection();
    if (const auto* oneof = field->containing_oneof(); oneof != nullptr && r->HasOneof(*top.message, oneof)) {
      fail("{}: {}: key \"{}\": \"{}\" is already set, and a {} holds only one member of `{}`", source_, where(), path(),
           r->GetOneofFieldDescriptor(*top.message, oneof)->json_name(), top.message->GetDescriptor()->name(),
           oneof->name());
    }
    return field;
  }

  // "metadata", or "node 3 (id 17)" once the node's id has been read.
  std::string where() const {
    if (node_ < 0) return form_ == Form::kCompat ? "metadata (the first JSON object)" : "metadata";
    const chakra::Node& node = trace_.nodes[static_cast<std::size_t>(node_)];
    return node.id() != 0 ? fmt::format("node {} (id {})", node_, node.id()) : fmt::format("node {}", node_);
  }

  // The key path from the node or metadata down to the current value, e.g. "attr[2].int64Val".
  std::string path() const {
    std::string out;
    for (const Frame& frame : stack_) {
      if (frame.kind != Frame::Kind::kMessage) continue;
      if (frame.key.empty()) break;
      if (!out.empty()) out += '.';
      out += frame.key;
      if (frame.element >= 0) out += fmt::format("[{}]", frame.element);
    }
    return out;
  }

  [[noreturn]] void bad(const std::string& expected, const std::string& got) const {
    const std::string at = path();
    if (at.empty()) fail("{}: {}: expected {}, got {}", source_, where(), expected, got);
    fail("{}: {}: key \"{}\": expected {}, got {}", source_, where(), at, expected, got);
  }

  [[noreturn]] void bad_top_level(const std::string& got) const {
    if (values_ == 1) fail("{}: expected a JSON object (the {} or the GlobalMetadata), got {}", source_, kDocumentShape, got);
    if (form_ == Form::kDocument) fail("{}: more JSON after the document's closing brace; expected one {}", source_, kDocumentShape);
    fail("{}: node {}: expected a JSON object (a Node), got {}", source_, trace_.nodes.size(), got);
  }

  [[noreturn]] void bad_document_value(const std::string& got) const {
    const Frame& top = stack_.back();
    if (top.key == "metadata") fail("{}: key \"metadata\": expected a JSON object (a GlobalMetadata), got {}", source_, got);
    if (top.element < 0) fail("{}: key \"nodes\": expected a JSON array of Node objects, got {}", source_, got);
    fail("{}: nodes[{}]: expected a JSON object (a Node), got {}", source_, top.element, got);
  }

  const std::string& source_;
  std::string_view text_;
  chakra::Trace& trace_;
  std::vector<Frame> stack_;
  Form form_ = Form::kUnknown;
  std::size_t values_ = 0;       // top-level values begun
  std::size_t value_start_ = 0;  // byte offset of the current one
  long node_ = -1;               // the node being read; -1: the metadata
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

chakra::Trace trace_from_json(std::string_view json, const std::string& source) {
  chakra::Trace trace;
  TraceReader reader(source, json, trace);
  ViewBuffer buffer(json);
  std::istream in(&buffer);
  while (true) {
    in >> std::ws;
    if (in.peek() == std::char_traits<char>::eof()) break;
    reader.begin_value(static_cast<std::size_t>(in.tellg()));
    Json::sax_parse(in, &reader, Json::input_format_t::json, /*strict=*/false);
  }
  if (reader.values() == 0) {
    fail("{}: the file holds no JSON; expected {{\"metadata\": ..., \"nodes\": [...]}} as `chakra jsonize` writes "
         "it, or the GlobalMetadata and Node objects back to back (`--compat`)",
         source);
  }
  return trace;
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

void dejsonize_file(const std::string& json_path, const std::string& et_path) {
  const std::string json = read_file(json_path, "JSON trace", "a JSON file written by `chakrasim chakra jsonize`");
  chakra::write_trace(et_path, trace_from_json(json, json_path));
}

}  // namespace chakrasim::tools
