// JSON -> ET: `chakra dejsonize` reads either form `chakra jsonize` writes (jsonizer.cc).
#include "tools/json/jsonizer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
#include "core/json_input.h"
#include "core/parse_number.h"
#include "core/read_file.h"
#include "tools/common/text_format.h"

namespace chakrasim::tools {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Json = nlohmann::ordered_json;

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
    return json_excerpt(Json(std::string(text)));
  }
};

// Integers as protobuf's JSON parser takes them: a number (an integral float too) or a string
// of digits, in range.
template <typename Int>
std::optional<Int> to_integer(const Scalar& v) {
  using Kind = Scalar::Kind;
  if (v.kind == Kind::kUnsigned && std::in_range<Int>(v.unsigned_value)) return static_cast<Int>(v.unsigned_value);
  if (v.kind == Kind::kSigned && std::in_range<Int>(v.signed_value)) return static_cast<Int>(v.signed_value);
  if (v.kind == Kind::kFloat) {
    const double limit = std::ldexp(1.0, std::numeric_limits<Int>::digits);
    const double d = v.floating;
    if (std::trunc(d) == d && d < limit && d >= (std::is_signed_v<Int> ? -limit : 0.0)) return static_cast<Int>(d);
  }
  if (v.kind == Kind::kString) return parse_number<Int>(v.text);
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
  return parse_number<Floating>(v.text);  // out of range for the type gives nothing
}

// What a field takes, for error messages.
std::string expected_for(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return "a signed 32-bit integer";
    case FieldDescriptor::CPPTYPE_UINT32: return "an unsigned 32-bit integer";
    case FieldDescriptor::CPPTYPE_INT64: return "a signed 64-bit integer (a string of digits, or a number)";
    case FieldDescriptor::CPPTYPE_UINT64: return "an unsigned 64-bit integer (a string of digits, or a number)";
    case FieldDescriptor::CPPTYPE_DOUBLE: return "a number (or \"NaN\", \"Infinity\", \"-Infinity\")";
    case FieldDescriptor::CPPTYPE_FLOAT:
      return "a number in the range of a 32-bit float (or \"NaN\", \"Infinity\", \"-Infinity\")";
    case FieldDescriptor::CPPTYPE_BOOL: return "true or false";
    case FieldDescriptor::CPPTYPE_STRING:
      return field->type() == FieldDescriptor::TYPE_BYTES ? "a base64 string" : "a string";
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
    case FieldDescriptor::CPPTYPE_INT32:
      return store(m, field, to_integer<std::int32_t>(v), &R::SetInt32, &R::AddInt32);
    case FieldDescriptor::CPPTYPE_UINT32:
      return store(m, field, to_integer<std::uint32_t>(v), &R::SetUInt32, &R::AddUInt32);
    case FieldDescriptor::CPPTYPE_INT64:
      return store(m, field, to_integer<std::int64_t>(v), &R::SetInt64, &R::AddInt64);
    case FieldDescriptor::CPPTYPE_UINT64:
      return store(m, field, to_integer<std::uint64_t>(v), &R::SetUInt64, &R::AddUInt64);
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
  bool number_float(double d, const std::string& text) {
    return scalar({.kind = Scalar::Kind::kFloat, .floating = d, .text = text});
  }
  bool string(std::string& s) { return scalar({.kind = Scalar::Kind::kString, .text = s}); }
  bool binary(Json::binary_t&) { return true; }  // JSON text has no binary values

  bool start_object(std::size_t) {
    if (stack_.empty()) {  // a value at the top of the file
      if (form_ == Form::kDocument)
        fail("{}: more JSON after the document's closing brace; expected one {}", source_, kDocumentShape);
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
      top = document ? Frame{.kind = Frame::Kind::kDocument}
                     : Frame{.kind = Frame::Kind::kMessage, .message = &trace_.metadata};
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
    if ((top.given & bit) != 0)
      fail("{}: {}: key \"{}\": field {} is given twice", source_, where(), path(), top.field->name());
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
    } else if (const FieldDescriptor* field = top.field;
               field == nullptr || !field->is_repeated() || top.element >= 0) {
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
    fail("{}: line {}, column {}: not valid JSON (expected the JSON that chakra jsonize writes): {}", source_, line,
         column, reason);
  }

 private:
  static constexpr std::string_view kDocumentShape = "document {\"metadata\": {...}, \"nodes\": [{...}, ...]}";
  static constexpr std::string_view kUnknownExpected = "the base64 of protobuf wire bytes (fields this schema does not "
                                                       "know)";

  struct Frame {
    enum class Kind { kFirst, kDocument, kMessage } kind;
    Message* message = nullptr;              // the message being filled (kMessage)
    const FieldDescriptor* field = nullptr;  // the field the current key names; null for _unknownFields
    std::string key{};                       // the current key
    long element = -1;                       // inside the current key's array: the element's index
    std::uint64_t given = 0;                 // one bit per field already given, to catch repeats
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
      fail("{}: {}: key \"{}\": \"{}\" is already set, and a {} holds only one member of `{}`", source_, where(),
           path(), r->GetOneofFieldDescriptor(*top.message, oneof)->json_name(), top.message->GetDescriptor()->name(),
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
    if (values_ == 1)
      fail("{}: expected a JSON object (the {} or the GlobalMetadata), got {}", source_, kDocumentShape, got);
    if (form_ == Form::kDocument)
      fail("{}: more JSON after the document's closing brace; expected one {}", source_, kDocumentShape);
    fail("{}: node {}: expected a JSON object (a Node), got {}", source_, trace_.nodes.size(), got);
  }

  [[noreturn]] void bad_document_value(const std::string& got) const {
    const Frame& top = stack_.back();
    if (top.key == "metadata")
      fail("{}: key \"metadata\": expected a JSON object (a GlobalMetadata), got {}", source_, got);
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

void dejsonize_file(const std::string& json_path, const std::string& et_path) {
  const std::string json =
      read_file(json_path, "JSON trace", "a JSON file written by `chakrasim chakra jsonize`", kTraceFileMaxBytes);
  chakra::write_trace(et_path, trace_from_json(json, json_path));
}

}  // namespace chakrasim::tools
