// Rectified linear unit on the CPU, elementwise over a flat buffer of n
// floats (any shape, row-major or not). Reference for the CUDA ReLU.
#pragma once

#include <cstdint>

namespace perflab::kernels::cpu {

/// y[i] = max(x[i], 0); a NaN input stays NaN. `y` may be `x` (in place).
void relu_forward(int64_t n, const float* x, float* y);

/// dx[i] = y[i] > 0 ? dy[i] : 0, masking by the forward *output* y, so the
/// forward input need not be kept. `dx` may be `dy` (in place).
void relu_backward(int64_t n, const float* y, const float* dy, float* dx);

}  // namespace perflab::kernels::cpu
