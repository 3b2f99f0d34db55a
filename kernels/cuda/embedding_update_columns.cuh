// How a warp's lanes share a column pass of the embedding update
// (embedding_update.cu's sgd_tiles_kernel): its two layouts, a column every
// 32 lanes or four adjacent columns a lane. Device code only; private to
// embedding_update.cu.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda::embedding_update_columns {

/// Columns each lane accumulates per pass over a run: a warp covers
/// 32 * kColsPerLane columns at once (DLRM's 128 in one pass).
constexpr int kColsPerLane = 4;

// How a warp's lanes share a column pass [c0, c0 + 32 kColsPerLane): the
// two layouts of embedding_detail::UpdateColumns. Each gives a lane's share
// of a row (Part: the gradient as stored and the table's fp32 values, one
// position of a group), loads it, adds it and stores results; the runs'
// logic (add_slots, stream_runs) is the same for both. Each column sums its
// slots in slot order with the same roundings in both, so they give the
// same bits (tested: UpdateColumns).

/// kScalar: lane l owns columns c0 + l + 32 i (i < kColsPerLane), a
/// coalesced 128-byte (fp32) or 64-byte (bf16) piece of a row per i; any
/// width. kFullPass: the pass lies inside dim (no clamp). A group holds
/// four positions (32 four-byte loads a lane in flight; sgd_tiles_kernel's
/// registers with it: scripts/sass, 125 fp32 and 119 bf16 at c87c638).
template <typename TG, bool kFullPass>
struct StridedColumns {
  static constexpr int kGroup = 4;
  static constexpr int kSumGroup = 8;  ///< add_slots' (gradient rows only)
  static_assert(32 % kGroup == 0 && 32 % kSumGroup == 0, "a group never straddles two blocks of 32 positions");
  struct Part {
    TG g[kColsPerLane];
    float w[kColsPerLane];
  };
  int64_t c0, dim;
  __device__ StridedColumns(int64_t c0_, int64_t dim_) : c0(c0_), dim(dim_) {}
  __device__ int64_t col(int i) const { return c0 + static_cast<int64_t>(threadIdx.x & 31u) + 32 * i; }
  /// A column past dim reads column 0 of the row: a valid address, the value unused.
  __device__ int64_t clamped(int i) const { return kFullPass || col(i) < dim ? col(i) : 0; }
  __device__ void load_grad(Part& p, const TG* __restrict__ grad_row) const {
#pragma unroll
    for (int i = 0; i < kColsPerLane; ++i) p.g[i] = grad_row[clamped(i)];
  }
  __device__ void load(Part& p, const TG* __restrict__ grad_row, const float* __restrict__ table_row) const {
#pragma unroll
    for (int i = 0; i < kColsPerLane; ++i) {
      p.g[i] = grad_row[clamped(i)];
      p.w[i] = table_row[clamped(i)];
    }
  }
  __device__ static void add(float (&acc)[kColsPerLane], const Part& p) {
#pragma unroll
    for (int i = 0; i < kColsPerLane; ++i) acc[i] = __fadd_rn(acc[i], widen(p.g[i]));
  }
  /// table_row := the loaded values - lr * acc (the CPU's rounding).
  __device__ void apply(float* __restrict__ table_row, const Part& p, float lr, const float (&acc)[kColsPerLane]) const {
#pragma unroll
    for (int i = 0; i < kColsPerLane; ++i) {
      if (col(i) < dim) table_row[col(i)] = __fsub_rn(p.w[i], __fmul_rn(lr, acc[i]));
    }
  }
  __device__ void store(float* __restrict__ partial, const float (&acc)[kColsPerLane]) const {
#pragma unroll
    for (int i = 0; i < kColsPerLane; ++i) {
      if (col(i) < dim) partial[col(i)] = acc[i];
    }
  }
};

/// A lane's four adjacent columns of a gradient row as stored: one 16-byte
/// (fp32) or 8-byte (bf16) load, widened when added.
template <typename TG>
struct Quad;
template <>
struct Quad<float> {
  float4 v;
  __device__ void load(const float* p) { v = *reinterpret_cast<const float4*>(p); }
  __device__ float wide(int k) const { return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w; }
};
template <>
struct Quad<__nv_bfloat16> {
  uint2 v;  // two bf16 pairs, the lower column in each pair's low half
  __device__ void load(const __nv_bfloat16* p) { v = *reinterpret_cast<const uint2*>(p); }
  // bf16 -> fp32 is exact: the bits moved to the top half.
  __device__ float wide(int k) const {
    const uint32_t pair = k < 2 ? v.x : v.y;
    return __uint_as_float((k & 1) == 0 ? pair << 16 : pair & 0xffff0000u);
  }
};

/// kQuads: lane l owns the four adjacent columns c0 + 4l .. c0 + 4l + 3,
/// read and written in one access each (dim a multiple of 4 and every row
/// aligned to a quad: a lane's four columns are all in dim or all past it).
/// A group holds eight positions: twice the bytes in flight a warp of the
/// scalar layout's group in about its registers (sixteen 16- or 8-byte
/// loads a lane in flight; sgd_tiles_kernel's registers with it: 122 fp32,
/// 110 bf16 at c87c638).
template <typename TG>
struct QuadColumns {
  static constexpr int kGroup = 8;
  static constexpr int kSumGroup = 16;  ///< add_slots' (gradient rows only)
  static_assert(32 % kGroup == 0 && 32 % kSumGroup == 0, "a group never straddles two blocks of 32 positions");
  struct Part {
    Quad<TG> g;
    float4 w;
  };
  int64_t col;  ///< The lane's first column; 0 on a lane past dim (valid addresses, values unused).
  bool active;  ///< col < dim: the lane stores.
  __device__ QuadColumns(int64_t c0, int64_t dim) {
    const int64_t c = c0 + 4 * static_cast<int64_t>(threadIdx.x & 31u);
    active = c < dim;
    col = active ? c : 0;
  }
  __device__ void load_grad(Part& p, const TG* __restrict__ grad_row) const { p.g.load(grad_row + col); }
  __device__ void load(Part& p, const TG* __restrict__ grad_row, const float* __restrict__ table_row) const {
    p.g.load(grad_row + col);
    p.w = *reinterpret_cast<const float4*>(table_row + col);
  }
  __device__ static void add(float (&acc)[kColsPerLane], const Part& p) {
#pragma unroll
    for (int k = 0; k < kColsPerLane; ++k) acc[k] = __fadd_rn(acc[k], p.g.wide(k));
  }
  __device__ void apply(float* __restrict__ table_row, const Part& p, float lr, const float (&acc)[kColsPerLane]) const {
    if (active) {
      *reinterpret_cast<float4*>(table_row + col) =
          make_float4(__fsub_rn(p.w.x, __fmul_rn(lr, acc[0])), __fsub_rn(p.w.y, __fmul_rn(lr, acc[1])),
                      __fsub_rn(p.w.z, __fmul_rn(lr, acc[2])), __fsub_rn(p.w.w, __fmul_rn(lr, acc[3])));
    }
  }
  __device__ void store(float* __restrict__ partial, const float (&acc)[kColsPerLane]) const {
    if (active) *reinterpret_cast<float4*>(partial + col) = make_float4(acc[0], acc[1], acc[2], acc[3]);
  }
};
static_assert(kColsPerLane == 4, "a pass of the quad layout is the scalar layout's pass");

}  // namespace perflab::kernels::cuda::embedding_update_columns
