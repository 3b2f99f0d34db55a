// Plane copies of the CUDA 3D convolution's staged path, float or bf16
// elements (one template each). The copies run on a grid of (pixels, planes,
// rows): a thread's plane and row come from its block, so an element costs
// no division. They were one thread per element of a flat index, split by
// six 64-bit divisions and remainders: on an H200 the overlapped halo
// exchange's gathers and adds took 876 + 766 us of its 7.68 ms TF32 step
// (P = 4, U-Net level 1; the naive exchange's whole step was 5.76 ms;
// docs/results/2026-11-26-h200-gpu-check-c9d4b27), far
// from the bytes they move. The flip stays on the flat index (weights: a
// few thousand elements).
//
// Where every plane row starts on 16 bytes (plane_pack), a thread moves 16
// bytes (four floats, eight bf16): after the grid change the next H200 run
// (docs/results/2026-11-27-h200-gpu-check-1590d6a) still had the gathers
// at 589.5 us TF32 and 824.4 us bf16 a step, one 256-element block per
// plane row (about 70,000 blocks a launch at U-Net level 1, P = 4).
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "kernels/cuda/check.h"
#include "kernels/cuda/conv3d_planes.h"
#include "kernels/cuda/vector_access.cuh"

namespace perflab::kernels::cuda::conv3d_detail {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = int64_t{1} << 20;  // grid-stride loops cover the rest
constexpr int64_t kMaxGridYZ = 65535;             // CUDA's limit on gridDim.y and .z

unsigned blocks_for(int64_t work) {
  return static_cast<unsigned>(std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

/// The plane copies' grid: x over a plane's pixels, y over planes, z over
/// rows (n * channels); each loops with its grid's stride past the limits.
dim3 plane_grid(int64_t hw, int64_t planes, int64_t rows) {
  return dim3(blocks_for(hw), static_cast<unsigned>(std::clamp<int64_t>(planes, 1, kMaxGridYZ)),
              static_cast<unsigned>(std::clamp<int64_t>(rows, 1, kMaxGridYZ)));
}

/// block [rows][count][hw] from src's planes first .. first + count - 1,
/// zero planes outside [0, src_planes). kVec elements a thread (hw a
/// multiple of kVec, every plane row aligned to them).
template <typename T, int kVec>
__global__ void gather_kernel(const T* __restrict__ src, int64_t src_planes, int64_t channel_stride,
                              int64_t batch_stride, int64_t channels, int64_t rows, int64_t hw, int64_t first,
                              int64_t count, T* __restrict__ block) {
  const int64_t units = hw / kVec;
  for (int64_t row = blockIdx.z; row < rows; row += gridDim.z) {
    const T* src_row = src + (row / channels) * batch_stride + (row % channels) * channel_stride;
    for (int64_t q = blockIdx.y; q < count; q += gridDim.y) {
      const int64_t p = first + q;
      const bool inside = p >= 0 && p < src_planes;
      const T* in = inside ? src_row + p * hw : nullptr;
      T* out = block + (row * count + q) * hw;
      for (int64_t u = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; u < units;
           u += int64_t{gridDim.x} * blockDim.x) {
        // A raw copy, or zero bits (+0 in fp32 and bf16).
        Group<T, kVec> x{};
        if (inside) x = *reinterpret_cast<const Group<T, kVec>*>(in + u * kVec);
        *reinterpret_cast<Group<T, kVec>*>(out + u * kVec) = x;
      }
    }
  }
}

/// Every plane p of dst: dst = (accumulate ? dst : 0) + block plane p -
/// first (zero outside [0, count)). kVec as gather_kernel's.
template <typename T, int kVec>
__global__ void add_kernel(const T* __restrict__ block, int64_t first, int64_t count, T* __restrict__ dst,
                           int64_t dst_planes, int64_t channel_stride, int64_t batch_stride, int64_t channels,
                           int64_t rows, int64_t hw, bool accumulate) {
  const int64_t units = hw / kVec;
  for (int64_t row = blockIdx.z; row < rows; row += gridDim.z) {
    T* dst_row = dst + (row / channels) * batch_stride + (row % channels) * channel_stride;
    for (int64_t p = blockIdx.y; p < dst_planes; p += gridDim.y) {
      const int64_t q = p - first;
      const bool inside = q >= 0 && q < count;
      const T* in = inside ? block + (row * count + q) * hw : nullptr;
      T* out = dst_row + p * hw;
      for (int64_t u = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; u < units;
           u += int64_t{gridDim.x} * blockDim.x) {
        // Both loads before any arithmetic; the sum in fp32, rounded once.
        float term[kVec] = {}, sum[kVec] = {};
        if (inside) load_group<T, kVec>(in + u * kVec, term);
        if (accumulate) load_group<T, kVec>(out + u * kVec, sum);
#pragma unroll
        for (int e = 0; e < kVec; ++e) sum[e] += term[e];
        store_group<T, kVec>(out + u * kVec, sum);
      }
    }
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

template <typename T, int kVec>
void gather_typed(const ConstDevicePlaneView& src, const PlaneShape& shape, int64_t first, int64_t count,
                  void* block, cudaStream_t stream) {
  const int64_t rows = shape.batch * shape.channels;
  gather_kernel<T, kVec><<<plane_grid(shape.hw / kVec, count, rows), kThreads, 0, stream>>>(
      static_cast<const T*>(src.data), src.planes, src.channel_stride, src.batch_stride, shape.channels, rows,
      shape.hw, first, count, static_cast<T*>(block));
  PERFLAB_CUDA_CHECK_LAUNCH("conv3d gather_kernel");
}

template <typename T>
void gather_as(const ConstDevicePlaneView& src, const PlaneShape& shape, int64_t first, int64_t count, void* block,
               cudaStream_t stream) {
  if (plane_pack(src.data, src.channel_stride, src.batch_stride, block, shape) > 1) {
    gather_typed<T, 16 / sizeof(T)>(src, shape, first, count, block, stream);
  } else {
    gather_typed<T, 1>(src, shape, first, count, block, stream);
  }
}

template <typename T, int kVec>
void add_typed(const void* block, int64_t first, int64_t count, const DevicePlaneView& dst, const PlaneShape& shape,
               bool accumulate, cudaStream_t stream) {
  const int64_t rows = shape.batch * shape.channels;
  add_kernel<T, kVec><<<plane_grid(shape.hw / kVec, dst.planes, rows), kThreads, 0, stream>>>(
      static_cast<const T*>(block), first, count, static_cast<T*>(dst.data), dst.planes, dst.channel_stride,
      dst.batch_stride, shape.channels, rows, shape.hw, accumulate);
  PERFLAB_CUDA_CHECK_LAUNCH("conv3d add_kernel");
}

template <typename T>
void add_as(const void* block, int64_t first, int64_t count, const DevicePlaneView& dst, const PlaneShape& shape,
            bool accumulate, cudaStream_t stream) {
  if (plane_pack(dst.data, dst.channel_stride, dst.batch_stride, block, shape) > 1) {
    add_typed<T, 16 / sizeof(T)>(block, first, count, dst, shape, accumulate, stream);
  } else {
    add_typed<T, 1>(block, first, count, dst, shape, accumulate, stream);
  }
}

}  // namespace

int plane_pack(const void* view, int64_t channel_stride, int64_t batch_stride, const void* block,
               const PlaneShape& shape) {
  // Every plane row starts on a whole pack when H*W and both strides are
  // multiples of it: so is their greatest common divisor.
  const int64_t span = std::gcd(shape.hw, std::gcd(channel_stride, batch_stride));
  return shape.bf16 ? vector_width<__nv_bfloat16>(span, {view, block}) : vector_width<float>(span, {view, block});
}

void gather_planes(const ConstDevicePlaneView& src, const PlaneShape& shape, int64_t first, int64_t count,
                   void* block, cudaStream_t stream) {
  const int64_t total = shape.batch * shape.channels * count * shape.hw;
  if (total == 0) return;
  if (shape.bf16) {
    gather_as<__nv_bfloat16>(src, shape, first, count, block, stream);
  } else {
    gather_as<float>(src, shape, first, count, block, stream);
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
    add_as<__nv_bfloat16>(block, first, count, dst, shape, accumulate, stream);
  } else {
    add_as<float>(block, first, count, dst, shape, accumulate, stream);
  }
}

}  // namespace perflab::kernels::cuda::conv3d_detail
