// Reading a Node straight from its wire bytes into the fields the compact graph keeps, without a
// protobuf message: one pass over the bytes, the known attributes decoded on the way. It covers
// the encodings trace writers use (scalars, packed or unpacked dependencies, attributes holding
// one integer, bool, string, bool list or int64 list) and answers false for anything else (other value
// types, inputs and outputs, a field twice, non-ASCII text, malformed bytes, a value the
// models would reject): the caller then parses that node with protobuf, which gives the same
// fields or the error. So both paths agree on every input (the et_reader fuzz target checks it).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "chakra/graph.h"

namespace chakrasim::chakra {

struct WireNode {
  std::uint64_t id = 0;
  std::uint64_t duration_micros = 0;
  std::uint32_t type = 0;  // the raw value, as Graph keeps it
  std::string_view name;
  std::vector<std::uint64_t> data_deps;
  std::vector<std::uint64_t> ctrl_deps;
  bool cpu_op = false;
  bool has_attrs = false;  // a model attribute was present (attrs then holds them)
  OpAttrs attrs;           // pg_name and inputs_values not set: the caller interns strings
  std::string_view pg_name;
  OpShape shape;  // when attrs has kShape
};

// Fills `out` (reused: its vectors keep their capacity) from one Node message; false when the
// node needs protobuf (see above).
bool read_wire_node(const char* data, std::size_t length, WireNode& out);

}  // namespace chakrasim::chakra
