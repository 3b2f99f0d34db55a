// How kernels read and write tensors stored in fp32 or bf16: values widened
// to fp32 as they are loaded, results rounded to nearest even as they are
// stored. Device code only.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace perflab::kernels::cuda {

__device__ inline float widen(float v) { return v; }
__device__ inline float widen(__nv_bfloat16 v) { return __bfloat162float(v); }

__device__ inline void put(float* p, int64_t i, float v) { p[i] = v; }
__device__ inline void put(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }

}  // namespace perflab::kernels::cuda
