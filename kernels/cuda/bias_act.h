// The bias/activation kernels of the CUDA linear layer. Unfused, each its
// own launch: bias add, ReLU forward and backward, and the bias gradient
// (the "unfused" baseline). Fused, our own epilogues (linear.h's
// Epilogues::kOwn and kOwnBackward): bias + ReLU in one pass, and dReLU +
// bias gradient in one launch (a pass over dy whose last blocks finish the
// column sums); 16-byte accesses where the rows allow. CPU references: kernels/cpu/relu.h (relu_forward,
// relu_backward) and the db reduction of kernels/cpu/linear.h.
//
// Layout: matrices are dense and row-major, [rows, cols] (rows = batch,
// cols = features). Two element types, picked by DType: fp32, and bf16 (math
// in fp32, one rounding per stored result). Every function only enqueues
// work on `stream`: none allocates, none synchronises with the host.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace perflab::kernels::cuda {

/// Element type of the buffers passed as void*.
enum class DType {
  kF32,   ///< float
  kBF16,  ///< __nv_bfloat16 (bf16 storage, fp32 math)
};

/// Bytes per element of `dtype`.
constexpr size_t dtype_bytes(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

/// y[r, c] += b[c] for a [rows, cols] matrix (broadcast over rows).
void add_bias(DType dtype, int64_t rows, int64_t cols, void* y, const void* b, cudaStream_t stream);

/// y[i] = max(x[i], 0) over n elements; `y` may be `x`. NaN stays NaN.
void relu_forward(DType dtype, int64_t n, const void* x, void* y, cudaStream_t stream);

/// dx[i] = y[i] > 0 ? dy[i] : 0, masking by the forward *output* y (as the
/// CPU reference does). `dx` may be `dy` (in place).
void relu_backward(DType dtype, int64_t n, const void* y, const void* dy, void* dx,
                   cudaStream_t stream);

/// dx[r, c] = bit(r, c) ? dy[r, c] : 0 for a [rows, cols] matrix, the bit
/// read from a ReLU bitmask in cuBLASLt's EPILOGUE_RELU_AUX layout: the GEMM
/// output is the column-major transpose [cols, rows] of the row-major matrix,
/// so element (r, c) is bit (r * mask_ld + c) of the byte array, least
/// significant bit first; mask_ld (in bits) is a multiple of 128 and >= cols.
/// `dx` may be `dy`. (The bit order is checked against cuBLASLt's own mask by
/// tests/kernels/cuda/bias_act_cuda_test.cc.)
void relu_backward_from_mask(DType dtype, int64_t rows, int64_t cols, const void* mask,
                             int64_t mask_ld, const void* dy, void* dx, cudaStream_t stream);

/// Workspace bias_grad needs for a [rows, cols] input (partial column sums).
size_t bias_grad_workspace_bytes(int64_t rows, int64_t cols);

/// db[c] = Σ_r dy[r, c] for a [rows, cols] matrix, accumulated in fp32 and
/// deterministic (fixed partition and order, no atomics); db has dy's type.
/// rows == 0 gives db = 0. `workspace` holds bias_grad_workspace_bytes().
void bias_grad(DType dtype, int64_t rows, int64_t cols, const void* dy, void* db, void* workspace,
               cudaStream_t stream);

/// y[r, c] = act(y[r, c] + b[c]) in one pass over y: add_bias then
/// relu_forward (when `relu`) fused, the sum and the ReLU in fp32 and one
/// rounding in bf16. NaN stays NaN. 16-byte accesses when cols is a multiple
/// of 16 bytes' worth of elements and y, b are 16-byte aligned.
void bias_activation(DType dtype, int64_t rows, int64_t cols, void* y, const void* b, bool relu,
                     cudaStream_t stream);

/// Workspace relu_bias_grad needs for a [rows, cols] dy (its partial sums).
size_t relu_bias_grad_workspace_bytes(int64_t rows, int64_t cols);

/// Counters relu_bias_grad needs for `cols` columns (one per column tile).
int64_t relu_bias_grad_counters(int64_t cols);

/// Which kernel relu_bias_grad runs: by the row count (kAuto), or one of
/// the two whatever the rows (benchmarks and tests compare them).
enum class ReluBiasGradPasses { kAuto, kOne, kTwo };

/// Whether kAuto takes the one-pass kernel for `rows` rows (a few thousand
/// at most), so a launch plan can name the kernel that runs.
bool relu_bias_grad_one_pass(int64_t rows);

/// The backward of bias_activation in one launch. With `y` (the layer's
/// ReLU output) non-null: dy[r, c] := y[r, c] > 0 ? dy[r, c] : 0 in place
/// (relu_backward's mask), and db[c] = Σ_r of those values; with y null: db
/// alone (bias_grad's result; dy untouched). Accumulated in fp32,
/// deterministic (fixed partition, fixed order); db has dy's type; rows == 0
/// gives db = 0 (a memset). Up to a few thousand rows
/// (relu_bias_grad_one_pass) a block reads every row of its columns and
/// writes their db itself (relu_bias_grad_one_pass_kernel; the workspace and
/// `done` are not touched); beyond, one pass over dy in row slices whose last
/// blocks add up the column sums (relu_bias_grad_partial_kernel). db's bits
/// depend on the shape and the kernel, never on the pointers' alignment.
/// `workspace` holds relu_bias_grad_workspace_bytes() (16-byte aligned for
/// the 16-byte paths, else the one-element path runs); y, dy, db and the
/// workspace do not overlap (the kernels read y and dy through __restrict__
/// pointers); `done` holds relu_bias_grad_counters() device counters, 0
/// before the first call and left 0 after each (calls that share them run
/// one after another).
void relu_bias_grad(DType dtype, int64_t rows, int64_t cols, const void* y, void* dy, void* db,
                    void* workspace, unsigned* done, cudaStream_t stream,
                    ReluBiasGradPasses passes = ReluBiasGradPasses::kAuto);

}  // namespace perflab::kernels::cuda
