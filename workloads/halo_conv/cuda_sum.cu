#include "workloads/halo_conv/cuda_sum.h"

#include <cuda_bf16.h>

#include "kernels/cuda/check.h"

namespace perflab::halo_conv {
namespace {

__global__ void add_kernel(float* dst, const float* src, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] += src[i];
}

__global__ void add_bf16_kernel(float* dst, const __nv_bfloat16* src, size_t n, bool accumulate) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    dst[i] = (accumulate ? dst[i] : 0.0f) + __bfloat162float(src[i]);
  }
}

constexpr unsigned kThreads = 256;

unsigned blocks_for(size_t n) {
  const size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 4096 ? blocks : 4096);
}

}  // namespace

void add_into(float* dst, const float* src, size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, src, n);
  kernels::cuda::check_launch("add_kernel", __FILE__, __LINE__);
}

void add_bf16_into(float* dst, const uint16_t* src, size_t n, bool accumulate, cudaStream_t stream) {
  if (n == 0) return;
  add_bf16_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, reinterpret_cast<const __nv_bfloat16*>(src), n,
                                                          accumulate);
  kernels::cuda::check_launch("add_bf16_kernel", __FILE__, __LINE__);
}

}  // namespace perflab::halo_conv
