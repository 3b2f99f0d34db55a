// Plane copies of the CUDA 3D convolution's staged path: one thread per
// element of the destination, grid-stride loops, 64-bit indices; float or
// bf16 elements (one template each).
#include <cuda_bf16.h>

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

__device__ float widen(float v) { return v; }
__device__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ T narrow(float v);
template <>
__device__ float narrow<float>(float v) {
  return v;
}
template <>
__device__ __nv_bfloat16 narrow<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <typename T>
__global__ void gather_kernel(const T* __restrict__ src, int64_t src_planes, int64_t channel_stride,
                              int64_t batch_stride, int64_t channels, int64_t hw, int64_t first, int64_t count,
                              int64_t total, T* __restrict__ block) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const Element e = split(i, count, hw);
    const int64_t p = first + e.plane;
    T value = narrow<T>(0.0f);
    if (p >= 0 && p < src_planes) {
      value = src[(e.row / channels) * batch_stride + (e.row % channels) * channel_stride + p * hw + e.pixel];
    }
    block[i] = value;
  }
}

template <typename T>
__global__ void add_kernel(const T* __restrict__ block, int64_t first, int64_t count, T* __restrict__ dst,
                           int64_t dst_planes, int64_t channel_stride, int64_t batch_stride, int64_t channels,
                           int64_t hw, bool accumulate, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const Element e = split(i, dst_planes, hw);
    const int64_t q = e.plane - first;
    T* out = dst + (e.row / channels) * batch_stride + (e.row % channels) * channel_stride + e.plane * hw + e.pixel;
    const float term = q >= 0 && q < count ? widen(block[(e.row * count + q) * hw + e.pixel]) : 0.0f;
    *out = narrow<T>((accumulate ? widen(*out) : 0.0f) + term);
  }
}

template <typename T>
__global__ void flip_kernel(const T* __restrict__ w, T* __restrict__ out, int64_t c_in, int64_t c_out, int k,
                            int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = w[cpu::conv3d_adjoint_source(i, c_in, c_out, k)];
  }
}

template <typename T>
void gather_typed(const ConstDevicePlaneView& src, const PlaneShape& shape, int64_t first, int64_t count,
                  void* block, int64_t total, cudaStream_t stream) {
  gather_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const T*>(src.data), src.planes,
                                                               src.channel_stride, src.batch_stride, shape.channels,
                                                               shape.hw, first, count, total, static_cast<T*>(block));
  PERFLAB_CUDA_CHECK_LAUNCH("conv3d gather_kernel");
}

template <typename T>
void add_typed(const void* block, int64_t first, int64_t count, const DevicePlaneView& dst, const PlaneShape& shape,
               bool accumulate, int64_t total, cudaStream_t stream) {
  add_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const T*>(block), first, count,
                                                            static_cast<T*>(dst.data), dst.planes,
                                                            dst.channel_stride, dst.batch_stride, shape.channels,
                                                            shape.hw, accumulate, total);
  PERFLAB_CUDA_CHECK_LAUNCH("conv3d add_kernel");
}

}  // namespace

void gather_planes(const ConstDevicePlaneView& src, const PlaneShape& shape, int64_t first, int64_t count,
                   void* block, cudaStream_t stream) {
  const int64_t total = shape.batch * shape.channels * count * shape.hw;
  if (total == 0) return;
  if (shape.bf16) {
    gather_typed<__nv_bfloat16>(src, shape, first, count, block, total, stream);
  } else {
    gather_typed<float>(src, shape, first, count, block, total, stream);
  }
}

void flip_weights(const void* w, void* out, int64_t c_in, int64_t c_out, int k, bool bf16, cudaStream_t stream) {
  const int64_t total = c_in * c_out * int64_t{k} * k * k;
  if (total == 0) return;
  if (bf16) {
    flip_kernel<uint16_t><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const uint16_t*>(w),
                                                                      static_cast<uint16_t*>(out), c_in, c_out, k,
                                                                      total);
  } else {
    flip_kernel<float><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const float*>(w),
                                                                   static_cast<float*>(out), c_in, c_out, k, total);
  }
  PERFLAB_CUDA_CHECK_LAUNCH("conv3d flip_kernel");
}

void add_planes(const void* block, int64_t first, int64_t count, const DevicePlaneView& dst,
                const PlaneShape& shape, bool accumulate, cudaStream_t stream) {
  const int64_t total = shape.batch * shape.channels * dst.planes * shape.hw;
  if (total == 0) return;
  if (shape.bf16) {
    add_typed<__nv_bfloat16>(block, first, count, dst, shape, accumulate, total, stream);
  } else {
    add_typed<float>(block, first, count, dst, shape, accumulate, total, stream);
  }
}

}  // namespace perflab::kernels::cuda::conv3d_detail
