#include "tools/synthesize/loop_finder.h"

#include <algorithm>
#include <map>

#include "core/splitmix.h"

namespace chakrasim::tools {
namespace {

constexpr std::size_t kCandidates = 32;  // periods tried per position
constexpr int kMaxPasses = 16;

// Symbols are ids: the input's symbols first, then one id per distinct loop (its count and body).
class LoopCompressor {
 public:
  explicit LoopCompressor(std::uint64_t first_loop_id) : next_id_(first_loop_id) {}

  std::vector<std::uint64_t> compress(std::vector<std::uint64_t> seq) {
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      bool changed = false;
      seq = one_pass(seq, changed);
      if (!changed) break;
    }
    return seq;
  }

  std::vector<LoopItem> program(const std::vector<std::uint64_t>& seq) {
    std::vector<LoopItem> out;
    out.reserve(seq.size());
    for (const std::uint64_t id : seq) out.push_back(item(id));
    return out;
  }

 private:
  struct Loop {
    std::uint64_t count;
    std::vector<std::uint64_t> body;
  };

  LoopItem item(std::uint64_t id) {
    const auto it = loops_.find(id);
    if (it == loops_.end()) return LoopItem{static_cast<std::uint32_t>(id), 0, {}};
    LoopItem loop;
    loop.count = it->second.count;
    // The body was frozen when the loop was found; its own loops are found now.
    const std::vector<std::uint64_t> body = it->second.body;
    loop.body = program(compress(body));
    return loop;
  }

  std::uint64_t intern(std::uint64_t count, std::vector<std::uint64_t> body) {
    auto key = std::make_pair(count, body);
    const auto found = ids_.find(key);
    if (found != ids_.end()) return found->second;
    const std::uint64_t id = next_id_++;
    ids_.emplace(std::move(key), id);
    loops_.emplace(id, Loop{count, std::move(body)});
    return id;
  }

  std::vector<std::uint64_t> one_pass(const std::vector<std::uint64_t>& seq, bool& changed) {
    const std::size_t n = seq.size();
    // Polynomial hashes of every prefix (mod 2^64), so that two ranges compare in O(1).
    constexpr std::uint64_t kBase = 0x100000001b3ull;
    std::vector<std::uint64_t> prefix(n + 1, 0), power(n + 1, 1);
    for (std::size_t i = 0; i < n; ++i) {
      prefix[i + 1] = prefix[i] * kBase + splitmix64(seq[i]);
      power[i + 1] = power[i] * kBase;
    }
    auto hash = [&](std::size_t at, std::size_t len) { return prefix[at + len] - prefix[at] * power[len]; };
    // The next position holding the same symbol.
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::vector<std::size_t> next(n, kNone);
    std::map<std::uint64_t, std::size_t> last;
    for (std::size_t i = n; i-- > 0;) {
      const auto it = last.find(seq[i]);
      if (it != last.end()) next[i] = it->second;
      last[seq[i]] = i;
    }
    std::vector<std::uint64_t> out;
    out.reserve(n);
    std::size_t i = 0;
    while (i < n) {
      std::size_t best_period = 0, best_count = 1;
      std::size_t j = next[i];
      for (std::size_t tried = 0; j != kNone && tried < kCandidates; ++tried, j = next[j]) {
        const std::size_t period = j - i;
        if (2 * period > n - i) break;
        const std::uint64_t h = hash(i, period);
        std::size_t count = 1;
        while (i + (count + 1) * period <= n && hash(i + count * period, period) == h) ++count;
        if (count >= 2 && period * count > best_period * best_count) {
          best_period = period;
          best_count = count;
        }
      }
      // Hashes can collide: the repeat is checked symbol by symbol before it is taken.
      bool repeat = best_count >= 2;
      for (std::size_t k = 1; repeat && k < best_count; ++k) {
        repeat = std::equal(seq.begin() + static_cast<std::ptrdiff_t>(i),
                            seq.begin() + static_cast<std::ptrdiff_t>(i + best_period),
                            seq.begin() + static_cast<std::ptrdiff_t>(i + k * best_period));
      }
      if (!repeat) {
        out.push_back(seq[i++]);
        continue;
      }
      out.push_back(
          intern(best_count, std::vector<std::uint64_t>(seq.begin() + static_cast<std::ptrdiff_t>(i),
                                                        seq.begin() + static_cast<std::ptrdiff_t>(i + best_period))));
      i += best_period * best_count;
      changed = true;
    }
    return out;
  }

  std::uint64_t next_id_;
  std::map<std::pair<std::uint64_t, std::vector<std::uint64_t>>, std::uint64_t> ids_;
  std::map<std::uint64_t, Loop> loops_;
};

void expand_into(const std::vector<LoopItem>& program, std::vector<std::uint32_t>& out) {
  for (const LoopItem& item : program) {
    if (!item.is_loop()) {
      out.push_back(item.symbol);
      continue;
    }
    for (std::uint64_t k = 0; k < item.count; ++k) expand_into(item.body, out);
  }
}

}  // namespace

std::vector<LoopItem> find_loops(const std::vector<std::uint32_t>& symbols) {
  std::uint64_t first_loop_id = 0;
  for (const std::uint32_t s : symbols) first_loop_id = std::max<std::uint64_t>(first_loop_id, s + std::uint64_t{1});
  LoopCompressor compressor(first_loop_id);
  return compressor.program(compressor.compress(std::vector<std::uint64_t>(symbols.begin(), symbols.end())));
}

std::vector<std::uint32_t> expand(const std::vector<LoopItem>& program) {
  std::vector<std::uint32_t> out;
  expand_into(program, out);
  return out;
}

}  // namespace chakrasim::tools
