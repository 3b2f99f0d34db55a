// dst[i] += src[i] for i < n, enqueued on `stream` (the halo layer's sum of
// its slabs' weight gradients). Host-only header; the kernel is in cuda_sum.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace perflab::halo_conv {

void add_into(float* dst, const float* src, size_t n, cudaStream_t stream);

}  // namespace perflab::halo_conv
