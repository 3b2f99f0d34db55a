// One dense SGD step on one value, as SgdUpdate computes it and as the
// sparse update's launch does when it carries the dense SGD
// (EmbeddingArguments::dense): w -= lr * g with the product and the
// difference rounded separately (no fused multiply-add, as the CPU's
// `w -= lr * g`), and the updated weight's bf16 copy when asked. Device code.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace perflab::kernels::cuda {

__device__ __forceinline__ void sgd_step(float* __restrict__ w, float g, float lr, __nv_bfloat16* __restrict__ w_bf16,
                                         int64_t i) {
  const float updated = __fsub_rn(w[i], __fmul_rn(lr, g));
  w[i] = updated;
  if (w_bf16 != nullptr) w_bf16[i] = __float2bfloat16_rn(updated);
}

}  // namespace perflab::kernels::cuda
