// Private to the CUDA 3D convolution (kernels/cuda/conv3d.cc): the plane
// copies of its staged path, between a strided plane view and the dense,
// zero-padded block cuDNN runs on. Host-only declarations; the kernels are in
// conv3d_planes.cu. Both only enqueue on the stream.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/conv3d.h"

namespace perflab::kernels::cuda::conv3d_detail {

/// Sizes shared by a view and its block, and their element.
struct PlaneShape {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t hw = 0;     ///< H*W.
  bool bf16 = false;  ///< Elements are bf16 bits (else float).
};

/// Elements a thread of the plane copies moves at once: 16 bytes' worth (4
/// floats, 8 bf16) where shape.hw and both strides are multiples of it and
/// `view` and `block` (either may be null) start on 16 bytes, so every plane
/// row does; else 1. Host-only: reads no memory.
int plane_pack(const void* view, int64_t channel_stride, int64_t batch_stride, const void* block,
               const PlaneShape& shape);

/// block[n][c][q] = src plane first + q of (n, c) for q in [0, count), zero
/// where that plane is outside [0, src.planes). block is dense
/// [batch][channels][count][hw].
void gather_planes(const ConstDevicePlaneView& src, const PlaneShape& shape, int64_t first, int64_t count,
                   void* block, cudaStream_t stream);

/// For every plane p of dst: dst = (accumulate ? dst : 0) + block plane
/// p - first, the block's term zero where p - first is outside [0, count)
/// (block may be null when count is 0). bf16: the sum is formed in fp32 and
/// rounded to the nearest bf16 once.
void add_planes(const void* block, int64_t first, int64_t count, const DevicePlaneView& dst,
                const PlaneShape& shape, bool accumulate, cudaStream_t stream);

/// out = the weights w [C_out][C_in][k^3] flipped and transposed to
/// [C_in][C_out][k^3] (cpu::conv3d_adjoint_source's mapping), float or bf16
/// bits as `bf16` says: the backward data pass as a forward convolution.
void flip_weights(const void* w, void* out, int64_t c_in, int64_t c_out, int k, bool bf16, cudaStream_t stream);

}  // namespace perflab::kernels::cuda::conv3d_detail
