// The unfused bias/activation kernels of the CUDA linear layer: grid-stride
// elementwise kernels, and a two-pass deterministic column sum for the bias
// gradient (pass 1: fixed row slices into partial sums; pass 2: the slices
// added in order), so db never depends on scheduling.
#include <cuda_bf16.h>

#include <algorithm>
#include <type_traits>

#include "kernels/cuda/bias_act.h"
#include "kernels/cuda/check.h"

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
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    store(y, i, load(y, i) + load(b, i % cols));
  }
}

template <typename T>
__global__ void relu_forward_kernel(int64_t n, const T* x, T* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float v = load(x, i);
    store(y, i, v < 0.0f ? 0.0f : v);
  }
}

template <typename T>
__global__ void relu_backward_kernel(int64_t n, const T* y, const T* dy, T* dx) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    store(dx, i, load(y, i) > 0.0f ? load(dy, i) : 0.0f);
  }
}

template <typename T>
__global__ void relu_backward_mask_kernel(int64_t n, int64_t cols, const uint8_t* mask,
                                          int64_t mask_ld, const T* dy, T* dx) {
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
  for (int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; c < cols;
       c += int64_t{gridDim.x} * blockDim.x) {
    float total = 0.0f;
    for (int64_t s = 0; s < slices; ++s) total += partial[s * cols + c];
    store(db, c, total);
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
    add_bias_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(n, cols, static_cast<T*>(y),
                                                               static_cast<const T*>(b));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("add_bias_kernel");
}

void relu_forward(DType dtype, int64_t n, const void* x, void* y, cudaStream_t stream) {
  if (n == 0) return;
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    relu_forward_kernel<T>
        <<<blocks_for(n), kThreads, 0, stream>>>(n, static_cast<const T*>(x), static_cast<T*>(y));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("relu_forward_kernel");
}

void relu_backward(DType dtype, int64_t n, const void* y, const void* dy, void* dx,
                   cudaStream_t stream) {
  if (n == 0) return;
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    relu_backward_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
        n, static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("relu_backward_kernel");
}

void relu_backward_from_mask(DType dtype, int64_t rows, int64_t cols, const void* mask,
                             int64_t mask_ld, const void* dy, void* dx, cudaStream_t stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    relu_backward_mask_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(
        n, cols, static_cast<const uint8_t*>(mask), mask_ld, static_cast<const T*>(dy),
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
      bias_grad_partial_kernel<T><<<grid, dim3(kColTile, kRowLanes), 0, stream>>>(
          rows, cols, rows_per_slice, static_cast<const T*>(dy), partial);
      PERFLAB_CUDA_CHECK_LAUNCH("bias_grad_partial_kernel");
    }
    bias_grad_final_kernel<T>
        <<<blocks_for(cols), kThreads, 0, stream>>>(slices, cols, partial, static_cast<T*>(db));
  });
  PERFLAB_CUDA_CHECK_LAUNCH("bias_grad_final_kernel");
}

}  // namespace perflab::kernels::cuda
