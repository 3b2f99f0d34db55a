// Fully connected layer on the CPU: y = x·Wᵀ + b, and its backward pass.
// This is the reference the CUDA linear kernel is tested against.
//
// Layout: every tensor is dense and row-major.
//   x  [batch, in]    y  [batch, out]
//   W  [out, in]      b  [out]
// The GEMMs go through OpenBLAS (cblas_sgemm); the bias-gradient reduction is
// ours and sums over the batch serially per column, so its result does not
// depend on the thread count. Nothing here allocates.
#pragma once

#include <cstdint>

namespace perflab::kernels::cpu {

/// Problem size of a fully connected layer.
struct LinearShape {
  int64_t batch = 0;  ///< B: rows of x, y, dy.
  int64_t in = 0;     ///< Input features: columns of x, W.
  int64_t out = 0;    ///< Output features: columns of y, rows of W.
};

/// y[B,out] = x[B,in]·Wᵀ + b. `y` must not alias `x`; it is overwritten.
void linear_forward(const LinearShape& shape, const float* x, const float* w, const float* b,
                    float* y);

/// Gradients of linear_forward given dy[B,out]; all outputs are overwritten
/// (not accumulated):
///   dx[B,in]   = dy·W         (skipped when dx is nullptr)
///   dW[out,in] = dyᵀ·x
///   db[out]    = Σ_batch dy   (summed in batch order for each column)
/// No output may alias an input.
void linear_backward(const LinearShape& shape, const float* x, const float* w, const float* dy,
                     float* dx, float* dw, float* db);

}  // namespace perflab::kernels::cpu
