// A 16-float vector for the CPU kernels' hot loops (GCC/clang vector
// extensions): one AVX-512 register in the x86-64-v4 clone of a
// PERFLAB_CPU_DISPATCH function, two AVX2 or four SSE registers in the
// others. Explicit vectors where the auto-vectoriser does not keep
// accumulators in registers (reductions into several sums, long
// accumulations into one chunk). Loads and stores are unaligned.
#pragma once

#include <cstring>

// Include only from .cc files whose functions that take, return or hold a
// vector are all inlined: no vector then crosses a call, and GCC's warning
// that such calls change ABI with AVX-512 (-Wpsabi) does not apply; it is off
// for the rest of the including file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace perflab::kernels::cpu::vec {

constexpr int kLanes = 16;

typedef float F32x16 __attribute__((vector_size(64), aligned(4)));  // NOLINT(modernize-use-using)
typedef float F32x8 __attribute__((vector_size(32)));                // NOLINT(modernize-use-using)
typedef float F32x4 __attribute__((vector_size(16)));                // NOLINT(modernize-use-using)

[[gnu::always_inline]] inline F32x16 load(const float* p) {
  F32x16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::always_inline]] inline void store(float* p, F32x16 v) { std::memcpy(p, &v, sizeof v); }

[[gnu::always_inline]] inline F32x16 broadcast(float x) { return F32x16{} + x; }

/// Σ of the lanes, by halves (a fixed order: lanes k and k+8 first, ...).
[[gnu::always_inline]] inline float sum(F32x16 v) {
  const F32x8 h8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                   __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const F32x4 h4 = __builtin_shufflevector(h8, h8, 0, 1, 2, 3) +
                   __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

}  // namespace perflab::kernels::cpu::vec
