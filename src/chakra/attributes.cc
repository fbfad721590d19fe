#include "chakra/attributes.h"

#include "core/error.h"

namespace chakrasim::chakra {
namespace {

using Case = Attribute::ValueCase;

// Integer members as a signed value wide enough for every member except large uint64.
std::optional<std::int64_t> integral(const Attribute& a) {
  switch (a.value_case()) {
    case Case::kInt32Val: return a.int32_val();
    case Case::kInt64Val: return a.int64_val();
    case Case::kUint32Val: return a.uint32_val();
    case Case::kUint64Val: return static_cast<std::int64_t>(a.uint64_val());
    case Case::kSint32Val: return a.sint32_val();
    case Case::kSint64Val: return a.sint64_val();
    case Case::kFixed32Val: return a.fixed32_val();
    case Case::kFixed64Val: return static_cast<std::int64_t>(a.fixed64_val());
    case Case::kSfixed32Val: return a.sfixed32_val();
    case Case::kSfixed64Val: return a.sfixed64_val();
    case Case::kBoolVal: return a.bool_val() ? 1 : 0;
    default: return std::nullopt;
  }
}

// The stored value as text, for error messages (lists and bytes are summarised).
std::string value_text(const Attribute& a) {
  switch (a.value_case()) {
    case Case::kDoubleVal: return fmt::format("{}", a.double_val());
    case Case::kFloatVal: return fmt::format("{}", a.float_val());
    case Case::kStringVal: return fmt::format("\"{}\"", a.string_val());
    case Case::kBoolVal: return a.bool_val() ? "true" : "false";
    case Case::kUint64Val: return std::to_string(a.uint64_val());
    case Case::kFixed64Val: return std::to_string(a.fixed64_val());
    default: {
      if (auto v = integral(a)) return std::to_string(*v);
      return "";  // lists and absent values: the kind says enough
    }
  }
}

[[noreturn]] void wrong_type(const Node& node, const Attribute& attr, const char* expected) {
  const std::string value = value_text(attr);
  fail("node {} (\"{}\"): attribute \"{}\" holds {}{}{}; expected {}", node.id(), node.name(), attr.name(),
       value_kind(attr), value.empty() ? "" : " ", value, expected);
}

}  // namespace

const Attribute* find_attribute(const Node& node, const std::string& name) {
  for (const Attribute& attr : node.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::string value_kind(const Attribute& attr) {
  if (attr.value_case() == Case::VALUE_NOT_SET) return "no value";
  const auto* field = Attribute::descriptor()->FindFieldByNumber(static_cast<int>(attr.value_case()));
  return field != nullptr ? field->name() : "an unknown value type";
}

std::optional<std::int64_t> attr_int(const Node& node, const std::string& name) {
  return attr_int(node, find_attribute(node, name));
}

std::optional<std::int64_t> attr_int(const Node& node, const Attribute* attr) {
  if (attr == nullptr) return std::nullopt;
  if (attr->value_case() == Case::kUint64Val && attr->uint64_val() > static_cast<std::uint64_t>(INT64_MAX)) {
    wrong_type(node, *attr, "an integer that fits in int64");
  }
  auto value = integral(*attr);
  if (!value) wrong_type(node, *attr, "an integer");
  return value;
}

std::optional<std::uint64_t> attr_uint(const Node& node, const std::string& name) {
  return attr_uint(node, find_attribute(node, name));
}

std::optional<std::uint64_t> attr_uint(const Node& node, const Attribute* attr) {
  if (attr == nullptr) return std::nullopt;
  if (attr->value_case() == Case::kUint64Val) return attr->uint64_val();
  if (attr->value_case() == Case::kFixed64Val) return attr->fixed64_val();
  auto value = integral(*attr);
  if (!value) wrong_type(node, *attr, "a non-negative integer");
  if (*value < 0) {
    fail("node {} (\"{}\"): attribute \"{}\" is {}; expected a non-negative integer", node.id(), node.name(),
         attr->name(), *value);
  }
  return static_cast<std::uint64_t>(*value);
}

std::optional<double> attr_double(const Node& node, const std::string& name) {
  return attr_double(node, find_attribute(node, name));
}

std::optional<double> attr_double(const Node& node, const Attribute* attr) {
  if (attr == nullptr) return std::nullopt;
  if (attr->value_case() == Case::kDoubleVal) return attr->double_val();
  if (attr->value_case() == Case::kFloatVal) return attr->float_val();
  if (attr->value_case() == Case::kUint64Val) return static_cast<double>(attr->uint64_val());
  if (attr->value_case() == Case::kFixed64Val) return static_cast<double>(attr->fixed64_val());
  auto value = integral(*attr);
  if (!value) wrong_type(node, *attr, "a number");
  return static_cast<double>(*value);
}

std::optional<bool> attr_bool(const Node& node, const std::string& name) {
  return attr_bool(node, find_attribute(node, name));
}

std::optional<bool> attr_bool(const Node& node, const Attribute* attr) {
  if (attr == nullptr) return std::nullopt;
  auto value = integral(*attr);
  if (!value) wrong_type(node, *attr, "a bool");
  return *value != 0;
}

std::optional<std::string> attr_string(const Node& node, const std::string& name) {
  return attr_string(node, find_attribute(node, name));
}

std::optional<std::string> attr_string(const Node& node, const Attribute* attr) {
  if (attr == nullptr) return std::nullopt;
  if (attr->value_case() != Case::kStringVal) wrong_type(node, *attr, "a string (string_val)");
  return attr->string_val();
}

std::optional<std::vector<bool>> attr_bool_list(const Node& node, const std::string& name) {
  return attr_bool_list(node, find_attribute(node, name));
}

std::optional<std::vector<bool>> attr_bool_list(const Node& node, const Attribute* attr) {
  if (attr == nullptr) return std::nullopt;
  if (attr->value_case() != Case::kBoolList) wrong_type(node, *attr, "a bool_list");
  return std::vector<bool>(attr->bool_list().values().begin(), attr->bool_list().values().end());
}

std::optional<std::vector<std::int64_t>> attr_int_list(const Node& node, const Attribute* attr) {
  if (attr == nullptr) return std::nullopt;
  auto copy = [](const auto& list) {
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(list.values_size()));
    for (const auto v : list.values()) out.push_back(static_cast<std::int64_t>(v));
    return out;
  };
  auto unsigned_copy = [&](const auto& list) {
    for (const std::uint64_t v : list.values()) {
      if (v > static_cast<std::uint64_t>(INT64_MAX)) wrong_type(node, *attr, "integers below 2^63");
    }
    return copy(list);
  };
  switch (attr->value_case()) {
    case Case::kInt32List: return copy(attr->int32_list());
    case Case::kInt64List: return copy(attr->int64_list());
    case Case::kUint32List: return copy(attr->uint32_list());
    case Case::kUint64List: return unsigned_copy(attr->uint64_list());
    case Case::kSint32List: return copy(attr->sint32_list());
    case Case::kSint64List: return copy(attr->sint64_list());
    case Case::kFixed32List: return copy(attr->fixed32_list());
    case Case::kFixed64List: return unsigned_copy(attr->fixed64_list());
    case Case::kSfixed32List: return copy(attr->sfixed32_list());
    case Case::kSfixed64List: return copy(attr->sfixed64_list());
    default: wrong_type(node, *attr, "an integer list (e.g. int64_list)");
  }
}

Attribute make_int64(const std::string& name, std::int64_t value) {
  Attribute a;
  a.set_name(name);
  a.set_int64_val(value);
  return a;
}

Attribute make_uint64(const std::string& name, std::uint64_t value) {
  Attribute a;
  a.set_name(name);
  a.set_uint64_val(value);
  return a;
}

Attribute make_int32(const std::string& name, std::int32_t value) {
  Attribute a;
  a.set_name(name);
  a.set_int32_val(value);
  return a;
}

Attribute make_bool(const std::string& name, bool value) {
  Attribute a;
  a.set_name(name);
  a.set_bool_val(value);
  return a;
}

Attribute make_string(const std::string& name, const std::string& value) {
  Attribute a;
  a.set_name(name);
  a.set_string_val(value);
  return a;
}

Attribute make_bool_list(const std::string& name, const std::vector<bool>& values) {
  Attribute a;
  a.set_name(name);
  auto* list = a.mutable_bool_list();  // sets the oneof even for an empty list
  for (bool v : values) list->add_values(v);
  return a;
}

}  // namespace chakrasim::chakra
