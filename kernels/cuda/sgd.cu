// Dense SGD and the fp32 -> bf16 copy on the GPU.
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/sgd.h"
#include "kernels/cuda/sgd_device.cuh"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest

unsigned blocks_for(int64_t work) {
  return static_cast<unsigned>(
      std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <typename G>
__global__ void sgd_kernel(int64_t count, float* __restrict__ w, const G* __restrict__ g,
                           const float* __restrict__ lr_device,
                           __nv_bfloat16* __restrict__ w_bf16) {
  wait_for_prior_kernels();
  sgd_range(w, g, *lr_device, w_bf16, count, blockIdx.x * int64_t{blockDim.x} + threadIdx.x,
            int64_t{gridDim.x} * blockDim.x);
}

/// dst = bf16(src): flat (row == 0), or rows of `row` written `stride` apart.
__global__ void cast_bf16_kernel(int64_t count, const float* __restrict__ src,
                                 __nv_bfloat16* __restrict__ dst, int64_t row, int64_t stride) {
  wait_for_prior_kernels();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t at = row == 0 ? i : i / row * stride + i % row;
    dst[at] = __float2bfloat16_rn(src[i]);
  }
}

}  // namespace

Status SgdUpdate::can_implement(const SgdArguments& a) {
  if (a.count < 1)
    return Status::invalid("sgd: count must be at least 1, got " + std::to_string(a.count));
  if (a.weights == nullptr) return Status::invalid("sgd: weights is null");
  if ((a.gradients == nullptr) == (a.gradients_bf16 == nullptr)) {
    return Status::invalid("sgd: set exactly one of gradients and gradients_bf16");
  }
  if (a.lr_device == nullptr) return Status::invalid("sgd: lr_device is null");
  return Status::success();
}

size_t SgdUpdate::workspace_bytes(const SgdArguments&) { return 0; }

void SgdUpdate::run(const SgdArguments& a, void*, cudaStream_t stream) {
  // A thread per four values (sgd_range), or fewer threads looping.
  unsigned blocks = blocks_for((a.count + 3) / 4);
  if (a.max_blocks > 0 && static_cast<int64_t>(blocks) > a.max_blocks) blocks = static_cast<unsigned>(a.max_blocks);
  if (a.gradients_bf16 != nullptr) {
    launch_kernel(sgd_kernel<__nv_bfloat16>, blocks, kThreads, 0, stream, a.count, a.weights, a.gradients_bf16,
                  a.lr_device, a.weights_bf16);
  } else {
    launch_kernel(sgd_kernel<float>, blocks, kThreads, 0, stream, a.count, a.weights, a.gradients,
                  a.lr_device, a.weights_bf16);
  }
  PERFLAB_CUDA_CHECK_LAUNCH("sgd_kernel");
}

Status CastFloatToBf16::can_implement(const CastArguments& a) {
  if (a.count < 1)
    return Status::invalid("cast to bf16: count must be at least 1, got " +
                           std::to_string(a.count));
  if (a.src == nullptr) return Status::invalid("cast to bf16: src is null");
  if (a.dst == nullptr) return Status::invalid("cast to bf16: dst is null");
  if (a.row < 0) return Status::invalid("cast to bf16: row must be 0 or positive, got " + std::to_string(a.row));
  if (a.row > 0 && a.count % a.row != 0) {
    return Status::invalid("cast to bf16: count " + std::to_string(a.count) + " is not a multiple of row " +
                           std::to_string(a.row));
  }
  if (a.row > 0 && a.dst_stride < a.row) {
    return Status::invalid("cast to bf16: dst_stride " + std::to_string(a.dst_stride) + " is below row " +
                           std::to_string(a.row));
  }
  return Status::success();
}

size_t CastFloatToBf16::workspace_bytes(const CastArguments&) { return 0; }

void CastFloatToBf16::run(const CastArguments& a, void*, cudaStream_t stream) {
  launch_kernel(cast_bf16_kernel, blocks_for(a.count), kThreads, 0, stream, a.count, a.src, a.dst,
                a.row, a.dst_stride);
  PERFLAB_CUDA_CHECK_LAUNCH("cast_bf16_kernel");
}

LaunchList SgdUpdate::launches(const SgdArguments& a, bool bf16_copy) {
  const double n = static_cast<double>(a.count);
  const double copy = bf16_copy ? 2 * n : 0;
  const double gradients = a.gradients_bf16 != nullptr ? 2 * n : 4 * n;
  return {{"sgd_kernel", "dense SGD", "", {2 * n * sizeof(float) + gradients + copy, 2 * n, "fp32"}}};
}

LaunchList CastFloatToBf16::launches(const CastArguments& a) {
  return {{"cast_bf16_kernel", "cast to bf16", "", {static_cast<double>(a.count) * 6, 0, ""}}};
}

}  // namespace perflab::kernels::cuda
