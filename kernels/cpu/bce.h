// Sigmoid and binary cross-entropy on logits, on the CPU. The reference for
// the CUDA loss kernel.
//
// For a logit z and a label y in {0, 1} (any value in [0, 1] works), the loss
//   l(z, y) = -y·log σ(z) - (1-y)·log(1-σ(z)) = max(z, 0) - z·y + log1p(exp(-|z|))
// is evaluated in that last, overflow-free form, in double.
#pragma once

#include <cstdint>

namespace perflab::kernels::cpu {

/// p[i] = σ(z[i]) = 1 / (1 + exp(-z[i])), computed without overflow for any
/// finite z. `p` may be `z` (in place).
void sigmoid(int64_t n, const float* z, float* p);

/// Mean binary cross-entropy over n logits (n > 0), summed serially in
/// double so the result does not depend on the thread count. When `dlogit`
/// is not nullptr it receives the gradient of the mean:
/// dlogit[i] = (σ(z[i]) - y[i]) / n.
double bce_with_logits(int64_t n, const float* logits, const float* labels, float* dlogit);

}  // namespace perflab::kernels::cpu
