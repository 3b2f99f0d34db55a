// bf16 numerics on the CPU, emulated in fp32 storage: values rounded to the
// nearest bf16 (8 bits of significand) where a bf16 kernel would store them,
// and stochastic rounding for parameter updates. The CPU backend's
// precision=bf16 (workloads/dlrm/model.h) is built from these, so that the
// arithmetic — not the speed or the memory — of bf16 training can be
// studied on any machine.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace perflab::kernels::cpu {

/// y[i] = x[i] rounded to the nearest bf16, ties to even (NaN stays NaN,
/// overflow goes to ±inf). `y` may be `x`.
void round_to_bf16(int64_t n, const float* x, float* y);

/// `x` rounded to one of its two neighbouring bf16 values, up with
/// probability equal to its distance from the lower one (in units of the
/// bf16 spacing), using the low 16 bits of `random`: E[result] = x, so
/// updates smaller than half a bf16 step are kept on average instead of
/// always lost. Non-finite values are returned as they are.
inline float stochastic_round_to_bf16(float x, uint32_t random) {
  if (!std::isfinite(x)) return x;
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  // The magnitude's bits below bf16 plus a uniform 16-bit number carry into
  // the kept bits with probability (those bits) / 2^16; sign-magnitude, so
  // this rounds the magnitude, and the sign stays.
  bits += random & 0xFFFFu;
  bits &= 0xFFFF0000u;
  float y = 0;
  std::memcpy(&y, &bits, sizeof y);
  return y;
}

/// 32 random bits from a counter: the same (key, a, b, c) always give the
/// same bits, so stochastic rounding is reproducible whatever the threads.
inline uint32_t counter_random(uint64_t key, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t z = key ^ (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL) ^ (c * 0x165667b19e3779f9ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<uint32_t>((z ^ (z >> 31)) >> 32);
}

}  // namespace perflab::kernels::cpu
