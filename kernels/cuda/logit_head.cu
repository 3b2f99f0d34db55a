// DLRM's last layer and its loss in one launch (see logit_head.h).
#include "kernels/cuda/logit_head.h"

#include <cuda_bf16.h>
#include <cuda_pipeline.h>

#include <algorithm>
#include <string>

#include "base/round_up.h"
#include "kernels/cuda/bce_device.cuh"
#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/stored_types.cuh"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
/// The most samples per tile: a block's shared g and losses.
constexpr int kTile = static_cast<int>(LogitHead::kTileSamples);
constexpr unsigned kFullMask = 0xffffffffu;

__device__ inline float stored(float v, const float*) { return v; }
/// v as a bf16 tensor would hold it, widened back.
__device__ inline float stored(float v, const __nv_bfloat16*) { return __bfloat162float(__float2bfloat16_rn(v)); }

/// z = x[row] · w + bias for the calling warp: each lane sums its columns
/// (k = lane, lane + 32, ...) with fused multiply-adds, then a butterfly
/// reduction in a fixed order; every lane returns z. Unrolled so a lane's
/// loads are in flight together (the FMAs keep their order, so the bits):
/// at batch 512 on an H100 the kernel took 17 us, a warp's eight samples
/// each waiting out eight loads in turn. Loading eight columns (and, in the
/// backward's column pass, eight samples) into arrays before the first use
/// measured slower on an H200: 14.7 against 10.3 us at bf16 batch 512,
/// 98.9 against 83.2 us at 65,536 (docs/results/2026-11-27-h200-gpu-check-1590d6a,
/// where Nsight Compute saw that form at 77 registers, occupancy 37.5%);
/// this form stays.
template <typename T>
__device__ float warp_logit(const T* __restrict__ xrow, const T* __restrict__ w, const T* __restrict__ bias,
                            int64_t k) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  float acc = 0.0f;
#pragma unroll 8
  for (int64_t c = lane; c < k; c += 32) acc = fmaf(widen(xrow[c]), widen(w[c]), acc);
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_xor_sync(kFullMask, acc, offset);
  return acc + widen(bias[0]);
}

template <typename T>
__global__ void logit_forward_kernel(int64_t n, int64_t k, const T* __restrict__ x, const T* __restrict__ w,
                                     const T* __restrict__ bias, float* __restrict__ logits) {
  wait_for_prior_kernels();
  const int64_t warp = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) >> 5;
  const int64_t warps = (int64_t{gridDim.x} * blockDim.x) >> 5;
  for (int64_t b = warp; b < n; b += warps) {
    const float z = warp_logit(x + b * k, w, bias, k);
    if ((threadIdx.x & 31u) == 0) logits[b] = z;
  }
}

/// p[0] + p[stride] + ... + p[(count - 1) * stride], added in that order,
/// count <= kMax, every load issued before the first add (an entry past
/// count loads p[0] again and is not added). L2 reads (__ldcg): the values
/// were written by other blocks of the same launch.
template <int kMax, typename V>
__device__ V sum_in_order(const V* p, int64_t stride, int count) {
  V v[kMax];
#pragma unroll
  for (int i = 0; i < kMax; ++i) v[i] = __ldcg(p + (i < count ? i : 0) * stride);
  V total = 0;
#pragma unroll
  for (int i = 0; i < kMax; ++i) {
    if (i < count) total += v[i];
  }
  return total;
}

/// The most bytes of x a block stages in shared memory at a time (a chunk
/// of a tile's rows: LogitHead::staged_samples); under the 48 KiB a launch may ask for
/// without opting in (32 rows of DLRM's 256 fp32 features, 64 of bf16);
/// the kernel's registers, not this, hold it to three blocks a SM.
constexpr int64_t kStageBytes = 32 * 1024;

/// Tiles of `tile` samples (LogitHead::tile_samples(n), at most kTile);
/// block q takes tiles q, q + G, q + 2G, ... (G blocks: at most kMaxBlocks,
/// so the last block's final sum stays short). A small batch gets small
/// tiles: at batch 512 on an H100, 64-sample tiles (8 blocks) took 17 us,
/// each block's warps computing eight logits in turn and each column's
/// thread walking 64 samples; 8-sample tiles spread it over 64 blocks.
/// Per tile:
///  1. a warp per sample: z, the sample's loss (double) and g (rounded to
///     float, then to the storage type), into shared memory;
///  2. a thread per column: in sample order, dx[b, k] written, and the
///     block's running sums of g x[b, k] (dw) and dx[b, k] (db_below);
///     thread 0 the block's running sums of g (db) and of the losses.
/// Then each block writes its sums to the partials; the last block of each
/// group of kGroupBlocks to finish adds the group's in block order, and the
/// last group to finish adds the groups' in group order, writes dw, db,
/// db_below and publishes the loss (as BceWithLogits). Partials: [G] losses
/// (double), [G] g sums, [G][k] dw and [G][k] db_below (floats); then the
/// same per group.
///
/// kStaged (LogitHead::staged_samples: tiles of more samples than warps,
/// rows 16-byte aligned, a warp's worth of rows in kStageBytes): a tile is
/// taken in chunks of up to kStageBytes of x, each copied to shared memory
/// by cp.async before steps 1 and 2 read it there.
/// Unstaged, each warp's samples waited out a round trip each in turn (at
/// batch 65,536, 64-sample tiles, eight per warp: the kernel took 98.9 us
/// bf16 and 103.2 us TF32 on an H200 at 1590d6a, 6.9x and 3.7x its floor:
/// that run's kernels.md); staged, a
/// chunk's rows are in flight together. Steps 1 and 2 run per chunk, in
/// sample order: every sum, and so every bit, is as unstaged.
///
/// kSums (LogitHead::train_sums): step 1's g and losses are the ones
/// logit_rows_kernel wrote (given_g, given_loss), and step 2 writes no dx:
/// the same sums, in the same order, of the same values.
template <bool kStaged, bool kSums, typename T>
__global__ void logit_head_kernel(int64_t n, int64_t k, int64_t tile_size, int64_t chunk_size, int64_t mean_over,
                                  const T* __restrict__ x,
                                  const T* __restrict__ w, const T* __restrict__ bias,
                                  const float* __restrict__ given_g, const double* __restrict__ given_loss,
                                  const float* __restrict__ labels, T* __restrict__ dx, T* __restrict__ dw,
                                  T* __restrict__ db, T* __restrict__ db_below, double* loss_partials,
                                  float* g_partials, float* dw_partials, float* dbb_partials,
                                  double* group_loss, float* group_g, float* group_dw, float* group_dbb, uint32_t* done,
                                  float* __restrict__ loss_accumulator, int32_t* __restrict__ nonfinite_flag,
                                  int32_t* __restrict__ step_counter, float* __restrict__ dlogit) {
  wait_for_prior_kernels();
  constexpr int kCols = LogitHead::kMaxFeatures / kThreads;  // columns a thread owns, at most
  __shared__ float g[kTile];
  __shared__ double loss[kTile];
  __shared__ bool last;
  // (Step 1's own: unused with kSums.)
  [[maybe_unused]] const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31u);
  [[maybe_unused]] const double count_over = static_cast<double>(mean_over);
  const int64_t tiles = (n + tile_size - 1) / tile_size;
  float sum_w[kCols] = {}, sum_b[kCols] = {};
  double block_loss = 0.0;
  float block_g = 0.0f;
  extern __shared__ __align__(16) unsigned char staged_bytes[];  // kStaged: [chunk_size, k] of x
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t first_of_tile = tile * tile_size;
    const int in_tile = static_cast<int>(n - first_of_tile < tile_size ? n - first_of_tile : tile_size);
    // A tile's samples in chunks of chunk_size (the whole tile unstaged),
    // in sample order: every sum takes its terms in the same order either
    // way, so the bits do not depend on the staging.
    for (int c0 = 0; c0 < in_tile; c0 += static_cast<int>(chunk_size)) {
      const int64_t first = first_of_tile + c0;
      const int count = static_cast<int>(in_tile - c0 < chunk_size ? in_tile - c0 : chunk_size);
      // The chunk's rows: x itself, or (kStaged) their copy in shared
      // memory, made by cp.async 16 bytes a thread, all of it in flight at
      // once (the host checked the rows are 16-byte aligned), so a warp's
      // samples wait out one round trip instead of one each.
      const T* rows = x + first * k;
      if constexpr (kStaged) {
        const int64_t pieces = count * k * static_cast<int64_t>(sizeof(T)) / 16;
        const auto* from = reinterpret_cast<const char*>(rows);
        for (int64_t q = threadIdx.x; q < pieces; q += blockDim.x) {
          __pipeline_memcpy_async(staged_bytes + 16 * q, from + 16 * q, 16);
        }
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();  // every thread's copies visible to the block
        rows = reinterpret_cast<const T*>(staged_bytes);
      }
      if constexpr (kSums) {
        for (int s = static_cast<int>(threadIdx.x); s < count; s += static_cast<int>(blockDim.x)) {
          g[s] = given_g[first + s];
          loss[s] = given_loss[first + s];
        }
      } else {
        for (int s = warp; s < count; s += kWarps) {
          const int64_t b = first + s;
          const double z = warp_logit(rows + int64_t{s} * k, w, bias, k);
          if (lane == 0) {
            const double y = labels[b];
            loss[s] = bce_sample_loss(z, y);
            g[s] = stored(static_cast<float>((stable_sigmoid(z) - y) / count_over), w);
            if (dlogit != nullptr) dlogit[b] = g[s];
          }
        }
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        const int64_t c = threadIdx.x + int64_t{j} * kThreads;
        if (c >= k) break;
        const float wc = widen(w[c]);
#pragma unroll 8
        for (int s = 0; s < count; ++s) {
          const float xv = widen(rows[int64_t{s} * k + c]);
          const float d = xv > 0.0f ? g[s] * wc : 0.0f;
          if constexpr (!kSums) put(dx, (first + s) * k + c, d);
          sum_w[j] = fmaf(g[s], xv, sum_w[j]);
          sum_b[j] += d;
        }
      }
      if (threadIdx.x == 0) {
        for (int s = 0; s < count; ++s) {
          block_loss += loss[s];
          block_g += g[s];
        }
      }
      __syncthreads();  // g, loss and the staged rows are rewritten by the next chunk
    }
  }
#pragma unroll
  for (int j = 0; j < kCols; ++j) {
    const int64_t c = threadIdx.x + int64_t{j} * kThreads;
    if (c >= k) break;
    dw_partials[blockIdx.x * k + c] = sum_w[j];
    dbb_partials[blockIdx.x * k + c] = sum_b[j];
  }
  if (threadIdx.x == 0) {
    loss_partials[blockIdx.x] = block_loss;
    g_partials[blockIdx.x] = block_g;
  }
  // Two levels, each a fixed order: the group's blocks by its last block to
  // finish, then the groups by the last group to finish. Either reads at
  // most kGroup partials a column, all in flight at once (L2 reads: other
  // blocks wrote them): two rounds of loads where one last block adding
  // every block's partials took G / 8 (32 at G = 256).
  constexpr int kGroup = static_cast<int>(LogitHead::kGroupBlocks);
  static_assert(LogitHead::kGroupBlocks * LogitHead::kMaxGroups >= LogitHead::kMaxBlocks,
                "every block in a group, every group summed");
  const int blocks = static_cast<int>(gridDim.x);
  const int group = static_cast<int>(blockIdx.x) / kGroup;
  const int groups = (blocks + kGroup - 1) / kGroup;
  const int first_block = group * kGroup;
  const int members = blocks - first_block < kGroup ? blocks - first_block : kGroup;
  __threadfence();  // this block's partials are visible before it is counted
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(done + 1 + group, 1u) == static_cast<uint32_t>(members - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int64_t c = threadIdx.x; c < k; c += blockDim.x) {
    group_dw[group * k + c] = sum_in_order<kGroup>(dw_partials + first_block * k + c, k, members);
    group_dbb[group * k + c] = sum_in_order<kGroup>(dbb_partials + first_block * k + c, k, members);
  }
  if (threadIdx.x == 0) {
    group_loss[group] = sum_in_order<kGroup>(loss_partials + first_block, 1, members);
    group_g[group] = sum_in_order<kGroup>(g_partials + first_block, 1, members);
    done[1 + group] = 0;  // ready for the next run
  }
  __threadfence();  // the group's sums are visible before it is counted
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(done, 1u) == static_cast<uint32_t>(groups - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  constexpr int kGroups = static_cast<int>(LogitHead::kMaxGroups);
  for (int64_t c = threadIdx.x; c < k; c += blockDim.x) {
    put(dw, c, sum_in_order<kGroups>(group_dw + c, k, groups));
    put(db_below, c, sum_in_order<kGroups>(group_dbb + c, k, groups));
  }
  if (threadIdx.x == 0) {
    const double total = sum_in_order<kGroups>(group_loss, 1, groups);
    put(db, 0, sum_in_order<kGroups>(group_g, 1, groups));
    publish_loss(n, mean_over, total, loss_accumulator, nonfinite_flag, step_counter);
    *done = 0;  // ready for the next run
  }
}

/// LogitHead::train_rows: a warp per sample (grid-stride), as the fused
/// kernel's step 1 (z, the loss in double, g rounded to float and to the
/// storage type) and then the sample's dx row, g_b w[k] (x[b, k] > 0), as
/// its step 2 writes it; g and the loss go to g_out and loss_out for
/// train_sums. No block waits on another: on a step's critical path this
/// is the head's part the next layer's backward needs.
template <typename T>
__global__ void logit_rows_kernel(int64_t n, int64_t k, int64_t mean_over, const T* __restrict__ x,
                                  const T* __restrict__ w, const T* __restrict__ bias,
                                  const float* __restrict__ labels, T* __restrict__ dx, float* __restrict__ g_out,
                                  double* __restrict__ loss_out, float* __restrict__ dlogit) {
  wait_for_prior_kernels();
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const int64_t warp = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) >> 5;
  const int64_t warps = (int64_t{gridDim.x} * blockDim.x) >> 5;
  const double count_over = static_cast<double>(mean_over);
  for (int64_t b = warp; b < n; b += warps) {
    const T* xrow = x + b * k;
    const double z = warp_logit(xrow, w, bias, k);
    float gb = 0.0f;
    if (lane == 0) {
      const double y = labels[b];
      loss_out[b] = bce_sample_loss(z, y);
      gb = stored(static_cast<float>((stable_sigmoid(z) - y) / count_over), w);
      g_out[b] = gb;
      if (dlogit != nullptr) dlogit[b] = gb;
    }
    gb = __shfl_sync(kFullMask, gb, 0);
    for (int64_t c = lane; c < k; c += 32) {
      const float xv = widen(xrow[c]);
      put(dx, b * k + c, xv > 0.0f ? gb * widen(w[c]) : 0.0f);
    }
  }
}

/// The training grid: a block per tile, at most kMaxBlocks.
int64_t blocks_for(int64_t n) {
  const int64_t tile = LogitHead::tile_samples(n);
  return std::min((n + tile - 1) / tile, LogitHead::kMaxBlocks);
}

/// Where the partial sums of `blocks` blocks (and of their groups) lie in
/// the workspace: [blocks] losses (double), [blocks] g sums, [blocks][k] dw
/// and [blocks][k] db_below, then the same for the groups, then train_rows'
/// [rows] losses (double) and g; each array 8-byte aligned. `bytes` is the
/// whole.
struct Partials {
  double* loss = nullptr;
  float *g = nullptr, *dw = nullptr, *dbb = nullptr;
  double* group_loss = nullptr;
  float *group_g = nullptr, *group_dw = nullptr, *group_dbb = nullptr;
  double* row_loss = nullptr;
  float* row_g = nullptr;
  size_t bytes = 0;
};

Partials partials_at(char* base, int64_t blocks, int64_t k, int64_t rows) {
  const auto n = static_cast<size_t>(blocks);
  const auto groups = static_cast<size_t>((blocks + LogitHead::kGroupBlocks - 1) / LogitHead::kGroupBlocks);
  const auto cols = static_cast<size_t>(std::max<int64_t>(k, 1));
  Partials p;
  size_t at = 0;
  auto take = [&](size_t bytes) {
    char* where = base == nullptr ? nullptr : base + at;
    at += round_up(bytes, 8);
    return where;
  };
  p.loss = reinterpret_cast<double*>(take(n * sizeof(double)));
  p.g = reinterpret_cast<float*>(take(n * sizeof(float)));
  p.dw = reinterpret_cast<float*>(take(n * cols * sizeof(float)));
  p.dbb = reinterpret_cast<float*>(take(n * cols * sizeof(float)));
  p.group_loss = reinterpret_cast<double*>(take(groups * sizeof(double)));
  p.group_g = reinterpret_cast<float*>(take(groups * sizeof(float)));
  p.group_dw = reinterpret_cast<float*>(take(groups * cols * sizeof(float)));
  p.group_dbb = reinterpret_cast<float*>(take(groups * cols * sizeof(float)));
  p.row_loss = reinterpret_cast<double*>(take(static_cast<size_t>(rows) * sizeof(double)));
  p.row_g = reinterpret_cast<float*>(take(static_cast<size_t>(rows) * sizeof(float)));
  p.bytes = at;
  return p;
}

/// The fused kernel (kSums false: train) or its sums alone (train_sums).
template <bool kSums, typename T>
void launch_train(const LogitHeadArguments& a, void* workspace, cudaStream_t stream) {
  const int64_t blocks = blocks_for(a.n);
  const Partials p = partials_at(static_cast<char*>(workspace), blocks, a.k, a.n);
  const int64_t tile = LogitHead::tile_samples(a.n);
  const int64_t chunk = LogitHead::staged_samples(a);
  const auto kernel = chunk > 0 ? logit_head_kernel<true, kSums, T> : logit_head_kernel<false, kSums, T>;
  const auto shared = static_cast<size_t>(chunk * a.k) * sizeof(T);
  launch_kernel(kernel, static_cast<unsigned>(blocks), kThreads, shared, stream, a.n, a.k, tile,
                chunk > 0 ? chunk : tile, a.mean_over > 0 ? a.mean_over : a.n,
                static_cast<const T*>(a.x), static_cast<const T*>(a.w),
                static_cast<const T*>(a.bias), p.row_g, p.row_loss, a.labels, static_cast<T*>(a.dx),
                static_cast<T*>(a.dw), static_cast<T*>(a.db), static_cast<T*>(a.db_below), p.loss,
                p.g, p.dw, p.dbb, p.group_loss, p.group_g, p.group_dw, p.group_dbb, a.done_counter,
                a.loss_accumulator, a.nonfinite_flag, a.step_counter, kSums ? nullptr : a.dlogit);
  PERFLAB_CUDA_CHECK_LAUNCH("logit_head_kernel");
}

template <typename T>
void launch_rows(const LogitHeadArguments& a, void* workspace, cudaStream_t stream) {
  const Partials p = partials_at(static_cast<char*>(workspace), blocks_for(a.n), a.k, a.n);
  const int64_t blocks = std::clamp<int64_t>((a.n + kWarps - 1) / kWarps, 1, int64_t{1} << 20);
  launch_kernel(logit_rows_kernel<T>, static_cast<unsigned>(blocks), kThreads, 0, stream, a.n, a.k,
                a.mean_over > 0 ? a.mean_over : a.n, static_cast<const T*>(a.x),
                static_cast<const T*>(a.w), static_cast<const T*>(a.bias), a.labels,
                static_cast<T*>(a.dx), p.row_g, p.row_loss, a.dlogit);
  PERFLAB_CUDA_CHECK_LAUNCH("logit_rows_kernel");
}

template <typename T>
void launch_forward(const LogitHeadArguments& a, cudaStream_t stream) {
  const int64_t blocks = std::clamp<int64_t>((a.n + kWarps - 1) / kWarps, 1, int64_t{1} << 20);
  launch_kernel(logit_forward_kernel<T>, static_cast<unsigned>(blocks), kThreads, 0, stream, a.n,
                a.k, static_cast<const T*>(a.x), static_cast<const T*>(a.w),
                static_cast<const T*>(a.bias), a.logits);
  PERFLAB_CUDA_CHECK_LAUNCH("logit_forward_kernel");
}

}  // namespace

int64_t LogitHead::staged_samples(const LogitHeadArguments& a) {
  const int64_t tile = tile_samples(a.n);
  const int64_t row_bytes = a.k * (a.bf16 ? 2 : 4);
  if (a.k < 1 || tile <= kWarps || row_bytes % 16 != 0 || reinterpret_cast<uintptr_t>(a.x) % 16 != 0) return 0;
  const int64_t chunk = std::min(tile, kStageBytes / row_bytes);
  return chunk >= kWarps ? chunk : 0;  // fewer rows than warps (fp32 past 1,024 features) would idle warps
}

int64_t LogitHead::tile_samples(int64_t n) {
  const int64_t wanted = (std::max<int64_t>(n, 1) + kSpreadBlocks - 1) / kSpreadBlocks;
  int64_t tile = kMinTileSamples;
  while (tile < wanted && tile < kTileSamples) tile *= 2;
  return tile;
}

Status LogitHead::can_implement(const LogitHeadArguments& a, bool training) {
  const std::string op = training ? "logit head (train): " : "logit head (forward): ";
  if (a.n < 1 || a.n > (int64_t{1} << 31) - 1) {
    return Status::invalid(op + "n must be in [1, 2^31), got " + std::to_string(a.n));
  }
  if (a.k < 1 || a.k > kMaxFeatures) {
    return Status::invalid(op + "k must be in [1, " + std::to_string(kMaxFeatures) + "], got " + std::to_string(a.k));
  }
  if (a.x == nullptr || a.w == nullptr || a.bias == nullptr) return Status::invalid(op + "x, w and bias must be set");
  if (!training) {
    if (a.logits == nullptr) return Status::invalid(op + "logits is null");
    return Status::success();
  }
  if (a.labels == nullptr || a.dx == nullptr || a.dw == nullptr || a.db == nullptr || a.db_below == nullptr) {
    return Status::invalid(op + "labels, dx, dw, db and db_below must be set");
  }
  if (a.done_counter == nullptr) return Status::invalid(op + "done_counter is null");
  if (a.dx == a.x) return Status::invalid(op + "dx must not alias x");
  if (a.mean_over != 0 && a.mean_over < a.n) {
    return Status::invalid(op + "mean_over must be 0 or at least n (" + std::to_string(a.n) + "), got " +
                           std::to_string(a.mean_over));
  }
  return Status::success();
}

size_t LogitHead::workspace_bytes(const LogitHeadArguments& a) {
  // Enough for every batch up to n: no batch of n' <= n launches more than
  // ceil(n' / kMinTileSamples) or kMaxBlocks blocks (blocks_for(n) itself
  // is not monotonic: 1024 samples take 128 blocks of 8, 1025 take 65 of 16).
  // (The groups' sums grow with the blocks too.)
  const int64_t blocks =
      std::min((std::max<int64_t>(a.n, 1) + kMinTileSamples - 1) / kMinTileSamples, kMaxBlocks);
  return partials_at(nullptr, blocks, a.k, std::max<int64_t>(a.n, 1)).bytes;
}

void LogitHead::forward(const LogitHeadArguments& a, cudaStream_t stream) {
  if (a.bf16) {
    launch_forward<__nv_bfloat16>(a, stream);
  } else {
    launch_forward<float>(a, stream);
  }
}

void LogitHead::train(const LogitHeadArguments& a, void* workspace, cudaStream_t stream) {
  if (a.bf16) {
    launch_train<false, __nv_bfloat16>(a, workspace, stream);
  } else {
    launch_train<false, float>(a, workspace, stream);
  }
}

void LogitHead::train_rows(const LogitHeadArguments& a, void* workspace, cudaStream_t stream) {
  if (a.bf16) {
    launch_rows<__nv_bfloat16>(a, workspace, stream);
  } else {
    launch_rows<float>(a, workspace, stream);
  }
}

void LogitHead::train_sums(const LogitHeadArguments& a, void* workspace, cudaStream_t stream) {
  if (a.bf16) {
    launch_train<true, __nv_bfloat16>(a, workspace, stream);
  } else {
    launch_train<true, float>(a, workspace, stream);
  }
}

LaunchList LogitHead::forward_launches(const LogitHeadArguments& a) {
  const double e = a.bf16 ? 2 : 4, n = static_cast<double>(a.n), k = static_cast<double>(a.k);
  return {{"logit_forward_kernel", "the logit (last layer, K -> 1)", "", {n * k * e + k * e + n * 4, 2 * n * k, "fp32"}}};
}

namespace {

/// What train's launches move: x [n, k] and dx at e bytes, and the blocks'
/// and the groups' partials, written and read once (bytes).
struct HeadBytes {
  double e, n, k, partials;
};

HeadBytes head_bytes(const LogitHeadArguments& a) {
  const double k = static_cast<double>(a.k);
  const int64_t blocks = blocks_for(std::max<int64_t>(a.n, 1));
  const int64_t groups = (blocks + LogitHead::kGroupBlocks - 1) / LogitHead::kGroupBlocks;
  return {a.bf16 ? 2.0 : 4.0, static_cast<double>(a.n), k, 2 * static_cast<double>(blocks + groups) * k * 4};
}

}  // namespace

LaunchList LogitHead::train_launches(const LogitHeadArguments& a) {
  const HeadBytes h = head_bytes(a);
  // x read, dx written, labels read, the partials.
  return {{"logit_head_kernel", "last layer, loss and the last layer's backward in one pass", "",
           {2 * h.n * h.k * h.e + h.n * 4 + 2 * h.partials, 6 * h.n * h.k, "fp32"}}};
}

LaunchList LogitHead::train_split_launches(const LogitHeadArguments& a) {
  const HeadBytes h = head_bytes(a);
  // Rows: x read, dx written, labels read, each sample's g and loss
  // written (z and dx: 3nk). Sums: x read again, g and the losses read,
  // the partials (dw and db_below: 3nk of the arithmetic's own work; it
  // forms the dx values it sums again, nk more, not declared).
  return {{"logit_rows_kernel", "last layer, loss and dx, a warp a sample", "",
           {2 * h.n * h.k * h.e + h.n * 4 + h.n * 12, 3 * h.n * h.k, "fp32"}},
          {"logit_head_kernel", "the last layer's sums: dw, db, db_below and the loss", "",
           {h.n * h.k * h.e + h.n * 12 + 2 * h.partials, 3 * h.n * h.k, "fp32"}}};
}

}  // namespace perflab::kernels::cuda
