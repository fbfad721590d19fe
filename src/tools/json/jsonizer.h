// Chakra ET <-> JSON: `chakra jsonize` writes a trace as protobuf canonical JSON (lowerCamelCase
// keys, 64-bit integers as strings, enum names, default values left out) and `chakra dejsonize`
// reads it back into the identical .et bytes (docs/chakra-format.md §5).
//
// Two forms. The document form (the default) is one valid JSON document,
//   {"metadata": {GlobalMetadata}, "nodes": [{Node}, ...]}
// The compat form is what the reference `chakra_jsonizer` writes: the GlobalMetadata then each
// Node, each a JSON object with 2-space indent, concatenated with no separator ("}{"), so it
// is not one JSON document. Both are printed as Python's json_format + json.dumps print them
// (floats as Python's repr, non-ASCII as \uXXXX), so the compat form is byte-identical to the
// reference's output. dejsonize accepts either form.
//
// What canonical JSON cannot hold is kept in an extra key, so that ET -> JSON -> ET gives the
// same bytes: a message's unknown fields (from a newer schema) go into "_unknownFields", the
// base64 of their wire bytes, after the known keys; the reference drops them. An unknown enum
// value prints as its number, as protobuf does. Known loss: a NaN prints as "NaN", so a NaN with
// a non-default payload comes back as the default NaN.
//
// dejsonize builds the trace from the parser's events, holding no JSON tree, so its memory is
// that of the trace (a 1M-node, 105 MB JSON: about 0.4 GB).
#pragma once

#include <string>
#include <string_view>

#include "chakra/et_file.h"

namespace chakrasim::tools {

enum class JsonForm {
  kDocument,  // {"metadata": ..., "nodes": [...]}, ending in a newline
  kCompat,    // the reference's concatenated objects, no trailing newline
};

// The key that holds a message's unknown fields (base64 of their protobuf wire bytes).
inline constexpr std::string_view kUnknownFieldsKey = "_unknownFields";

// The JSON text of `trace`. Throws Error if a string is not valid UTF-8 (protobuf rejects such
// strings when it reads a file, so only a trace built in code can have one).
std::string trace_to_json(const chakra::Trace& trace, JsonForm form);

// Reads either form. `source` names the file in errors, which also say where: the JSON line
// and column for malformed JSON, else the message ("metadata", "node 3 (id \"17\")") and the
// key path ("attr[2].int64Val") with what was expected.
chakra::Trace trace_from_json(std::string_view json, const std::string& source);

// File wrappers: read_trace + trace_to_json + write; read + trace_from_json + write_trace.
void jsonize_file(const std::string& et_path, const std::string& json_path, JsonForm form);
void dejsonize_file(const std::string& json_path, const std::string& et_path);

}  // namespace chakrasim::tools
