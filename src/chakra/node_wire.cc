#include "chakra/node_wire.h"

#include <array>
#include <climits>
#include <optional>
#include <span>

#include "core/error.h"

namespace chakrasim::chakra {
namespace {

enum WireType : std::uint32_t { kVarint = 0, kLengthDelimited = 2 };

struct Reader {
  const std::uint8_t* p;
  const std::uint8_t* end;

  bool varint(std::uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end) return false;
      const std::uint8_t byte = *p++;
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;  // longer than 10 bytes: protobuf says so
  }
  // A field's tag. Protobuf reads tags as 32-bit values and refuses a longer one; the low 32
  // bits decide the field, so anything wider goes to protobuf rather than being cut here.
  bool tag(std::uint64_t& value) { return varint(value) && value <= UINT32_MAX; }
  bool bytes(std::string_view& out) {
    std::uint64_t length = 0;
    if (!varint(length) || length > static_cast<std::uint64_t>(end - p)) return false;
    out = {reinterpret_cast<const char*>(p), static_cast<std::size_t>(length)};
    p += length;
    return true;
  }
  bool done() const { return p == end; }
};

// Protobuf checks that text fields are UTF-8; ASCII needs no check.
bool ascii(std::string_view s) {
  unsigned char any = 0;
  for (const char c : s) any |= static_cast<unsigned char>(c);
  return any < 0x80;
}

// Repeated uint64 (or bool) values, packed or not, appended to `out`.
bool repeated_varints(Reader& r, std::uint32_t wire_type, std::vector<std::uint64_t>& out) {
  std::uint64_t value = 0;
  if (wire_type == kVarint) {
    if (!r.varint(value)) return false;
    out.push_back(value);
    return true;
  }
  if (wire_type != kLengthDelimited) return false;
  std::string_view packed;
  if (!r.bytes(packed)) return false;
  Reader inner{reinterpret_cast<const std::uint8_t*>(packed.data()),
               reinterpret_cast<const std::uint8_t*>(packed.data() + packed.size())};
  while (!inner.done()) {
    if (!inner.varint(value)) return false;
    out.push_back(value);
  }
  return true;
}

// One attribute's value, of the kinds this reader takes (AttributeProto field numbers).
struct Value {
  enum Kind : std::uint8_t {
    kNone,
    kInt32 = 7,
    kInt64 = 9,
    kUint32 = 11,
    kInt64List = 10,
    kUint64 = 13,
    kBool = 27,
    kBoolList = 28,
    kString = 29
  };
  // No initialisers: a node's array of these is not cleared each time (read_attribute sets
  // every field it reads; a known attribute's slot is read only once filled).
  Kind kind;
  std::uint64_t raw;
  const char* text;       // kString: its bytes; kInt64List: the list message's (a pointer and size,
  std::size_t text_size;  // not a string_view, so that an array of Values needs no clearing)
  std::uint32_t bools;    // kBoolList: bit i = entry i (at most 32; longer lists go to protobuf)
};

// An Int64List message's values (packed or not) into `values`; false where this reader does not
// take the message (protobuf then decides whether it is malformed).
bool int64_list_values(std::string_view list, std::vector<std::uint64_t>& values) {
  values.clear();
  Reader r{reinterpret_cast<const std::uint8_t*>(list.data()),
           reinterpret_cast<const std::uint8_t*>(list.data() + list.size())};
  while (!r.done()) {
    std::uint64_t tag = 0;
    if (!r.tag(tag) || (tag >> 3) != 1) return false;
    if (!repeated_varints(r, static_cast<std::uint32_t>(tag & 7), values)) return false;
  }
  return true;
}

bool read_attribute(std::string_view bytes, std::string_view& name, Value& value) {
  Reader r{reinterpret_cast<const std::uint8_t*>(bytes.data()),
           reinterpret_cast<const std::uint8_t*>(bytes.data() + bytes.size())};
  bool named = false;
  bool doc = false;
  value.kind = Value::kNone;
  while (!r.done()) {
    std::uint64_t tag = 0;
    if (!r.tag(tag)) return false;
    const auto field = static_cast<std::uint32_t>(tag >> 3);
    const auto wire_type = static_cast<std::uint32_t>(tag & 7);
    if (field == 1 || field == 2) {  // name, doc_string
      std::string_view text;
      if (wire_type != kLengthDelimited || !r.bytes(text) || !ascii(text)) return false;
      bool& seen = field == 1 ? named : doc;
      if (seen) return false;
      seen = true;
      if (field == 1) name = text;
      continue;
    }
    if (value.kind != Value::kNone) return false;  // a second value: protobuf keeps the last
    switch (field) {
      case Value::kInt32:
      case Value::kInt64:
      case Value::kUint32:
      case Value::kUint64:
      case Value::kBool:
        if (wire_type != kVarint || !r.varint(value.raw)) return false;
        value.kind = static_cast<Value::Kind>(field);
        break;
      case Value::kString: {
        std::string_view text;
        if (wire_type != kLengthDelimited || !r.bytes(text) || !ascii(text)) return false;
        value.text = text.data();
        value.text_size = text.size();
        value.kind = Value::kString;
        break;
      }
      case Value::kInt64List: {
        std::string_view list;
        // Checked here whatever the attribute's name: protobuf refuses a malformed list on any
        // attribute, the models' or not.
        thread_local std::vector<std::uint64_t> values;
        if (wire_type != kLengthDelimited || !r.bytes(list) || !int64_list_values(list, values)) return false;
        value.text = list.data();
        value.text_size = list.size();
        value.kind = Value::kInt64List;
        break;
      }
      case Value::kBoolList: {
        std::string_view list;
        if (wire_type != kLengthDelimited || !r.bytes(list)) return false;
        Reader inner{reinterpret_cast<const std::uint8_t*>(list.data()),
                     reinterpret_cast<const std::uint8_t*>(list.data() + list.size())};
        thread_local std::vector<std::uint64_t> values;
        values.clear();
        while (!inner.done()) {
          std::uint64_t tag2 = 0;
          if (!inner.tag(tag2) || (tag2 >> 3) != 1) return false;
          if (!repeated_varints(inner, static_cast<std::uint32_t>(tag2 & 7), values)) return false;
        }
        if (values.size() > 32) return false;  // the models refuse it, with protobuf's help
        value.bools = 0;
        for (std::size_t i = 0; i < values.size(); ++i) value.bools |= values[i] != 0 ? 1u << i : 0u;
        value.kind = Value::kBoolList;
        break;
      }
      default: return false;
    }
  }
  if (!named) name = {};
  return true;
}

// The integer conversions of chakra/attributes.cc (integral, attr_int, attr_uint, attr_bool);
// false where those would report an error.
bool integral(const Value& v, std::int64_t& out) {
  switch (v.kind) {
    case Value::kInt32: out = static_cast<std::int32_t>(v.raw); return true;
    case Value::kInt64: out = static_cast<std::int64_t>(v.raw); return true;
    case Value::kUint32: out = static_cast<std::uint32_t>(v.raw); return true;
    case Value::kUint64: out = static_cast<std::int64_t>(v.raw); return true;
    case Value::kBool: out = v.raw != 0 ? 1 : 0; return true;
    default: return false;
  }
}
bool as_int(const Value& v, std::int64_t& out) {
  if (v.kind == Value::kUint64 && v.raw > static_cast<std::uint64_t>(INT64_MAX)) return false;
  return integral(v, out);
}
bool as_uint(const Value& v, std::uint64_t& out) {
  if (v.kind == Value::kUint64) {
    out = v.raw;
    return true;
  }
  std::int64_t value = 0;
  if (!integral(v, value) || value < 0) return false;
  out = static_cast<std::uint64_t>(value);
  return true;
}

// An Int64List message's values, as int64 (protobuf's two's complement).
bool int64_list(const Value& v, std::vector<std::int64_t>& out) {
  thread_local std::vector<std::uint64_t> values;
  if (!int64_list_values(std::string_view(v.text, v.text_size), values)) return false;
  out.assign(values.begin(), values.end());
  return true;
}

// The attributes the models read (graph.cc's list, in its order); the first of each name counts.
enum Known : std::uint8_t {
  kIsCpuOp,
  kCommType,
  kCommSize,
  kCommSrc,
  kCommDst,
  kCommTag,
  kNumOps,
  kTensorSize,
  kCommPriority,
  kInvolvedDim,
  kPgName,
  kGemm,
  kConv,
  kPass,
  kKnown
};
constexpr std::array<std::string_view, kKnown> kNames = {"is_cpu_op",     "comm_type",    "comm_size", "comm_src",
                                                         "comm_dst",      "comm_tag",     "num_ops",   "tensor_size",
                                                         "comm_priority", "involved_dim", "pg_name",   "gemm",
                                                         "conv",          "pass"};

}  // namespace

bool read_wire_node(const char* data, std::size_t length, WireNode& out) {
  Reader r{reinterpret_cast<const std::uint8_t*>(data), reinterpret_cast<const std::uint8_t*>(data + length)};
  // Every field afresh, but the dependency vectors keep their capacity.
  std::vector<std::uint64_t> data_deps = std::move(out.data_deps);
  std::vector<std::uint64_t> ctrl_deps = std::move(out.ctrl_deps);
  out = WireNode();
  out.data_deps = std::move(data_deps);
  out.ctrl_deps = std::move(ctrl_deps);
  out.data_deps.clear();
  out.ctrl_deps.clear();
  std::array<Value, kKnown> known;  // filled where found
  std::array<bool, kKnown> found{};
  std::uint32_t seen = 0;  // bit per singular field number, to refuse repeats
  std::uint64_t value = 0;
  while (!r.done()) {
    std::uint64_t tag = 0;
    if (!r.tag(tag)) return false;
    const auto field = static_cast<std::uint32_t>(tag >> 3);
    const auto wire_type = static_cast<std::uint32_t>(tag & 7);
    switch (field) {
      case 1:  // id
      case 3:  // type
      case 6:  // start_time_micros
      case 7:  // duration_micros
        if (wire_type != kVarint || (seen & (1u << field)) != 0 || !r.varint(value)) return false;
        seen |= 1u << field;
        if (field == 1) out.id = value;
        if (field == 3) out.type = static_cast<std::uint32_t>(static_cast<std::int32_t>(value));
        if (field == 7) out.duration_micros = value;
        break;
      case 2:  // name
        if (wire_type != kLengthDelimited || (seen & (1u << field)) != 0 || !r.bytes(out.name) || !ascii(out.name))
          return false;
        seen |= 1u << field;
        break;
      case 4:  // ctrl_deps
        if (!repeated_varints(r, wire_type, out.ctrl_deps)) return false;
        break;
      case 5:  // data_deps
        if (!repeated_varints(r, wire_type, out.data_deps)) return false;
        break;
      case 10: {  // attr
        std::string_view bytes;
        if (wire_type != kLengthDelimited || !r.bytes(bytes)) return false;
        std::string_view name;
        Value v{};
        if (!read_attribute(bytes, name, v)) return false;
        for (std::size_t k = 0; k < kKnown; ++k) {
          if (!found[k] && name == kNames[k]) {
            found[k] = true;
            // Field by field: a whole-struct copy reads the fields just written as wider words,
            // which stalls store forwarding (measured: a third of this function).
            known[k].kind = v.kind;
            known[k].raw = v.raw;
            known[k].text = v.text;
            known[k].text_size = v.text_size;
            known[k].bools = v.bools;
            break;
          }
        }
        break;
      }
      default: return false;  // inputs, outputs, unknown fields: protobuf's
    }
  }
  // The conversions of graph.cc's decode_attrs; any it would refuse goes to protobuf.
  OpAttrs& a = out.attrs;
  std::int64_t signed_value = 0;
  if (found[kIsCpuOp]) {
    if (!integral(known[kIsCpuOp], signed_value)) return false;
    out.cpu_op = signed_value != 0;
  }
  auto set_int = [&](Known k, std::int64_t& field, OpAttrs::Present bit) {
    if (!found[k]) return true;
    if (!as_int(known[k], field)) return false;
    a.present |= bit;
    return true;
  };
  auto set_uint = [&](Known k, std::uint64_t& field, OpAttrs::Present bit) {
    if (!found[k]) return true;
    if (!as_uint(known[k], field)) return false;
    a.present |= bit;
    return true;
  };
  if (!set_int(kCommType, a.comm_type, OpAttrs::kCommType) || !set_uint(kCommSize, a.comm_size, OpAttrs::kCommSize) ||
      !set_int(kCommSrc, a.comm_src, OpAttrs::kCommSrc) || !set_int(kCommDst, a.comm_dst, OpAttrs::kCommDst) ||
      !set_int(kCommTag, a.comm_tag, OpAttrs::kCommTag) || !set_uint(kNumOps, a.num_ops, OpAttrs::kNumOps) ||
      !set_uint(kTensorSize, a.tensor_size, OpAttrs::kTensorSize)) {
    return false;
  }
  if (found[kCommPriority]) {
    if (!as_int(known[kCommPriority], signed_value)) return false;
    a.comm_priority = static_cast<std::int32_t>(signed_value);
  }
  if (found[kInvolvedDim]) {
    const Value& v = known[kInvolvedDim];
    if (v.kind != Value::kBoolList) return false;
    a.involved_dims |= v.bools;
    a.present |= OpAttrs::kInvolvedDim;
  }
  if (found[kPgName]) {
    if (known[kPgName].kind != Value::kString) return false;
    out.pg_name = std::string_view(known[kPgName].text, known[kPgName].text_size);
    a.present |= OpAttrs::kPgName;
  }
  if (found[kGemm] || found[kConv] || found[kPass]) {
    thread_local std::vector<std::int64_t> gemm, conv;
    std::optional<std::span<const std::int64_t>> gemm_dims, conv_dims;
    std::optional<std::string_view> pass;
    if (found[kGemm]) {
      if (known[kGemm].kind != Value::kInt64List || !int64_list(known[kGemm], gemm)) return false;
      gemm_dims = gemm;
    }
    if (found[kConv]) {
      if (known[kConv].kind != Value::kInt64List || !int64_list(known[kConv], conv)) return false;
      conv_dims = conv;
    }
    if (found[kPass]) {
      if (known[kPass].kind != Value::kString) return false;
      pass = std::string_view(known[kPass].text, known[kPass].text_size);
    }
    try {
      const std::optional<OpShape> shape = make_op_shape(gemm_dims, conv_dims, pass);
      if (shape) {
        out.shape = *shape;
        a.present |= OpAttrs::kShape;
      }
    } catch (const Error&) {
      return false;  // protobuf's path reports it
    }
  }
  out.has_attrs = a.present != 0 || a.comm_priority != 0;
  return true;
}

}  // namespace chakrasim::chakra
