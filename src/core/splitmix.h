// SplitMix64's output function: every input bit moves every output bit, so neighbouring keys hash
// independently. Used wherever a seed and a key must give one well-mixed, platform-independent
// 64-bit value (ECMP's per-flow hash, the obfuscator's perturbation, the synthesizer's draws).
#pragma once

#include <cstdint>

namespace chakrasim {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace chakrasim
