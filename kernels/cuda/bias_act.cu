// The bias/activation kernels of the CUDA linear layer. Unfused: grid-stride
// elementwise kernels, and a two-pass deterministic column sum for the bias
// gradient (pass 1: fixed row slices into partial sums; pass 2: the slices
// added in order), so db never depends on scheduling. Our own fused
// epilogues: bias + ReLU in one pass, each thread keeping one column group's
// bias in registers; dReLU + bias gradient in one launch (for a few rows one
// block per column tile over all rows; beyond, the same two passes, the mask
// applied as the partial sums read dy, and pass 2 run by each column tile's
// last block to finish). Both move 16 bytes per access where a row is whole
// 16-byte groups.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/dependent_launch.cuh"
#include "kernels/cuda/vector_access.cuh"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;

/// Bias gradient: a block covers kColTile columns with kRowLanes row lanes.
constexpr int kColTile = 32;
constexpr int kRowLanes = 8;
/// Rows per slice in pass 1, and the most slices (bounds the workspace).
constexpr int64_t kRowsPerSlice = 512;
constexpr int64_t kMaxSlices = 64;

__device__ __forceinline__ float load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ __forceinline__ void store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

int blocks_for(int64_t n) {
  return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
}

template <typename T>
__global__ void add_bias_kernel(int64_t n, int64_t cols, T* y, const T* b) {
  wait_for_prior_kernels();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    store(y, i, load(y, i) + load(b, i % cols));
  }
}

template <typename T>
__global__ void relu_forward_kernel(int64_t n, const T* x, T* y) {
  wait_for_prior_kernels();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float v = load(x, i);
    store(y, i, v < 0.0f ? 0.0f : v);
  }
}

template <typename T>
__global__ void relu_backward_kernel(int64_t n, const T* y, const T* dy, T* dx) {
  wait_for_prior_kernels();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    store(dx, i, load(y, i) > 0.0f ? load(dy, i) : 0.0f);
  }
}

template <typename T>
__global__ void relu_backward_mask_kernel(int64_t n, int64_t cols, const uint8_t* mask,
                                          int64_t mask_ld, const T* dy, T* dx) {
  wait_for_prior_kernels();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t bit = (i / cols) * mask_ld + i % cols;
    const bool on = (mask[bit >> 3] >> (bit & 7)) & 1;
    store(dx, i, on ? load(dy, i) : 0.0f);
  }
}

/// Pass 1: partial[s, c] = Σ of dy[r, c] over the rows of slice s.
template <typename T>
__global__ void bias_grad_partial_kernel(int64_t rows, int64_t cols, int64_t rows_per_slice,
                                         const T* dy, float* partial) {
  wait_for_prior_kernels();
  __shared__ float sums[kRowLanes][kColTile];
  const int64_t col = blockIdx.x * int64_t{kColTile} + threadIdx.x;
  const int64_t begin = blockIdx.y * rows_per_slice;
  const int64_t end = rows < begin + rows_per_slice ? rows : begin + rows_per_slice;
  float acc = 0.0f;
  if (col < cols) {
    for (int64_t r = begin + threadIdx.y; r < end; r += kRowLanes) acc += load(dy, r * cols + col);
  }
  sums[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float total = 0.0f;
    for (int lane = 0; lane < kRowLanes; ++lane) total += sums[lane][threadIdx.x];
    partial[blockIdx.y * cols + col] = total;
  }
}

/// Pass 2: db[c] = Σ_s partial[s, c], slices in order.
template <typename T>
__global__ void bias_grad_final_kernel(int64_t slices, int64_t cols, const float* partial, T* db) {
  wait_for_prior_kernels();
  for (int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; c < cols;
       c += int64_t{gridDim.x} * blockDim.x) {
    float total = 0.0f;
    for (int64_t s = 0; s < slices; ++s) total += partial[s * cols + c];
    store(db, c, total);
  }
}

/// bias_act_kernel's grid at most: about one wave of 256-thread blocks on a
/// large GPU, so each thread takes several rows for its one bias load.
constexpr int64_t kBiasActMaxBlocks = 1024;

/// y = act(y + b) over [rows, groups * kVec]. Thread t owns column group
/// t % groups (its bias loaded once) and every lanes-th row from t / groups;
/// the launch gives at least `groups` threads.
template <typename T, int kVec, bool kRelu>
__global__ void bias_act_kernel(int64_t rows, int64_t groups, T* y, const T* b) {
  wait_for_prior_kernels();
  const int64_t threads = int64_t{gridDim.x} * blockDim.x;
  const int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t lanes = threads / groups;
  if (t >= lanes * groups) return;
  const int64_t g = t % groups;
  float bias[kVec];
  load_group<T, kVec>(b + g * kVec, bias);
  for (int64_t r = t / groups; r < rows; r += lanes) {
    T* p = y + (r * groups + g) * kVec;
    float v[kVec];
    load_group<T, kVec>(p, v);
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float sum = v[k] + bias[k];
      v[k] = kRelu && sum < 0.0f ? 0.0f : sum;
    }
    store_group<T, kVec>(p, v);
  }
}

/// The fused bias gradient: a block covers kGradGroups column groups with
/// kGradLanes row lanes; the grid's y runs over row slices, as many as
/// bring the grid near kGradTargetBlocks (a constant, so the partition, and
/// with it db's bits, depend on the shape alone).
constexpr int kGradGroups = 32;
constexpr int kGradLanes = 8;
constexpr int64_t kGradTargetBlocks = 1024;
constexpr int64_t kGradMaxSlices = 256;

/// Rows a lane of pass 1 loads before it stores the first: with both loads
/// of a row in flight, 2 * kGradBatch 16-byte loads a thread.
constexpr int kGradBatch = 4;
/// Slices a thread of pass 2 reads before it adds: 8 loads in flight (16
/// bytes each on the vector paths; two a slice at kVec 8).
template <int kVec>
constexpr int kFinalBatch = kVec == 8 ? 4 : 8;
/// Four blocks a SM at most 64 registers: 1,024 threads of 2 * kGradBatch
/// loads each in flight.
constexpr int kGradMinBlocks = 4;

/// One batch of a lane's rows for both dReLU + bias-gradient kernels: rows
/// first, first + stride, ... (kBatch of them, those before `end`) of column
/// group g, all loaded before the first is stored (y and dy are separate
/// buffers: __restrict__, so their loads need not wait for the stores in
/// between); with kMask dy := y > 0 ? dy : 0 in place; each row's values
/// added to acc in row order. A row past `end` loads the batch's first row
/// again (no conditional load for the compiler to serialise) and is neither
/// stored nor summed.
template <typename T, int kVec, bool kMask, int kBatch>
__device__ __forceinline__ void mask_and_sum_rows(int64_t first, int64_t stride, int64_t end, int64_t groups,
                                                  int64_t g, const T* __restrict__ y, T* __restrict__ dy,
                                                  float (&acc)[kVec]) {
  // Raw 16-byte groups (converted one row at a time, so a bf16 row's eight
  // floats are not all live at once).
  Group<T, kVec> dg[kBatch];
  Group<T, kVec> yg[kBatch];
#pragma unroll
  for (int u = 0; u < kBatch; ++u) {
    const int64_t r = first + int64_t{u} * stride;
    const int64_t i = ((r < end ? r : first) * groups + g) * kVec;
    dg[u] = *reinterpret_cast<const Group<T, kVec>*>(dy + i);
    if constexpr (kMask) yg[u] = *reinterpret_cast<const Group<T, kVec>*>(y + i);
  }
#pragma unroll
  for (int u = 0; u < kBatch; ++u) {
    const int64_t r = first + int64_t{u} * stride;
    if (r < end) {
      float d[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) d[k] = load(dg[u].e, k);
      if constexpr (kMask) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) d[k] = load(yg[u].e, k) > 0.0f ? d[k] : 0.0f;
        store_group<T, kVec>(dy + (r * groups + g) * kVec, d);
      }
#pragma unroll
      for (int k = 0; k < kVec; ++k) acc[k] += d[k];
    }
  }
}

/// Pass 1: with kMask, dy := y > 0 ? dy : 0 in place; partial[s, c] = Σ of
/// dy[r, c] over the rows of slice s (cols = groups * kVec), each lane's
/// rows in order (mask_and_sum_rows, kGradBatch at a time), then the lanes
/// in order.
///
/// Pass 2 in the same launch: the last of a column tile's blocks to finish
/// (done[tile], a counter left 0) adds its columns' slices. Its 256 threads
/// are kGradLanes lanes of 32, a thread kVec adjacent columns (16-byte reads
/// on the vector paths: the columns are a multiple of kVec and the workspace
/// 16-byte aligned), kFinalBatch slices in flight; a lane takes every
/// kGradLanes-th slice in order, then the lanes are added in order. That is
/// the order of every kVec (and of the version before), so db's bits do not
/// depend on which path the pointers' alignment chose. On an H200 that
/// version (32 columns at a time, the slices read a few at a time, eight
/// chunks in turn) took about 10 us a launch at batch 512, where pass 1 has
/// under a megabyte to read (docs/results/2026-11-26-h200-gpu-check-c9d4b27).
template <typename T, int kVec, bool kMask>
__global__ void __launch_bounds__(kGradGroups* kGradLanes, kGradMinBlocks)
    relu_bias_grad_partial_kernel(int64_t rows, int64_t groups, int64_t rows_per_slice, const T* __restrict__ y,
                                  T* __restrict__ dy, float* partial, T* __restrict__ db, unsigned* done) {
  wait_for_prior_kernels();
  constexpr int kTileCols = kGradGroups * kVec;
  __shared__ float sums[kGradLanes][kTileCols];
  const int64_t g = blockIdx.x * int64_t{kGradGroups} + threadIdx.x;
  const int64_t begin = blockIdx.y * rows_per_slice;
  const int64_t end = rows < begin + rows_per_slice ? rows : begin + rows_per_slice;
  float acc[kVec] = {};
  if (g < groups) {
    for (int64_t first = begin + threadIdx.y; first < end; first += int64_t{kGradBatch} * kGradLanes) {
      mask_and_sum_rows<T, kVec, kMask, kGradBatch>(first, kGradLanes, end, groups, g, y, dy, acc);
    }
  }
#pragma unroll
  for (int k = 0; k < kVec; ++k) sums[threadIdx.y][threadIdx.x * kVec + k] = acc[k];
  __syncthreads();
  if (threadIdx.y == 0 && g < groups) {
    const int64_t cols = groups * kVec;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      float total = 0.0f;
      for (int lane = 0; lane < kGradLanes; ++lane) total += sums[lane][threadIdx.x * kVec + k];
      partial[blockIdx.y * cols + g * kVec + k] = total;
    }
  }
  // This block's partials are visible before it is counted; every thread is
  // past its reads of `sums` before pass 2 reuses them.
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0 && threadIdx.y == 0) last = atomicAdd(done + blockIdx.x, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  constexpr int kBatch = kFinalBatch<kVec>;
  const int64_t cols = groups * kVec;
  const int64_t slices = gridDim.y;
  const int lane = threadIdx.y;
  const int offset = threadIdx.x * kVec;  // within the tile
  const int64_t c = blockIdx.x * int64_t{kTileCols} + offset;
  float total[kVec] = {};
  if (c < cols) {  // cols is a multiple of kVec: c + kVec - 1 < cols too
    for (int64_t s0 = lane; s0 < slices; s0 += int64_t{kBatch} * kGradLanes) {
      float p[kBatch][kVec];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int64_t s = s0 + int64_t{b} * kGradLanes;
        // L2 reads: other blocks wrote these partials.
        const float* at = partial + (s < slices ? s : s0) * cols + c;
        if constexpr (kVec == 1) {
          p[b][0] = __ldcg(at);
        } else {
#pragma unroll
          for (int h = 0; h < kVec / 4; ++h) {
            const float4 q = __ldcg(reinterpret_cast<const float4*>(at) + h);
            p[b][4 * h] = q.x;
            p[b][4 * h + 1] = q.y;
            p[b][4 * h + 2] = q.z;
            p[b][4 * h + 3] = q.w;
          }
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (s0 + int64_t{b} * kGradLanes < slices) {
#pragma unroll
          for (int k = 0; k < kVec; ++k) total[k] += p[b][k];
        }
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kVec; ++k) sums[lane][offset + k] = total[k];
  __syncthreads();
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < kVec && c < cols; ++k) {
      float sum = 0.0f;
      for (int l = 0; l < kGradLanes; ++l) sum += sums[l][offset + k];
      store(db, c + k, sum);
    }
  }
  if (threadIdx.x == 0 && threadIdx.y == 0) done[blockIdx.x] = 0;  // ready for the next call
}

/// The one-pass backward for a few rows (relu_bias_grad_one_pass): a block
/// covers kOneGroups column groups with kOneLanes row lanes and reads every
/// row of its columns, so nothing is left for a second pass.
constexpr int kOneGroups = 4;
constexpr int kOneLanes = 64;
/// Rows a lane loads before it stores the first (2 * kOneBatch 16-byte
/// loads in flight with the mask): up to 512 rows in one round.
constexpr int kOneBatch = 8;
/// The most rows the one-pass kernel takes (relu_bias_grad_one_pass): four
/// rounds of loads a lane. The two-pass kernel's last blocks would read up to
/// 256 slices there, eight rounds. A guess from that count, to be settled by
/// bench_cuda_linear's BM_ReluBiasGrad on a GPU (both paths at 512, 2,048 and
/// 16,384 rows).
constexpr int64_t kOnePassMaxRows = 2048;

/// The same dReLU and column sums as relu_bias_grad_partial_kernel, for up to
/// kOnePassMaxRows rows, with no workspace, no counters and no waiting for
/// other blocks. Lane l takes rows l, l + kOneLanes, ... in order
/// (mask_and_sum_rows, kOneBatch at a time); then the lanes are added
/// pairwise in a fixed tree (32 apart, then 16, ..., 1). The order depends on
/// neither kVec nor the grid, so db's bits do not depend on the path the
/// pointers' alignment chose.
///
/// Why: at batch 512 on an H200 the two-pass kernel took 5.7 us a launch,
/// where cuBLASLt's own dReLU + bias-gradient kernel took 4.3 us
/// (docs/results/2026-11-27-h200-gpu-check-1590d6a, epilogues step): its
/// launch waits for one load, a fence, an atomic and two rounds of partial
/// reads in turn; this one for one round of loads and a shared-memory tree.
template <typename T, int kVec, bool kMask>
__global__ void __launch_bounds__(kOneGroups* kOneLanes)
    relu_bias_grad_one_pass_kernel(int64_t rows, int64_t groups, const T* __restrict__ y, T* __restrict__ dy,
                                   T* __restrict__ db) {
  wait_for_prior_kernels();
  constexpr int kTileCols = kOneGroups * kVec;
  // One column of padding: a warp's 8 lanes x 4 groups fall in distinct banks.
  __shared__ float sums[kOneLanes][kTileCols + 1];
  const int lane = threadIdx.y;
  const int offset = threadIdx.x * kVec;  // within the tile
  const int64_t g = blockIdx.x * int64_t{kOneGroups} + threadIdx.x;
  float acc[kVec] = {};
  if (g < groups) {
    for (int64_t first = lane; first < rows; first += int64_t{kOneBatch} * kOneLanes) {
      mask_and_sum_rows<T, kVec, kMask, kOneBatch>(first, kOneLanes, rows, groups, g, y, dy, acc);
    }
  }
#pragma unroll
  for (int k = 0; k < kVec; ++k) sums[lane][offset + k] = acc[k];
  __syncthreads();
#pragma unroll
  for (int half = kOneLanes / 2; half > 0; half /= 2) {
    if (lane < half) {
#pragma unroll
      for (int k = 0; k < kVec; ++k) sums[lane][offset + k] += sums[lane + half][offset + k];
    }
    __syncthreads();
  }
  if (lane == 0 && g < groups) {
#pragma unroll
    for (int k = 0; k < kVec; ++k) store(db, g * kVec + k, sums[0][offset + k]);
  }
}

/// Row slices for a [rows, cols] dy: enough for about kGradTargetBlocks
/// blocks over the column tiles of the widest access the columns allow (16
/// bytes of bf16, else of fp32, else one element; from the shape alone, so
/// the workspace needs no type and db's partition no pointer).
int64_t relu_bias_grad_slices(int64_t rows, int64_t cols) {
  if (rows <= 0) return 0;
  const int64_t width = cols % 8 == 0 ? 8 : cols % 4 == 0 ? 4 : 1;
  const int64_t tiles = (cols / width + kGradGroups - 1) / kGradGroups;
  const int64_t wanted = std::max<int64_t>(1, (kGradTargetBlocks + tiles - 1) / tiles);
  return std::min({wanted, kGradMaxSlices, (rows + kGradLanes - 1) / kGradLanes});
}

/// Calls launch(std::integral_constant<int, kVec>) with kVec the 16-byte
/// width of T when cols and the pointers allow it, else 1.
template <typename T, typename Launch>
void with_vector_width(int64_t cols, std::initializer_list<const void*> pointers, Launch&& launch) {
  constexpr int kWide = static_cast<int>(16 / sizeof(T));
  if (vector_width<T>(cols, pointers) == kWide) {
    launch(std::integral_constant<int, kWide>{});
  } else {
    launch(std::integral_constant<int, 1>{});
  }
}

int64_t bias_grad_slices(int64_t rows) {
  if (rows <= 0) return 0;
  return std::min(kMaxSlices, (rows + kRowsPerSlice - 1) / kRowsPerSlice);
}

/// Calls f(T*) with the buffer type of `dtype` (a null pointer of that type).
template <typename F>
void dispatch(DType dtype, F&& f) {
  if (dtype == DType::kF32) {
    f(static_cast<float*>(nullptr));
  } else {
    f(static_cast<__nv_bfloat16*>(nullptr));
  }
}

}  // namespace

void add_bias(DType dtype, int64_t rows, int64_t cols, void* y, const void* b,
              cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    launch_kernel(add_bias_kernel<T>, blocks_for(n), kThreads, 0, stream, n, cols,
                  static_cast<T*>(y), static_cast<const T*>(b));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("add_bias_kernel");
}

void relu_forward(DType dtype, int64_t n, const void* x, void* y, cudaStream_t stream) {
  if (n == 0) return;
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    launch_kernel(relu_forward_kernel<T>, blocks_for(n), kThreads, 0, stream, n,
                  static_cast<const T*>(x), static_cast<T*>(y));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("relu_forward_kernel");
}

void relu_backward(DType dtype, int64_t n, const void* y, const void* dy, void* dx,
                   cudaStream_t stream) {
  if (n == 0) return;
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    launch_kernel(relu_backward_kernel<T>, blocks_for(n), kThreads, 0, stream, n,
                  static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("relu_backward_kernel");
}

void relu_backward_from_mask(DType dtype, int64_t rows, int64_t cols, const void* mask,
                             int64_t mask_ld, const void* dy, void* dx, cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    launch_kernel(relu_backward_mask_kernel<T>, blocks_for(n), kThreads, 0, stream, n, cols,
                  static_cast<const uint8_t*>(mask), mask_ld, static_cast<const T*>(dy),
                  static_cast<T*>(dx));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("relu_backward_mask_kernel");
}

size_t bias_grad_workspace_bytes(int64_t rows, int64_t cols) {
  return static_cast<size_t>(bias_grad_slices(rows) * cols) * sizeof(float);
}

void bias_grad(DType dtype, int64_t rows, int64_t cols, const void* dy, void* db, void* workspace,
               cudaStream_t stream) {
  if (cols == 0) return;
  const int64_t slices = bias_grad_slices(rows);
  auto* partial = static_cast<float*>(workspace);
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (slices > 0) {
      const int64_t rows_per_slice = (rows + slices - 1) / slices;
      const dim3 grid(static_cast<unsigned>((cols + kColTile - 1) / kColTile),
                      static_cast<unsigned>(slices));
      launch_kernel(bias_grad_partial_kernel<T>, grid, dim3(kColTile, kRowLanes), 0, stream, rows,
                    cols, rows_per_slice, static_cast<const T*>(dy), partial);
      PERFLAB_CUDA_CHECK_LAUNCH("bias_grad_partial_kernel");
    }
    launch_kernel(bias_grad_final_kernel<T>, blocks_for(cols), kThreads, 0, stream, slices, cols,
                  partial, static_cast<T*>(db));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("bias_grad_final_kernel");
}

void bias_activation(DType dtype, int64_t rows, int64_t cols, void* y, const void* b, bool relu,
                     cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    with_vector_width<T>(cols, {y, b}, [&](auto vec) {
      constexpr int kVec = decltype(vec)::value;
      const int64_t groups = cols / kVec;
      // At least one thread per column group (each keeps its group's bias).
      const auto blocks = static_cast<unsigned>(
          std::max<int64_t>(std::min<int64_t>(blocks_for(rows * groups), kBiasActMaxBlocks),
                            (groups + kThreads - 1) / kThreads));
      auto* out = static_cast<T*>(y);
      const auto* bias = static_cast<const T*>(b);
      if (relu) {
        launch_kernel(bias_act_kernel<T, kVec, true>, blocks, kThreads, 0, stream, rows, groups,
                      out, bias);
      } else {
        launch_kernel(bias_act_kernel<T, kVec, false>, blocks, kThreads, 0, stream, rows, groups,
                      out, bias);
      }
    });
  });
  PERFLAB_CUDA_CHECK_LAUNCH("bias_act_kernel");
}

size_t relu_bias_grad_workspace_bytes(int64_t rows, int64_t cols) {
  return static_cast<size_t>(relu_bias_grad_slices(rows, cols) * cols) * sizeof(float);
}

int64_t relu_bias_grad_counters(int64_t cols) { return std::max<int64_t>(1, (cols + kGradGroups - 1) / kGradGroups); }

bool relu_bias_grad_one_pass(int64_t rows) { return rows <= kOnePassMaxRows; }

void relu_bias_grad(DType dtype, int64_t rows, int64_t cols, const void* y, void* dy, void* db,
                    void* workspace, unsigned* done, cudaStream_t stream, ReluBiasGradPasses passes) {
  if (cols <= 0) return;
  const int64_t slices = relu_bias_grad_slices(rows, cols);
  auto* partial = static_cast<float*>(workspace);
  const bool one_pass =
      passes == ReluBiasGradPasses::kOne || (passes == ReluBiasGradPasses::kAuto && relu_bias_grad_one_pass(rows));
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (slices == 0) {  // no rows: db = 0 (all-zero bits in fp32 and bf16)
      PERFLAB_CUDA_CHECK(cudaMemsetAsync(db, 0, static_cast<size_t>(cols) * sizeof(T), stream));
      return;
    }
    if (one_pass) {
      with_vector_width<T>(cols, {y, dy}, [&](auto vec) {
        constexpr int kVec = decltype(vec)::value;
        const int64_t groups = cols / kVec;
        const dim3 grid(static_cast<unsigned>((groups + kOneGroups - 1) / kOneGroups));
        const dim3 block(kOneGroups, kOneLanes);
        const auto* mask = static_cast<const T*>(y);
        auto* grad = static_cast<T*>(dy);
        auto* out = static_cast<T*>(db);
        if (y != nullptr) {
          launch_kernel(relu_bias_grad_one_pass_kernel<T, kVec, true>, grid, block, 0, stream, rows,
                        groups, mask, grad, out);
        } else {
          launch_kernel(relu_bias_grad_one_pass_kernel<T, kVec, false>, grid, block, 0, stream,
                        rows, groups, mask, grad, out);
        }
      });
      PERFLAB_CUDA_CHECK_LAUNCH("relu_bias_grad_one_pass_kernel");
      return;
    }
    // The workspace's alignment too: pass 2 reads it 16 bytes at a time on
    // the vector paths.
    with_vector_width<T>(cols, {y, dy, workspace}, [&](auto vec) {
      constexpr int kVec = decltype(vec)::value;
      const int64_t groups = cols / kVec;
      const int64_t rows_per_slice = (rows + slices - 1) / slices;
      const dim3 grid(static_cast<unsigned>((groups + kGradGroups - 1) / kGradGroups),
                      static_cast<unsigned>(slices));
      const dim3 block(kGradGroups, kGradLanes);
      const auto* mask = static_cast<const T*>(y);
      auto* grad = static_cast<T*>(dy);
      auto* out = static_cast<T*>(db);
      if (y != nullptr) {
        launch_kernel(relu_bias_grad_partial_kernel<T, kVec, true>, grid, block, 0, stream, rows,
                      groups, rows_per_slice, mask, grad, partial, out, done);
      } else {
        launch_kernel(relu_bias_grad_partial_kernel<T, kVec, false>, grid, block, 0, stream, rows,
                      groups, rows_per_slice, mask, grad, partial, out, done);
      }
    });
    PERFLAB_CUDA_CHECK_LAUNCH("relu_bias_grad_partial_kernel");
  });
}

}  // namespace perflab::kernels::cuda
