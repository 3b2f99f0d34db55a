// Seeded random inputs shared by kernel tests and benchmarks.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace perflab::test_support {

/// `n` floats uniform in [lo, hi), from a generator seeded with `seed`.
inline std::vector<float> random_vector(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& value : v) value = dist(gen);
  return v;
}

}  // namespace perflab::test_support
