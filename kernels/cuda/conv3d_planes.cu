// Plane copies of the CUDA 3D convolution's staged path: one thread per
// element of the destination, grid-stride loops, 64-bit indices.
#include <algorithm>
#include <cstdint>

#include "kernels/cuda/check.h"
#include "kernels/cuda/conv3d_planes.h"

namespace perflab::kernels::cuda::conv3d_detail {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest

unsigned blocks_for(int64_t work) {
  return static_cast<unsigned>(std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

/// Element i of a dense [rows][planes][hw] array: its row (n * channels + c),
/// plane and pixel.
struct Element {
  int64_t row, plane, pixel;
};
__device__ Element split(int64_t i, int64_t planes, int64_t hw) {
  const int64_t per_row = planes * hw;
  return {i / per_row, (i % per_row) / hw, i % hw};
}

__global__ void gather_kernel(const float* __restrict__ src, int64_t src_planes, int64_t channel_stride,
                              int64_t batch_stride, int64_t channels, int64_t hw, int64_t first, int64_t count,
                              int64_t total, float* __restrict__ block) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const Element e = split(i, count, hw);
    const int64_t p = first + e.plane;
    float value = 0.0f;
    if (p >= 0 && p < src_planes) {
      value = src[(e.row / channels) * batch_stride + (e.row % channels) * channel_stride + p * hw + e.pixel];
    }
    block[i] = value;
  }
}

__global__ void add_kernel(const float* __restrict__ block, int64_t first, int64_t count, float* __restrict__ dst,
                           int64_t dst_planes, int64_t channel_stride, int64_t batch_stride, int64_t channels,
                           int64_t hw, bool accumulate, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const Element e = split(i, dst_planes, hw);
    const int64_t q = e.plane - first;
    float* out = dst + (e.row / channels) * batch_stride + (e.row % channels) * channel_stride + e.plane * hw +
                 e.pixel;
    const float term = q >= 0 && q < count ? block[(e.row * count + q) * hw + e.pixel] : 0.0f;
    *out = (accumulate ? *out : 0.0f) + term;
  }
}

}  // namespace

void gather_planes(const cpu::ConstPlaneView& src, const PlaneShape& shape, int64_t first, int64_t count,
                   float* block, cudaStream_t stream) {
  const int64_t total = shape.batch * shape.channels * count * shape.hw;
  if (total == 0) return;
  gather_kernel<<<blocks_for(total), kThreads, 0, stream>>>(src.data, src.planes, src.channel_stride,
                                                            src.batch_stride, shape.channels, shape.hw, first,
                                                            count, total, block);
  PERFLAB_CUDA_CHECK_LAUNCH("conv3d gather_kernel");
}

void add_planes(const float* block, int64_t first, int64_t count, const cpu::PlaneView& dst,
                const PlaneShape& shape, bool accumulate, cudaStream_t stream) {
  const int64_t total = shape.batch * shape.channels * dst.planes * shape.hw;
  if (total == 0) return;
  add_kernel<<<blocks_for(total), kThreads, 0, stream>>>(block, first, count, dst.data, dst.planes,
                                                         dst.channel_stride, dst.batch_stride, shape.channels,
                                                         shape.hw, accumulate, total);
  PERFLAB_CUDA_CHECK_LAUNCH("conv3d add_kernel");
}

}  // namespace perflab::kernels::cuda::conv3d_detail
