// How the CUDA-core interaction kernels (interaction.cu) bring a sample's
// features into shared memory: x's row, then the embedding rows from the
// gathered tensor or, with the lookup fused in, from the tables themselves
// (interaction_detail.cuh's row sources). Private to interaction.cu.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/interaction_detail.cuh"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda::interaction_detail {

/// The loader with the lookup fused in and rows of at least 32 values
/// where cp.async cannot copy them (Loader::kBatched: dim or z's stride not
/// a multiple of 4, or tables not 16-byte aligned): x by every thread, then
/// a warp per embedding row, kRowBatch rows a warp at a time: their starts
/// (an id and an offset read each) first, then their values, then the
/// stores, so a batch's reads are in flight together. A row past the last
/// reads the batch's first row again (valid addresses, no conditional
/// loads) and is not stored. One row a warp at a time kept a read or two a
/// lane in flight (sm_90 SASS; the forward took 642 us at TF32 batch 65,536
/// on an H200, 2.9x its floor: docs/results/2026-11-26-h200-gpu-check-c9d4b27).
/// The aligned case, DLRM's, now takes load_features_async: the same reads
/// all in flight with no registers held (this loader's 16-byte form took
/// 56-64 registers).
constexpr int kRowBatch = 4;

template <typename TA, typename Rows>
__device__ void load_features_batched(const TA* xb, const Rows& rows, int64_t b, int features, int dim,
                                      int stride, float* z, TA* x_out) {
  for (int d = static_cast<int>(threadIdx.x); d < dim; d += static_cast<int>(blockDim.x)) {
    z[d] = widen(xb[d]);
    if (x_out != nullptr) x_out[d] = xb[d];
  }
  const int lane = static_cast<int>(threadIdx.x % 32), warps = static_cast<int>(blockDim.x / 32);
  for (int f0 = 1 + static_cast<int>(threadIdx.x / 32); f0 < features; f0 += kRowBatch * warps) {
    int64_t start[kRowBatch];
#pragma unroll
    for (int i = 0; i < kRowBatch; ++i) {
      const int f = f0 + i * warps;
      start[i] = rows.start(b, (f < features ? f : f0) - 1);
    }
    for (int d = lane; d < dim; d += 32) {
      float v[kRowBatch];
#pragma unroll
      for (int i = 0; i < kRowBatch; ++i) v[i] = rows.at(start[i], d);
#pragma unroll
      for (int i = 0; i < kRowBatch; ++i) {
        const int f = f0 + i * warps;
        if (f < features) z[f * stride + d] = v[i];
      }
    }
  }
}

/// How a kernel loads a sample's embedding rows (the host picks, by async_rows
/// and the batch).
///   kAsync     with the lookup fused in, 16-byte aligned fp32 tables and
///              16-byte aligned rows of z (dim % 4 == 0 and stride % 4 ==
///              0): every row's 16-byte pieces copied global -> shared
///              asynchronously (cp.async, load_features_async), all of a
///              sample's rows in flight at once with no registers held.
///   kBatched   otherwise with the lookup, rows of at least 32 values:
///              kRowBatch rows a warp in registers at a time
///              (load_features_batched; the forward, and the backward up to
///              kLatencyBoundBatch samples).
///   kRowByRow  one row a warp at a time (the backward past
///              kLatencyBoundBatch, where registers are occupancy).
/// kAsync takes every dim that is a multiple of 4; the other two fall back
/// to the flat loader for rows under 32 values, as do rows without a costly
/// start (the gathered tensor) whatever the loader.
enum class Loader { kAsync, kBatched, kRowByRow };

/// Whether `rows` can be copied with cp.async into rows of z `stride`
/// floats apart: fp32 tables, 16-byte aligned, dim and stride multiples of 4.
template <typename Rows>
bool async_rows(const Rows& rows, int64_t dim, int64_t stride) {
  if constexpr (Rows::kCostlyStart) {
    return dim % 4 == 0 && stride % 4 == 0 && reinterpret_cast<uintptr_t>(rows.tables) % 16 == 0;
  } else {
    return false;
  }
}

/// The features with the lookup fused in (Loader::kAsync): x by every
/// thread (widened; copied through to x_out when not null), then the
/// embedding rows by cp.async, 16 bytes a lane: 32 rows' starts at a time
/// (lane i finds row r0 + i's: an id and an offset read, every warp alike,
/// the same addresses), then warp w copies rows r0 + w, r0 + w + warps, ...
/// of them, each row's start broadcast from the lane that found it. Every
/// copy is issued before the thread waits for its own (one round trip for
/// a sample's rows, where the batched loader's 16-byte form held them in
/// registers: 56-64 of them). bf16 embeddings (TE) are stored as the
/// tables round to them, each lane rounding in place what it copied. The
/// caller's __syncthreads makes every thread's copies visible to the block.
template <typename TA, typename TE>
__device__ void load_features_async(const TA* xb, const LookupRows<TE>& rows, int64_t b, int features, int dim,
                                    int stride, float* z, TA* x_out) {
  for (int d = static_cast<int>(threadIdx.x); d < dim; d += static_cast<int>(blockDim.x)) {
    z[d] = widen(xb[d]);
    if (x_out != nullptr) x_out[d] = xb[d];
  }
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int warps = static_cast<int>(blockDim.x / 32);
  const int count = features - 1;  // embedding rows
  // This lane's pieces: rows r0 + j (j = warp, warp + warps, ... below n,
  // 32 rows a round), columns 4 lane, 4 lane + 128, ...
  for (int r0 = 0; r0 < count; r0 += 32) {
    const int n = count - r0 < 32 ? count - r0 : 32;
    const int64_t mine = lane < n ? rows.start(b, r0 + lane) : 0;
    for (int j = warp; j < n; j += warps) {
      const int64_t start = __shfl_sync(0xffffffffu, mine, j);
      float* row = z + (1 + r0 + j) * stride;
      for (int d = 4 * lane; d < dim; d += 128) __pipeline_memcpy_async(row + d, rows.tables + start + d, 16);
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  asm volatile("" ::: "memory");  // this lane's reads of z below stay after the wait
  if constexpr (!std::is_same_v<TE, float>) {
    // The same pieces (no starts needed), rounded as TE stores them.
    for (int r0 = 0; r0 < count; r0 += 32) {
      const int n = count - r0 < 32 ? count - r0 : 32;
      for (int j = warp; j < n; j += warps) {
        float* row = z + (1 + r0 + j) * stride;
        for (int d = 4 * lane; d < dim; d += 128) {
          const float4 v = *reinterpret_cast<const float4*>(row + d);
          *reinterpret_cast<float4*>(row + d) =
              make_float4(as_stored<TE>(v.x), as_stored<TE>(v.y), as_stored<TE>(v.z), as_stored<TE>(v.w));
        }
      }
    }
  }
}

/// Copies sample b's features into z [features, stride] (x first, then the
/// embedding rows from `rows`, interaction_detail.cuh), widened to fp32;
/// also copies x through to `x_out` (its own type: exact) when not null.
/// With the lookup fused in: kAsync, every row at once by cp.async
/// (load_features_async, any dim that is a multiple of 4); else, rows of at
/// least 32 values, a warp per feature row: the row's start (an id and an
/// offset read) is found once per row, and the lanes read consecutive
/// columns (kBatched: several rows a warp at a time, load_features_batched).
/// Otherwise every thread takes the next element of the flat features x
/// dim range, so short rows keep the whole block busy. Indices within a sample are 32-bit: features *
/// stride fits the block's shared memory (check() caps it at 48 KiB).
template <Loader kLoader, typename TA, typename Rows>
__device__ void load_features(const TA* xb, const Rows& rows, int64_t b, int features, int dim, int stride,
                              float* z, TA* x_out) {
  if constexpr (kLoader == Loader::kAsync && Rows::kCostlyStart) {
    load_features_async(xb, rows, b, features, dim, stride, z, x_out);  // the host checked async_rows
    return;
  }
  if constexpr (kLoader == Loader::kBatched && Rows::kCostlyStart) {
    if (dim >= 32) {
      load_features_batched(xb, rows, b, features, dim, stride, z, x_out);
      return;
    }
  }
  if (!Rows::kCostlyStart || dim < 32) {
    const int total = features * dim;
    for (int k = static_cast<int>(threadIdx.x); k < total; k += static_cast<int>(blockDim.x)) {
      const int f = k / dim;
      const int d = k - f * dim;
      if (k < dim) {
        z[d] = widen(xb[k]);
        if (x_out != nullptr) x_out[k] = xb[k];
      } else {
        z[f * stride + d] = rows.at(rows.start(b, f - 1), d);
      }
    }
    return;
  }
  const int lane = static_cast<int>(threadIdx.x % 32), warps = static_cast<int>(blockDim.x / 32);
  for (int f = static_cast<int>(threadIdx.x / 32); f < features; f += warps) {
    if (f == 0) {
      for (int d = lane; d < dim; d += 32) {
        z[d] = widen(xb[d]);
        if (x_out != nullptr) x_out[d] = xb[d];
      }
    } else {
      const int64_t s = rows.start(b, f - 1);
      float* zf = z + f * stride;
      for (int d = lane; d < dim; d += 32) zf[d] = rows.at(s, d);
    }
  }
}

}  // namespace perflab::kernels::cuda::interaction_detail
