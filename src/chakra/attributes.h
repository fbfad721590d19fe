// Typed access to a node's attributes with the conversions of the current Chakra feeder
// (docs/chakra-format.md §1.6): any integer member (int32/64, uint32/64, sint, fixed, sfixed, bool)
// reads as an integer, any number reads as a double, strings only as strings. Lookup is by the
// first attribute with the name. A present attribute of an unusable type throws Error naming the
// attribute, its stored type and what was expected; an absent one gives std::nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chakra/et_file.h"

namespace chakrasim::chakra {

// The first attribute called `name`, or nullptr.
const Attribute* find_attribute(const Node& node, const std::string& name);

// Name of the oneof member an attribute holds, e.g. "int64_val"; "no value" if unset.
std::string value_kind(const Attribute& attr);

std::optional<std::int64_t> attr_int(const Node& node, const std::string& name);
std::optional<std::uint64_t> attr_uint(const Node& node, const std::string& name);
std::optional<double> attr_double(const Node& node, const std::string& name);
std::optional<bool> attr_bool(const Node& node, const std::string& name);
std::optional<std::string> attr_string(const Node& node, const std::string& name);
std::optional<std::vector<bool>> attr_bool_list(const Node& node, const std::string& name);
// The same for an attribute already found (nullptr: absent): a reader that looks for several
// names finds them all in one pass over the node's attributes.
std::optional<std::int64_t> attr_int(const Node& node, const Attribute* attr);
std::optional<std::uint64_t> attr_uint(const Node& node, const Attribute* attr);
std::optional<double> attr_double(const Node& node, const Attribute* attr);
std::optional<bool> attr_bool(const Node& node, const Attribute* attr);
std::optional<std::string> attr_string(const Node& node, const Attribute* attr);
std::optional<std::vector<bool>> attr_bool_list(const Node& node, const Attribute* attr);
// Any integer list member (int32_list ... sfixed64_list); values above 2^63 - 1 are refused.
std::optional<std::vector<std::int64_t>> attr_int_list(const Node& node, const Attribute* attr);

// Attribute builders for writers and tests (the oneof member producers use for each).
Attribute make_int64(const std::string& name, std::int64_t value);
Attribute make_uint64(const std::string& name, std::uint64_t value);
Attribute make_int32(const std::string& name, std::int32_t value);
Attribute make_bool(const std::string& name, bool value);
Attribute make_string(const std::string& name, const std::string& value);
Attribute make_bool_list(const std::string& name, const std::vector<bool>& values);

}  // namespace chakrasim::chakra
