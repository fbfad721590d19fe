#include "compute/systolic/systolic_layer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <tuple>
#include <utility>

#include "core/error.h"

namespace chakrasim::compute::systolic {
namespace {

// 128-bit integers (a GCC and Clang extension) keep every product and quotient below exact.
__extension__ typedef unsigned __int128 u128;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

unsigned bit_length(u128 v) {
  const auto high = static_cast<std::uint64_t>(v >> 64);
  return high != 0 ? 128u - static_cast<unsigned>(std::countl_zero(high))
                   : 64u - static_cast<unsigned>(std::countl_zero(static_cast<std::uint64_t>(v)));
}

// a / b rounded once to the nearest double (ties to even), as Python divides two integers:
// converting both to double first would round twice once they pass 2^53.
double exact_ratio(u128 a, u128 b) {
  if (a == 0) return 0.0;
  // The shifted numerator must fit 128 bits: b below 2^72 (here b <= R x C x cycles). Beyond,
  // both lose their low bits first (no layer that size is exact anywhere).
  if (const unsigned over = bit_length(b); over > 72) {
    a >>= over - 72;
    b >>= over - 72;
    if (a == 0) return 0.0;
  }
  // A quotient of 55 or 56 bits, a remainder that says whether anything is left below it.
  const int shift = 55 - (static_cast<int>(bit_length(a)) - static_cast<int>(bit_length(b)));
  u128 q = 0;
  bool inexact = false;
  if (shift >= 0) {
    q = (a << shift) / b;
    inexact = (a << shift) % b != 0;
  } else {
    const u128 scaled = b << -shift;
    q = a / scaled;
    inexact = a % scaled != 0;
  }
  // Keep 53 bits; round on the rest, and on the remainder as a sticky bit.
  const int extra = static_cast<int>(bit_length(q)) - 53;
  const u128 kept = q >> extra;
  const u128 rest = q & ((u128{1} << extra) - 1);
  const u128 half = u128{1} << (extra - 1);
  u128 rounded = kept;
  if (rest > half || (rest == half && (inexact || (kept & 1) != 0))) ++rounded;
  return std::ldexp(static_cast<double>(static_cast<std::uint64_t>(rounded)), extra - shift);
}

// The layer as a GEMM on the array, and its folds.
struct Geometry {
  std::uint64_t eh = 0, ew = 0;  // ofmap height and width
  std::uint64_t m = 0, n = 0, k = 0;
  std::uint64_t spatial_rows = 0, spatial_cols = 0, temporal = 0;
  std::uint64_t r = 0, c = 0;
  std::uint64_t row_folds = 0, col_folds = 0, folds = 0;
  std::uint64_t fold_cycles = 0;  // P: every fold, partial or not
  // The fold length SCALE-sim's compute utilisation divides by: ws and is count C - 1 more.
  std::uint64_t util_cycles = 0;
  Dataflow dataflow = Dataflow::kOutputStationary;

  std::uint64_t rows_used(std::uint64_t row_fold) const { return std::min(r, spatial_rows - row_fold * r); }
  std::uint64_t cols_used(std::uint64_t col_fold) const { return std::min(c, spatial_cols - col_fold * c); }
};

void check(const ArrayShape& a, const Layer& l) {
  if (a.rows == 0 || a.cols == 0) fail("systolic array {} x {}: expected at least one row and column", a.rows, a.cols);
  auto positive = [&](std::uint64_t v, const char* what) {
    if (v == 0) fail("layer \"{}\": {} is 0; expected at least 1", l.name, what);
  };
  positive(l.ifmap_h, "the ifmap height");
  positive(l.ifmap_w, "the ifmap width");
  positive(l.filter_h, "the filter height");
  positive(l.filter_w, "the filter width");
  positive(l.channels, "the channel count");
  positive(l.filters, "the filter count");
  positive(l.stride_h, "the vertical stride");
  positive(l.stride_w, "the horizontal stride");
  if (l.filter_h > l.ifmap_h || l.filter_w > l.ifmap_w) {
    fail("layer \"{}\": a {} x {} filter on a {} x {} ifmap; expected a filter no larger than the ifmap (no padding)",
         l.name, l.filter_h, l.filter_w, l.ifmap_h, l.ifmap_w);
  }
  // Products the report forms must fit 64 bits (and the quotients' numerators 128).
  const u128 window = u128{l.filter_h} * l.filter_w * l.channels;
  const u128 pixels = u128{l.ifmap_h} * l.ifmap_w;
  if (window >> 40 != 0 || pixels >> 40 != 0 || l.filters >> 40 != 0 || window * pixels * l.filters >> 62 != 0) {
    fail("layer \"{}\": too large to count (ifmap {} x {}, window {}, {} filters); expected fewer than 2^62 MACs",
         l.name, l.ifmap_h, l.ifmap_w, static_cast<std::uint64_t>(window), l.filters);
  }
  if (a.rows >> 32 != 0 || a.cols >> 32 != 0) fail("systolic array {} x {}: too large", a.rows, a.cols);
}

Geometry geometry(const ArrayShape& a, const Layer& l) {
  check(a, l);
  Geometry g;
  g.eh = ceil_div(l.ifmap_h - l.filter_h + l.stride_h, l.stride_h);
  g.ew = ceil_div(l.ifmap_w - l.filter_w + l.stride_w, l.stride_w);
  g.m = g.eh * g.ew;
  g.n = l.filters;
  g.k = l.filter_h * l.filter_w * l.channels;
  g.r = a.rows;
  g.c = a.cols;
  g.dataflow = a.dataflow;
  switch (a.dataflow) {
    case Dataflow::kOutputStationary:
      std::tie(g.spatial_rows, g.spatial_cols, g.temporal) = std::tuple(g.m, g.n, g.k);
      break;
    case Dataflow::kWeightStationary:
      std::tie(g.spatial_rows, g.spatial_cols, g.temporal) = std::tuple(g.k, g.n, g.m);
      break;
    case Dataflow::kInputStationary:
      std::tie(g.spatial_rows, g.spatial_cols, g.temporal) = std::tuple(g.k, g.m, g.n);
      break;
  }
  g.row_folds = ceil_div(g.spatial_rows, g.r);
  g.col_folds = ceil_div(g.spatial_cols, g.c);
  g.folds = g.row_folds * g.col_folds;
  if (a.dataflow == Dataflow::kOutputStationary) {
    g.fold_cycles = g.temporal + g.r + g.c - 2;
    g.util_cycles = g.fold_cycles;
  } else {
    g.fold_cycles = 2 * g.r + g.c + g.temporal - 2;
    g.util_cycles = 2 * g.r + 2 * g.c + g.temporal - 3;
  }
  return g;
}

// Which ifmap elements a pixel's window reaches: rows 0..rmax and columns 0..cmax of the
// window (a window may overrun the ifmap: SCALE-sim pads nothing and skips those).
struct Box {
  std::uint64_t rmax = 0, cmax = 0;
};
std::optional<Box> pixel_box(const Layer& l, const Geometry& g, std::uint64_t pixel) {
  const std::uint64_t oh = pixel / g.ew;
  const std::uint64_t ow = pixel % g.ew;
  if (oh * l.stride_h > l.ifmap_h - 1 || ow * l.stride_w > l.ifmap_w - 1) return std::nullopt;
  return Box{std::min(l.filter_h - 1, l.ifmap_h - 1 - oh * l.stride_h),
             std::min(l.filter_w - 1, l.ifmap_w - 1 - ow * l.stride_w)};
}

// The largest / smallest window index j in [lo, hi] the pixel reaches (j = (r * fw + c) * ch + k).
std::optional<std::uint64_t> max_valid_j(const Layer& l, const Geometry& g, std::uint64_t pixel, std::uint64_t lo,
                                         std::uint64_t hi) {
  const auto box = pixel_box(l, g, pixel);
  if (!box) return std::nullopt;
  const std::uint64_t row = hi / (l.filter_w * l.channels);
  const std::uint64_t col = hi % (l.filter_w * l.channels) / l.channels;
  std::uint64_t j = hi;
  if (row > box->rmax) {
    j = (box->rmax * l.filter_w + box->cmax) * l.channels + l.channels - 1;
  } else if (col > box->cmax) {
    j = (row * l.filter_w + box->cmax) * l.channels + l.channels - 1;
  }
  return j >= lo ? std::optional(j) : std::nullopt;
}
std::optional<std::uint64_t> min_valid_j(const Layer& l, const Geometry& g, std::uint64_t pixel, std::uint64_t lo,
                                         std::uint64_t hi) {
  const auto box = pixel_box(l, g, pixel);
  if (!box) return std::nullopt;
  const std::uint64_t row = lo / (l.filter_w * l.channels);
  const std::uint64_t col = lo % (l.filter_w * l.channels) / l.channels;
  if (row > box->rmax) return std::nullopt;
  std::uint64_t j = lo;
  if (col > box->cmax) {
    if (row + 1 > box->rmax) return std::nullopt;
    j = (row + 1) * l.filter_w * l.channels;
  }
  return j <= hi ? std::optional(j) : std::nullopt;
}

using Span = std::optional<std::pair<std::uint64_t, std::uint64_t>>;  // first and last cycle within a fold

void widen(Span& span, std::uint64_t first, std::uint64_t last) {
  if (!span) {
    span.emplace(first, last);
  } else {
    span->first = std::min(span->first, first);
    span->second = std::max(span->second, last);
  }
}

// When, within fold (row_fold, col_fold), the array reads ifmap elements that exist.
Span ifmap_span(const Layer& l, const Geometry& g, std::uint64_t row_fold, std::uint64_t col_fold) {
  const std::uint64_t ru = g.rows_used(row_fold);
  const std::uint64_t cu = g.cols_used(col_fold);
  Span span;
  switch (g.dataflow) {
    case Dataflow::kOutputStationary:  // pixel fr*R + c on row c, window index t at cycle t + c
      for (std::uint64_t c = 0; c < ru; ++c) {
        if (const auto j = max_valid_j(l, g, row_fold * g.r + c, 0, g.k - 1)) widen(span, c, c + *j);
      }
      break;
    case Dataflow::kWeightStationary: {  // after R cycles of weights: pixel t, row j - lo at R + t + (j - lo)
      const std::uint64_t lo = row_fold * g.r;
      const std::uint64_t hi = lo + ru - 1;
      for (std::uint64_t p = 0; p < g.m; ++p) {
        const auto first = min_valid_j(l, g, p, lo, hi);
        if (!first) continue;
        widen(span, g.r + p + *first - lo, g.r + p + *max_valid_j(l, g, p, lo, hi) - lo);
      }
      break;
    }
    case Dataflow::kInputStationary: {  // loaded flipped, unskewed: row j - lo at cycle R - 1 - (j - lo)
      const std::uint64_t lo = row_fold * g.r;
      const std::uint64_t hi = lo + ru - 1;
      for (std::uint64_t c = 0; c < cu; ++c) {
        const std::uint64_t p = col_fold * g.c + c;
        const auto first = min_valid_j(l, g, p, lo, hi);
        if (!first) continue;
        const std::uint64_t last = *max_valid_j(l, g, p, lo, hi);
        widen(span, g.r - 1 - (last - lo), g.r - 1 - (*first - lo));
      }
      break;
    }
  }
  return span;
}

Span filter_span(const Geometry& g, std::uint64_t row_fold, std::uint64_t col_fold) {
  const std::uint64_t ru = g.rows_used(row_fold);
  const std::uint64_t cu = g.cols_used(col_fold);
  switch (g.dataflow) {
    case Dataflow::kOutputStationary: return std::pair(std::uint64_t{0}, g.k - 1 + cu - 1);
    case Dataflow::kWeightStationary: return std::pair(g.r - ru, g.r - 1);
    case Dataflow::kInputStationary: return std::pair(g.r, g.r + g.n - 1 + ru - 1);
  }
  return std::nullopt;
}

Span ofmap_span(const Geometry& g, std::uint64_t row_fold, std::uint64_t col_fold) {
  const std::uint64_t ru = g.rows_used(row_fold);
  const std::uint64_t cu = g.cols_used(col_fold);
  if (g.dataflow == Dataflow::kOutputStationary) {
    return std::pair(g.temporal - 1 + g.r - ru, g.temporal - 1 + g.r - 1 + cu - 1);
  }
  return std::pair(2 * g.r - 1, 2 * g.r - 1 + g.temporal - 1 + cu - 1);
}

// The first and last cycle of the whole layer with an access, folds running column fold by
// column fold (row folds inner), each fold_cycles long; `latency` is added (reads: 1).
template <typename SpanOf>
std::pair<std::int64_t, std::int64_t> first_and_last(const Geometry& g, std::uint64_t latency, SpanOf span_of) {
  std::pair<std::int64_t, std::int64_t> out{-1, -1};
  for (std::uint64_t f = 0; f < g.folds; ++f) {
    if (const Span s = span_of(f % g.row_folds, f / g.row_folds)) {
      out.first = static_cast<std::int64_t>(f * g.fold_cycles + s->first + latency);
      break;
    }
  }
  for (std::uint64_t f = g.folds; f-- > 0;) {
    if (const Span s = span_of(f % g.row_folds, f / g.row_folds)) {
      out.second = static_cast<std::int64_t>(f * g.fold_cycles + s->second + latency);
      break;
    }
  }
  return out;
}

// SRAM words read from the ifmap and filter SRAMs and written to the ofmap SRAM.
std::tuple<std::uint64_t, std::uint64_t, std::uint64_t> sram_accesses(const Geometry& g) {
  switch (g.dataflow) {
    case Dataflow::kOutputStationary:  // SCALE-sim adds R + C ofmap writes per fold
      return {g.col_folds * g.m * g.k, g.row_folds * g.k * g.n, g.m * g.n + g.folds * (g.r + g.c)};
    case Dataflow::kWeightStationary: return {g.col_folds * g.m * g.k, g.k * g.n, g.row_folds * g.m * g.n};
    case Dataflow::kInputStationary: return {g.m * g.k, g.col_folds * g.n * g.k, g.row_folds * g.m * g.n};
  }
  return {};
}

// Ofmap words written to DRAM: every partial sum the ofmap SRAM drains (os keeps them inside).
std::uint64_t ofmap_dram_words(const Geometry& g) {
  return g.dataflow == Dataflow::kOutputStationary ? g.m * g.n : g.row_folds * g.m * g.n;
}

// Ifmap rows (or columns) of extent n that some window of extent f at stride s reaches.
std::uint64_t covered(std::uint64_t n, std::uint64_t f, std::uint64_t s) {
  if (s <= f) return n;
  // Windows start at 0, s, 2s, ... below n (with s > f none starts past n - 1 and still fits
  // SCALE-sim's bound); all but the last cover f rows, the last what is left of n.
  const std::uint64_t windows = (n - 1) / s + 1;
  return (windows - 1) * f + std::min(f, n - (windows - 1) * s);
}

}  // namespace

std::optional<Dataflow> dataflow_of(const std::string& name) {
  if (name == "os") return Dataflow::kOutputStationary;
  if (name == "ws") return Dataflow::kWeightStationary;
  if (name == "is") return Dataflow::kInputStationary;
  return std::nullopt;
}

const char* dataflow_name(Dataflow dataflow) {
  switch (dataflow) {
    case Dataflow::kOutputStationary: return "os";
    case Dataflow::kWeightStationary: return "ws";
    case Dataflow::kInputStationary: return "is";
  }
  return "?";
}

Layer Layer::gemm(std::string name, std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  return Layer{std::move(name), m, k, 1, k, 1, n, 1, 1};
}

LayerFolds layer_folds(const ArrayShape& array, const Layer& layer) {
  const Geometry g = geometry(array, layer);
  return {g.folds, g.fold_cycles};
}

std::uint64_t layer_cycles(const ArrayShape& array, const Layer& layer) {
  const Geometry g = geometry(array, layer);
  return g.folds * g.fold_cycles - 1;
}

LayerFigures layer_figures(const ArrayShape& array, const Layer& layer) {
  const Geometry g = geometry(array, layer);
  LayerFigures out;
  out.fold_cycles = g.fold_cycles;
  out.folds = g.folds;
  out.macs = g.m * g.n * g.k;
  // The rows used over the row folds sum to the spatial rows, the columns likewise, so the mean
  // of rows x columns used over all folds is their product over the folds.
  const double cells = static_cast<double>(g.r) * static_cast<double>(g.c) * static_cast<double>(g.folds);
  out.mapping_efficiency = static_cast<double>(g.spatial_rows) * static_cast<double>(g.spatial_cols) / cells;
  out.compute_util = out.mapping_efficiency * static_cast<double>(g.temporal) / static_cast<double>(g.util_cycles);
  std::tie(out.ifmap_sram_reads, out.filter_sram_reads, out.ofmap_sram_writes) = sram_accesses(g);
  out.ifmap_words = covered(layer.ifmap_h, layer.filter_h, layer.stride_h) *
                    covered(layer.ifmap_w, layer.filter_w, layer.stride_w) * layer.channels;
  out.filter_words = g.k * g.n;
  out.ofmap_dram_writes = ofmap_dram_words(g);
  return out;
}

double memory_bound_cycles(const ArrayShape& array, const Layer& layer, double words_per_cycle) {
  const Geometry g = geometry(array, layer);
  const auto accesses = sram_accesses(g);
  const std::uint64_t ifmap_reads = std::get<0>(accesses), filter_reads = std::get<1>(accesses);
  // Half of an SRAM, in words, as SCALE-sim sizes its active buffer (KiB of one-word entries).
  auto half = [](std::uint64_t kib) { return static_cast<double>((kib * 1024 + 1) / 2); };
  auto streamed = [&](std::uint64_t matrix_words, std::uint64_t sram_reads, std::uint64_t kib) {
    const double h = half(kib);
    return static_cast<double>(matrix_words) <= h ? 0.0 : (static_cast<double>(sram_reads) - h) / words_per_cycle;
  };
  const double ifmap = streamed(g.m * g.k, ifmap_reads, array.ifmap_sram_kib);
  const double filter = streamed(g.k * g.n, filter_reads, array.filter_sram_kib);
  const double ofmap_half = half(array.ofmap_sram_kib);
  const auto writes = static_cast<double>(ofmap_dram_words(g));
  double ofmap = 0;
  if (ofmap_half == 0) {
    ofmap = writes / words_per_cycle;
  } else if (const double full = std::floor(writes / ofmap_half); full >= 2) {
    ofmap = (full - 1) * ofmap_half / words_per_cycle;
  }
  return std::max({ifmap, filter, ofmap});
}

void add_stall_cycles(LayerReport& report, const ArrayShape& array, std::uint64_t stall_cycles) {
  report.stall_cycles = stall_cycles;
  report.total_cycles += stall_cycles;
  if (report.total_cycles == 0) return;
  const u128 cells = u128{array.rows} * array.cols;
  report.overall_util_pct = exact_ratio(u128{report.m} * report.n * report.k * 100, u128{report.total_cycles} * cells);
  report.ifmap_sram_bandwidth = exact_ratio(report.ifmap_sram_reads, report.total_cycles);
  report.filter_sram_bandwidth = exact_ratio(report.filter_sram_reads, report.total_cycles);
  report.ofmap_sram_bandwidth = exact_ratio(report.ofmap_sram_writes, report.total_cycles);
}

LayerReport analyse_layer(const ArrayShape& array, const Layer& layer) {
  const Geometry g = geometry(array, layer);
  LayerReport out;
  out.m = g.m;
  out.n = g.n;
  out.k = g.k;
  out.row_folds = g.row_folds;
  out.col_folds = g.col_folds;
  out.total_cycles = g.folds * g.fold_cycles - 1;

  // Per-fold averages, summed in SCALE-sim's fold order (column folds outer) one double at a
  // time from 0, each term one rounding of an exact quotient, then / folds and x 100.
  const u128 cells = u128{g.r} * g.c;
  double mapping_sum = 0;
  double compute_sum = 0;
  for (std::uint64_t fc = 0; fc < g.col_folds; ++fc) {
    for (std::uint64_t fr = 0; fr < g.row_folds; ++fr) {
      const u128 used = u128{g.rows_used(fr)} * g.cols_used(fc);
      mapping_sum += exact_ratio(used, cells);
      compute_sum += exact_ratio(used * g.temporal, cells * g.util_cycles);
    }
  }
  const auto folds = static_cast<double>(g.folds);
  out.mapping_efficiency_pct = mapping_sum / folds * 100;
  out.compute_util_pct = compute_sum / folds * 100;
  // SCALE-sim divides by zero on a one-cycle layer (1 x 1 array, os, a 1 x 1 x 1 GEMM); 0 here.
  const u128 macs = u128{g.m} * g.n * g.k;
  out.overall_util_pct = out.total_cycles == 0 ? 0.0 : exact_ratio(macs * 100, u128{out.total_cycles} * cells);

  std::tie(out.ifmap_sram_reads, out.filter_sram_reads, out.ofmap_sram_writes) = sram_accesses(g);
  if (out.total_cycles > 0) {
    out.ifmap_sram_bandwidth = exact_ratio(out.ifmap_sram_reads, out.total_cycles);
    out.filter_sram_bandwidth = exact_ratio(out.filter_sram_reads, out.total_cycles);
    out.ofmap_sram_bandwidth = exact_ratio(out.ofmap_sram_writes, out.total_cycles);
  }
  std::tie(out.ifmap_sram_start, out.ifmap_sram_stop) =
      first_and_last(g, 1, [&](std::uint64_t fr, std::uint64_t fc) { return ifmap_span(layer, g, fr, fc); });
  std::tie(out.filter_sram_start, out.filter_sram_stop) =
      first_and_last(g, 1, [&](std::uint64_t fr, std::uint64_t fc) { return filter_span(g, fr, fc); });
  std::tie(out.ofmap_sram_start, out.ofmap_sram_stop) =
      first_and_last(g, 0, [&](std::uint64_t fr, std::uint64_t fc) { return ofmap_span(g, fr, fc); });

  // DRAM. Reads fill each operand's SRAM before cycle 0, in sets of 1% of it, at 10 words per
  // cycle; exact while every distinct element fits the working half (50 sets). Ofmap writes
  // drain after the last cycle, C words per cycle; exact while they fit the other half.
  auto reads = [&](std::uint64_t distinct, std::uint64_t sram_kib, std::uint64_t& count, std::int64_t& start,
                   std::int64_t& stop) {
    const std::uint64_t per_set = sram_kib * 1024 / 100;
    if (per_set == 0 || distinct >= 50 * per_set) out.dram_exact = false;
    const std::uint64_t set = std::max<std::uint64_t>(1, per_set);
    count = distinct;
    start = -static_cast<std::int64_t>(ceil_div(ceil_div(distinct, set) * set, 10));
    stop = -1;
  };
  const std::uint64_t distinct_ifmap = covered(layer.ifmap_h, layer.filter_h, layer.stride_h) *
                                       covered(layer.ifmap_w, layer.filter_w, layer.stride_w) * layer.channels;
  reads(distinct_ifmap, array.ifmap_sram_kib, out.ifmap_dram_reads, out.ifmap_dram_start, out.ifmap_dram_stop);
  reads(g.k * g.n, array.filter_sram_kib, out.filter_dram_reads, out.filter_dram_start, out.filter_dram_stop);
  out.ofmap_dram_writes = ofmap_dram_words(g);
  if (out.ofmap_dram_writes > array.ofmap_sram_kib * 1024 / 2) out.dram_exact = false;
  out.ofmap_dram_start = static_cast<std::int64_t>(out.total_cycles);
  out.ofmap_dram_stop = out.ofmap_dram_start + static_cast<std::int64_t>(ceil_div(out.ofmap_dram_writes, g.c)) - 1;
  return out;
}

}  // namespace chakrasim::compute::systolic
