// dst[i] += src[i] for i < n, enqueued on `stream` (the halo layer's sum of
// its slabs' weight gradients), from fp32 or bf16 slabs. Host-only header;
// the kernels are in cuda_sum.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace perflab::halo_conv {

void add_into(float* dst, const float* src, size_t n, cudaStream_t stream);
/// dst[i] = (accumulate ? dst[i] : 0) + src[i], src bf16 bits (widened exactly).
void add_bf16_into(float* dst, const uint16_t* src, size_t n, bool accumulate, cudaStream_t stream);

}  // namespace perflab::halo_conv
