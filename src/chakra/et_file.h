// Reading and writing Chakra .et files: a GlobalMetadata message then Node messages, each
// prefixed by its length as a base-128 varint (docs/chakra-format.md §1.1). Unknown fields and enum
// values are kept, so what we read writes back unchanged.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chakra/et_def.pb.h"

namespace chakrasim::chakra {

using Node = ChakraProtoMsg::Node;
using GlobalMetadata = ChakraProtoMsg::GlobalMetadata;
using Attribute = ChakraProtoMsg::AttributeProto;

// One rank's trace, as it is on disk.
struct Trace {
  GlobalMetadata metadata;
  std::vector<Node> nodes;
};

// Parses the bytes of a .et file. `source` names the file in error messages. Throws Error on
// an empty stream, a bad varint, a message longer than what is left, or a message protobuf
// cannot parse, naming the byte offset and the message index.
Trace parse_trace(std::string_view bytes, const std::string& source);

// The framing of parse_trace: calls `message(index, data, length)` for each length-prefixed
// message in order (index 0 the GlobalMetadata), which returns false when its bytes do not
// parse; throws parse_trace's errors.
void for_each_message(std::string_view bytes, const std::string& source,
                      const std::function<bool(std::size_t index, const char* data, int length)>& message);

// Reads PATH; throws Error naming the path if it cannot be read.
Trace read_trace(const std::string& path);

// Serialises a trace in the framing above (deterministic field order, packed repeated fields).
std::string serialize_trace(const Trace& trace);
// The size serialize_trace would return, in bytes (at most 5 bytes of framing per message over).
std::uint64_t serialized_size(const Trace& trace);

// Writes PATH; throws Error naming the path if it cannot be written.
void write_trace(const std::string& path, const Trace& trace);

// The per-rank file name ASTRA-sim uses: PREFIX.RANK.et
std::string rank_path(const std::string& prefix, std::size_t rank);

}  // namespace chakrasim::chakra
