#include "chakra/et_file.h"

#include <limits>
#include <sstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/read_file.h"

namespace chakrasim::chakra {
namespace {

// Reads one varint32 length prefix at `pos`; returns false at a malformed or cut-off varint.
bool read_length(std::string_view bytes, std::size_t& pos, std::uint32_t& length) {
  std::uint64_t value = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    if (pos >= bytes.size()) return false;
    auto byte = static_cast<std::uint8_t>(bytes[pos++]);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      if (value > 0xffffffffull) return false;
      length = static_cast<std::uint32_t>(value);
      return true;
    }
  }
  return false;
}

void append_varint(std::string& out, std::uint32_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

}  // namespace

void for_each_message(std::string_view bytes, const std::string& source,
                      const std::function<bool(std::size_t index, const char* data, int length)>& message) {
  // A message protobuf rejects (e.g. a string that is not UTF-8) becomes our own error below,
  // which names the file and offset; protobuf's own log line would only repeat it, less clearly.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  if (bytes.empty()) {
    fail("{}: the file is empty; expected a Chakra trace (a GlobalMetadata message, then Nodes)", source);
  }
  if (bytes.size() >= 2 && static_cast<std::uint8_t>(bytes[0]) == 0x1f && static_cast<std::uint8_t>(bytes[1]) == 0x8b) {
    fail("{}: the file is gzip-compressed; decompress it first (gunzip), as ASTRA-sim does not "
         "read compressed traces either",
         source);
  }
  std::size_t pos = 0;
  std::size_t index = 0;
  while (pos < bytes.size()) {
    const std::size_t start = pos;
    std::uint32_t length = 0;
    if (!read_length(bytes, pos, length)) {
      fail("{}: byte {}: message {} has a malformed or cut-off length prefix; expected a varint32 length before each "
           "message of a Chakra trace",
           source, start, index);
    }
    if (length > bytes.size() - pos) {
      fail("{}: byte {}: message {} says it is {} bytes long but only {} remain; the file is truncated (expected "
           "whole length-prefixed messages)",
           source, start, index, length, bytes.size() - pos);
    }
    if (!message(index, bytes.data() + pos, static_cast<int>(length))) {
      fail("{}: byte {}: message {} ({}) is not a valid protobuf message; the file is corrupted (expected a Chakra "
           "trace: a GlobalMetadata message, then Nodes)",
           source, start, index, index == 0 ? "GlobalMetadata" : "Node");
    }
    pos += length;
    ++index;
  }
}

Trace parse_trace(std::string_view bytes, const std::string& source) {
  Trace trace;
  for_each_message(bytes, source, [&trace](std::size_t index, const char* data, int length) {
    if (index == 0) return trace.metadata.ParseFromArray(data, length);
    return trace.nodes.emplace_back().ParseFromArray(data, length);
  });
  return trace;
}

Trace read_trace(const std::string& path) {
  return parse_trace(read_file(path, "trace file", "a Chakra trace file", kTraceFileMaxBytes), path);
}

std::string serialize_trace(const Trace& trace) {
  std::string out;
  // Each message goes straight into its place in `out`, at the size ByteSizeLong cached. (A
  // StringOutputStream on a reused buffer zero-fills the buffer's whole capacity per message: a
  // 4 MB metadata message, such as an MSCCL ET's embedded XML, then cost 4 MB per node.)
  auto append = [&](const google::protobuf::MessageLite& m) {
    const std::size_t size = m.ByteSizeLong();
    if (size > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      fail("a trace message of {} bytes is beyond protobuf's 2 GiB limit", size);
    append_varint(out, static_cast<std::uint32_t>(size));
    const std::size_t at = out.size();
    out.resize(at + size);
    google::protobuf::io::ArrayOutputStream stream(out.data() + at, static_cast<int>(size));
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeWithCachedSizes(&coded);
  };
  append(trace.metadata);
  for (const Node& node : trace.nodes) append(node);
  return out;
}

std::uint64_t serialized_size(const Trace& trace) {
  std::uint64_t bytes = trace.metadata.ByteSizeLong() + 5;
  for (const Node& node : trace.nodes) bytes += node.ByteSizeLong() + 5;
  return bytes;
}

void write_trace(const std::string& path, const Trace& trace) {
  write_file_atomically(path, serialize_trace(trace), "the trace file");
}

std::string rank_path(const std::string& prefix, std::size_t rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

}  // namespace chakrasim::chakra
