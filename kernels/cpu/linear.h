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

/// y = max(x·Wᵀ + b, 0): linear_forward and relu_forward with the bias added
/// in the ReLU's pass (the GEMM writes x·Wᵀ, one pass adds b and clamps),
/// not in a broadcast pass of its own. Equal to the two calls up to where the
/// bias enters the sum: last here, first there (OpenBLAS accumulates C in
/// blocks of K, so the two round differently when K spans several blocks).
void linear_relu_forward(const LinearShape& shape, const float* x, const float* w, const float* b,
                         float* y);

/// Gradients of linear_forward given dy[B,out]; all outputs are overwritten
/// (not accumulated):
///   dx[B,in]   = dy·W         (skipped when dx is nullptr)
///   dW[out,in] = dyᵀ·x
///   db[out]    = Σ_batch dy   (summed in batch order for each column)
/// No output may alias an input.
void linear_backward(const LinearShape& shape, const float* x, const float* w, const float* dy,
                     float* dx, float* dw, float* db);

/// linear_backward for a layer followed by a ReLU, y = max(x·Wᵀ + b, 0):
/// `dy` comes in as the gradient with respect to y and is overwritten with
/// the gradient with respect to the pre-activation (dy where y > 0, else 0),
/// masked in the same pass that sums db; then as linear_backward. Equal to
/// relu_backward followed by linear_backward, with one pass less over dy.
void linear_relu_backward(const LinearShape& shape, const float* x, const float* w,
                          const float* y, float* dy, float* dx, float* dw, float* db);

}  // namespace perflab::kernels::cpu
