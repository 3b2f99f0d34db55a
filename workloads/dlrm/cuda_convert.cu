// Device helpers of the DLRM CUDA model (see cuda_convert.h).
#include "workloads/dlrm/cuda_convert.h"

#include <cuda_bf16.h>

#include <algorithm>

#include "kernels/cuda/check.h"

namespace perflab::dlrm {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 16;  // grid-stride loops cover the rest

__global__ void widen_kernel(int64_t n, const __nv_bfloat16* __restrict__ src,
                             float* __restrict__ dst) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = __bfloat162float(src[i]);
  }
}

__global__ void set_float_kernel(float* dst, float value) { *dst = value; }

}  // namespace

void cast_bf16_to_float(int64_t n, const void* src, float* dst, cudaStream_t stream) {
  if (n < 1) return;
  const auto blocks =
      static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
  widen_kernel<<<blocks, kThreads, 0, stream>>>(n, static_cast<const __nv_bfloat16*>(src), dst);
  PERFLAB_CUDA_CHECK_LAUNCH("widen_kernel");
}

kernels::LaunchList cast_bf16_to_float_launches(int64_t n) {
  if (n < 1) return {};
  return {{"widen_kernel", "cast to fp32", "", {static_cast<double>(n) * 6, 0, ""}}};
}

kernels::LaunchList set_device_float_launches() {
  return {{"set_float_kernel", "a float written on the device", "", {sizeof(float), 0, ""}}};
}

void set_device_float(float* dst, float value, cudaStream_t stream) {
  set_float_kernel<<<1, 1, 0, stream>>>(dst, value);
  PERFLAB_CUDA_CHECK_LAUNCH("set_float_kernel");
}

}  // namespace perflab::dlrm
