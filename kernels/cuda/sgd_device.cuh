// One dense SGD step on one value, as SgdUpdate computes it and as the
// sparse update's launch does when it carries the dense SGD
// (EmbeddingArguments::dense): w -= lr * g with the product and the
// difference rounded separately (no fused multiply-add, as the CPU's
// `w -= lr * g`), and the updated weight's bf16 copy when asked; and a
// thread's share of a whole range of them, four values per access where the
// pointers allow (the same arithmetic per value, so the same bits). Device
// code.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda {

__device__ __forceinline__ void sgd_step(float* __restrict__ w, float g, float lr, __nv_bfloat16* __restrict__ w_bf16,
                                         int64_t i) {
  const float updated = __fsub_rn(w[i], __fmul_rn(lr, g));
  w[i] = updated;
  if (w_bf16 != nullptr) w_bf16[i] = __float2bfloat16_rn(updated);
}

/// sgd_step over values [0, count) for thread `t` of `threads`: four at a
/// time (stored_types.cuh's load4/store4: a 16-byte fp32 access, two
/// 4-byte bf16 pairs) when w, g and w_bf16 are aligned for it, the
/// remainder one at a time.
template <typename G>
__device__ __forceinline__ void sgd_range(float* __restrict__ w, const G* __restrict__ g, float lr,
                                          __nv_bfloat16* __restrict__ w_bf16, int64_t count, int64_t t,
                                          int64_t threads) {
  int64_t first = 0;
  if (reinterpret_cast<uintptr_t>(w) % 16 == 0 && reinterpret_cast<uintptr_t>(g) % (4 * sizeof(G)) == 0 &&
      reinterpret_cast<uintptr_t>(w_bf16) % 8 == 0) {
    const int64_t quads = count / 4;
    for (int64_t q = t; q < quads; q += threads) {
      float4 v = load4(w + 4 * q);
      const float4 d = load4(g + 4 * q);
      v.x = __fsub_rn(v.x, __fmul_rn(lr, d.x));
      v.y = __fsub_rn(v.y, __fmul_rn(lr, d.y));
      v.z = __fsub_rn(v.z, __fmul_rn(lr, d.z));
      v.w = __fsub_rn(v.w, __fmul_rn(lr, d.w));
      store4(w + 4 * q, v);
      if (w_bf16 != nullptr) store4(w_bf16 + 4 * q, v);
    }
    first = 4 * quads;
  }
  for (int64_t i = first + t; i < count; i += threads) sgd_step(w, widen(g[i]), lr, w_bf16, i);
}

}  // namespace perflab::kernels::cuda
