// The CUDA-core forward's pair sums (interaction.cu's
// interaction_forward_kernel), once a sample's features are in shared
// memory: register blocks of 4 x 4 feature rows, each summed by four
// adjacent lanes over interleaved 16-byte vectors of the rows, then
// combined by two rounds of shuffles (twelve a lane). Private to
// interaction.cu; the block indexing is host-callable for its test
// (tests/kernels/cuda/interaction_pair_blocks_test.cc).
//
// Why: the form before (a thread per 2 x 2 block of rows over every column)
// loaded four 16-byte vectors from shared memory per sixteen multiply-adds
// (scripts/sass at a17b825: 4 LDS.128 per 16 FFMA in the loop). An SM serves
// a warp's 16-byte shared loads of distinct rows in at least four passes
// (512 bytes, 128 a pass) and issues four warps' multiply-adds a clock, so
// the loads, not the arithmetic, set the pace: at DLE's shape (27 features,
// dim 128) about 1,300-2,000 passes a sample, depending on how many of a
// warp's loads the hardware merges, against 512 clocks of multiply-adds.
// At TF32 batch 65,536 on an H200 that is 340-520 us of the kernel's
// measured 657.9 us (1590d6a, 3.0x its floor; a count from the code, not a
// profiler reading). A 4 x 4 block makes sixty-four multiply-adds per eight
// loads: about 560-900 passes a sample, for 28% more multiply-adds (the
// diagonal blocks' upper halves, computed and dropped).
#pragma once

#include <cstdint>

#include "base/host_device.h"
#include "kernels/cuda/pair_index.h"
#if defined(__CUDACC__)
#include "kernels/cuda/stored_types.cuh"
#endif

namespace perflab::kernels::cuda::interaction_detail {

/// Feature rows on each side of a block of pairs.
constexpr int kBlockRows = 4;
/// Adjacent lanes that share a block: lane s of them sums 16-byte vectors
/// s, s + kBlockSlices, ... of the rows. Two shuffle rounds (lanes 2 and 1
/// apart) combine them, so it is 4 and a block's lanes sit in one warp.
constexpr int kBlockSlices = 4;

/// Blocks of pairs for `features` rows: the lower triangle, diagonal
/// included, of ceil(features / kBlockRows) row groups.
PERFLAB_HOST_DEVICE inline int pair_blocks(int features) {
  const int groups = (features + kBlockRows - 1) / kBlockRows;
  return groups * (groups + 1) / 2;
}

/// The row groups gi >= gj of block q = gi (gi + 1) / 2 + gj: row by row,
/// so consecutive blocks share gi (one set of a-rows, broadcast) and their
/// c-rows are kBlockRows rows apart.
PERFLAB_HOST_DEVICE inline void block_groups(int q, int* gi, int* gj) {
  int i = 0;
  pair_from_index(q, &i, gj);  // q = i (i - 1) / 2 + gj with gj < i
  *gi = i - 1;
}

/// The pair (i, j) that lane `slice` of the block of row groups gi >= gj
/// writes as its k-th sum (after reduce_scatter_rows, lane s holds a-row s
/// against the four c-rows): i = 4 gi + slice, j = 4 gj + k; whether that
/// is one of the features' pairs (i < features and j < i: a diagonal
/// block's upper half and the rows past the last feature are not).
PERFLAB_HOST_DEVICE inline bool block_pair(int gi, int gj, int slice, int k, int features, int* i, int* j) {
  *i = kBlockRows * gi + slice;
  *j = kBlockRows * gj + k;
  return *i < features && *j < *i;
}

#if defined(__CUDACC__)

/// Four lanes' 4 x 4 partial sums (acc[r][k]: a-row r against c-row k)
/// into lane s's row s: round one (lanes 2 apart) keeps rows 0-1 in lanes
/// 0-1 and rows 2-3 in lanes 2-3, round two (lanes 1 apart) one row a lane.
/// Twelve shuffles a lane, among the four lanes alone (`group`: their
/// mask), so lanes of other blocks, or of none, need not take part. Each
/// sum is (p0 + p2) + (p1 + p3) of the lanes' partials, whichever lane adds
/// it (fp32 addition commutes exactly).
__device__ __forceinline__ void reduce_scatter_rows(const float (&acc)[kBlockRows][kBlockRows], int slice,
                                                    unsigned group, float (&sums)[kBlockRows]) {
  static_assert(kBlockRows == 4 && kBlockSlices == 4, "two rounds of shuffles, one row a lane");
  const bool high = (slice & 2) != 0;
  float pair[2][kBlockRows];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int k = 0; k < kBlockRows; ++k) {
      const float keep = high ? acc[2 + h][k] : acc[h][k];
      const float give = high ? acc[h][k] : acc[2 + h][k];
      pair[h][k] = keep + __shfl_xor_sync(group, give, 2);
    }
  }
  const bool odd = (slice & 1) != 0;
#pragma unroll
  for (int k = 0; k < kBlockRows; ++k) {
    const float keep = odd ? pair[1][k] : pair[0][k];
    const float give = odd ? pair[0][k] : pair[1][k];
    sums[k] = keep + __shfl_xor_sync(group, give, 1);
  }
}

/// The pairs z_i · z_j (i > j) of one sample, its features in z [features,
/// stride] (shared memory, rows 16-byte aligned): pair p = i (i - 1) / 2 + j
/// into staged[p] (shared memory, for the caller to write out whole), or
/// with staged null to ob[dim + p] through put. Thread t takes block t / kBlockSlices, slice t
/// % kBlockSlices, stepping blockDim.x threads at a time (a multiple of 32:
/// a block's four lanes take the same steps, and threads past the last
/// block take none). Rows past the last feature read the last one again and
/// are not written. dim % 4 columns past the vectors are added by slice 0
/// alone, after its vectors.
template <typename TA>
__device__ __forceinline__ void forward_pair_blocks(const float* z, int features, int dim, int stride, float* staged,
                                                    TA* ob) {
  const int lanes = pair_blocks(features) * kBlockSlices;
  const int vectors = dim / 4;
  const int slice = static_cast<int>(threadIdx.x) % kBlockSlices;
  const unsigned group = 0xFu << (threadIdx.x % 32 / kBlockSlices * kBlockSlices);
  for (int t = static_cast<int>(threadIdx.x); t < lanes; t += static_cast<int>(blockDim.x)) {
    int gi = 0, gj = 0;
    block_groups(t / kBlockSlices, &gi, &gj);
    const float* a[kBlockRows];
    const float* c[kBlockRows];
#pragma unroll
    for (int r = 0; r < kBlockRows; ++r) {
      const int ra = kBlockRows * gi + r, rc = kBlockRows * gj + r;
      a[r] = z + (ra < features ? ra : features - 1) * stride;
      c[r] = z + (rc < features ? rc : features - 1) * stride;
    }
    float acc[kBlockRows][kBlockRows] = {};
#pragma unroll 1  // one step's eight vectors live at a time: 64 registers, no spills
    for (int v = slice; v < vectors; v += kBlockSlices) {
      float4 x[kBlockRows], y[kBlockRows];
#pragma unroll
      for (int r = 0; r < kBlockRows; ++r) x[r] = reinterpret_cast<const float4*>(a[r])[v];
#pragma unroll
      for (int k = 0; k < kBlockRows; ++k) y[k] = reinterpret_cast<const float4*>(c[k])[v];
#pragma unroll
      for (int r = 0; r < kBlockRows; ++r) {
#pragma unroll
        for (int k = 0; k < kBlockRows; ++k) {
          acc[r][k] = fmaf(x[r].x, y[k].x, acc[r][k]);
          acc[r][k] = fmaf(x[r].y, y[k].y, acc[r][k]);
          acc[r][k] = fmaf(x[r].z, y[k].z, acc[r][k]);
          acc[r][k] = fmaf(x[r].w, y[k].w, acc[r][k]);
        }
      }
    }
    if (slice == 0) {
      for (int d = 4 * vectors; d < dim; ++d) {
#pragma unroll
        for (int r = 0; r < kBlockRows; ++r) {
#pragma unroll
          for (int k = 0; k < kBlockRows; ++k) acc[r][k] = fmaf(a[r][d], c[k][d], acc[r][k]);
        }
      }
    }
    float sums[kBlockRows];
    reduce_scatter_rows(acc, slice, group, sums);
#pragma unroll
    for (int k = 0; k < kBlockRows; ++k) {
      int i = 0, j = 0;
      if (!block_pair(gi, gj, slice, k, features, &i, &j)) continue;
      const int p = i * (i - 1) / 2 + j;
      if (staged != nullptr) {
        staged[p] = sums[k];
      } else {
        put(ob, dim + p, sums[k]);
      }
    }
  }
}

#endif  // __CUDACC__

}  // namespace perflab::kernels::cuda::interaction_detail
