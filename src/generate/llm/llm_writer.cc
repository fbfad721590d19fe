#include "generate/llm/llm_writer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <unordered_map>

#include "chakra/attributes.h"
#include "core/error.h"

namespace chakrasim::tools::llm {
namespace {

void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// A Node's `attr` field (number 10, length-delimited) holding `attr`: what protobuf writes for
// one more element of the repeated field.
std::string encode_attr_field(const chakra::Attribute& attr) {
  const std::string body = attr.SerializeAsString();
  std::string out(1, static_cast<char>((10 << 3) | 2));
  append_varint(out, body.size());
  return out + body;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

void write_file(const std::string& path, const std::string& bytes) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "wb"));
  if (!f) fail("--out: cannot create the trace file {} (does the directory exist?)", path);
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) {
    fail("--out: error while writing the trace file {}", path);
  }
  if (std::fclose(f.release()) != 0) fail("--out: error while writing the trace file {}", path);
}

}  // namespace

chakra::Attribute late_attribute(const LateAttr& late, const Layout& layout, std::uint64_t rank) {
  switch (late.field) {
    case LateField::kPgName:
      return chakra::make_string("pg_name", std::to_string(layout.group_id(static_cast<GroupKind>(late.code), rank)));
    case LateField::kCommSrc:
      return chakra::make_int32("comm_src", static_cast<std::int32_t>(layout.peer(rank, late.code)));
    case LateField::kCommDst:
      return chakra::make_int32("comm_dst", static_cast<std::int32_t>(layout.peer(rank, late.code)));
  }
  return {};
}

chakra::Trace materialize(const StageTemplate& stage, const Layout& layout, std::uint64_t rank) {
  chakra::Trace out = stage.trace;
  for (std::size_t i = 0; i < out.nodes.size(); ++i) {
    for (const LateAttr& late : stage.late[i]) *out.nodes[i].add_attr() = late_attribute(late, layout, rank);
  }
  return out;
}

StageBytes::StageBytes(const StageTemplate& stage) {
  const std::string meta = stage.trace.metadata.SerializeAsString();
  append_varint(metadata_, meta.size());
  metadata_ += meta;
  late_begin_.push_back(0);
  for (std::size_t i = 0; i < stage.trace.nodes.size(); ++i) {
    nodes_ += stage.trace.nodes[i].SerializeAsString();
    ends_.push_back(static_cast<std::uint32_t>(nodes_.size()));
    for (const LateAttr& late : stage.late[i]) {
      auto it = std::find(distinct_.begin(), distinct_.end(), late);
      if (it == distinct_.end()) it = distinct_.insert(distinct_.end(), late);
      late_.push_back(static_cast<std::uint8_t>(it - distinct_.begin()));
    }
    late_begin_.push_back(static_cast<std::uint32_t>(late_.size()));
  }
  if (nodes_.size() > 0xffffffffu || distinct_.size() > 256) fail("a stage's trace is too large to write");
}

std::string StageBytes::rank_file(const Layout& layout, std::uint64_t rank) const {
  std::vector<std::string> encoded;
  encoded.reserve(distinct_.size());
  for (const LateAttr& late : distinct_) encoded.push_back(encode_attr_field(late_attribute(late, layout, rank)));
  std::string out;
  out.reserve(metadata_.size() + nodes_.size() + ends_.size() * 24);
  out += metadata_;
  std::uint32_t begin = 0;
  for (std::size_t i = 0; i < ends_.size(); ++i) {
    std::size_t size = ends_[i] - begin;
    for (std::uint32_t k = late_begin_[i]; k < late_begin_[i + 1]; ++k) size += encoded[late_[k]].size();
    append_varint(out, size);
    out.append(nodes_, begin, ends_[i] - begin);
    for (std::uint32_t k = late_begin_[i]; k < late_begin_[i + 1]; ++k) out += encoded[late_[k]];
    begin = ends_[i];
  }
  return out;
}

WrittenFiles write_rank_files(const std::vector<StageTemplate>& stages, const Layout& layout,
                              const std::string& prefix) {
  std::vector<StageBytes> bytes;
  bytes.reserve(stages.size());
  for (const StageTemplate& s : stages) bytes.emplace_back(s);
  WrittenFiles out;
  // Content hash -> ranks written with that hash, to find identical files without keeping them.
  std::unordered_map<std::size_t, std::vector<std::uint64_t>> written;
  for (std::uint64_t rank = 0; rank < layout.ranks(); ++rank) {
    const StageBytes& stage = bytes[layout.coord(rank).p];
    const std::string file = stage.rank_file(layout, rank);
    const std::string path = chakra::rank_path(prefix, rank);
    ++out.files;
    std::error_code ec;
    std::filesystem::remove(path, ec);  // a link must not point into an older file
    bool linked = false;
    auto& same_hash = written[std::hash<std::string>{}(file)];
    for (std::uint64_t earlier : same_hash) {
      if (bytes[layout.coord(earlier).p].rank_file(layout, earlier) != file) continue;
      std::filesystem::create_hard_link(chakra::rank_path(prefix, earlier), path, ec);
      linked = !ec;
      break;
    }
    if (linked) continue;
    write_file(path, file);
    same_hash.push_back(rank);
    ++out.distinct;
    out.bytes += file.size();
  }
  return out;
}

}  // namespace chakrasim::tools::llm
