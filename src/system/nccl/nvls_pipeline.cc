#include "system/nccl/nvls_pipeline.h"

#include <algorithm>
#include <bit>

#include "system/nccl/tuning.h"

namespace chakrasim::system::nccl {

namespace {

// NCCL's NVLS CTAs per GPU: Hopper 16; Blackwell 24 in one NVLink domain, 32 across nodes.
std::uint32_t nvls_channels(const Machine& m) {
  if (m.gpu->compute_capability >= 100) return m.nodes > 1 ? 32 : 24;
  return 16;
}

constexpr std::uint32_t kNvlsChunkBytes = 128 * 1024;  // NCCL_NVLS_CHUNKSIZE's default

// Halves `chunk` down to `floor` while the call holds fewer than `loops` loops of it.
void shrink(std::uint32_t& chunk, std::uint64_t bytes, std::uint64_t concurrent, std::uint64_t loops,
            std::uint32_t floor) {
  if (chunk > floor && bytes < loops * concurrent * chunk) chunk = floor;
}

}  // namespace

NvlsChunking nvls_chunking(const Machine& machine, Algorithm a, std::uint32_t heads, std::uint64_t bytes,
                           double nccl_nvls_gb_per_s) {
  NvlsChunking k;
  k.channels = nvls_channels(machine);
  k.heads = std::max(heads, 1u);
  const std::uint64_t concurrent = std::uint64_t{k.channels} * k.heads;
  if (a == Algorithm::kNvlsTree) {
    // NCCL's general rule, whose steps to 256 and 128 KiB (at 32 and 16 loops) only a larger
    // NCCL_NVLS_CHUNKSIZE meets. NCCL 2.30 tunes Blackwell across nodes on its own (at most 64
    // KiB on two nodes of 8 GPUs behind PCIe switches, 24 channels from 3 nodes); two 2 x 8 B200
    // clusters on earlier NCCLs step up at 128 MiB, where this rule doubles the chunk, so the
    // rule they ran is kept (docs/nccl.md).
    k.chunk_bytes = machine.nodes >= 4 ? 64 * 1024 : kNvlsChunkBytes;
    shrink(k.chunk_bytes, bytes, concurrent, 4, 64 * 1024);
    shrink(k.chunk_bytes, bytes, concurrent, 1, 32 * 1024);
    return k;
  }
  // NVLS across nodes whose NVLS rate NCCL rates under 150 GB/s keeps its chunks small.
  k.chunk_bytes = machine.nodes > 1 && nccl_nvls_gb_per_s < 150 ? 32 * 1024 : kNvlsChunkBytes;
  shrink(k.chunk_bytes, bytes, concurrent, 64, 64 * 1024);
  shrink(k.chunk_bytes, bytes, concurrent, 8, 32 * 1024);
  shrink(k.chunk_bytes, bytes, concurrent, 2, 16 * 1024);
  return k;
}

double nvls_stages(Collective c, Algorithm a, std::uint32_t nodes) {
  const double in_node = c == Collective::kAllReduce ? 2 : 1;
  if (a != Algorithm::kNvlsTree || nodes < 2) return in_node;
  // NCCL's double binary tree over n nodes is ceil(log2 n) levels deep, and a chunk crosses each
  // on its way up and again down, a loop each: 4 loops deep on 2 nodes, 6 on 4. Measured on 2 x 8
  // H100s, the fill is 2.4-2.7 loops at 4 MB-1 GB (docs/nccl.md).
  return in_node + 2 * std::bit_width(nodes - 1);
}

NvlsTime nvls_time(const NvlsChunking& chunking, double stages, std::uint64_t bytes, double nvlink_gb_per_s,
                   double network_gb_per_s, double loop_cost_us) {
  const auto loop_time_us = [&](double loop_bytes) {
    return std::max(loop_bytes / (1000 * nvlink_gb_per_s) + loop_cost_us, loop_bytes / (1000 * network_gb_per_s));
  };
  const auto loop = static_cast<double>(chunking.loop_bytes());
  const auto b = static_cast<double>(bytes);
  NvlsTime t;
  t.transfer_us = b / loop * loop_time_us(loop);
  t.fill_us = (stages - 1) * loop_time_us(std::min(b, loop));
  const double nvlink_us = loop / (1000 * nvlink_gb_per_s);
  t.nvlink_share = nvlink_us / (nvlink_us + loop_cost_us);
  return t;
}

}  // namespace chakrasim::system::nccl
