// Sigmoid and binary cross-entropy on logits, on the CPU.
#include "kernels/cpu/bce.h"

#include <cmath>

#include "kernels/bce_math.h"

namespace perflab::kernels::cpu {

void sigmoid(int64_t n, const float* z, float* p) {
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(stable_sigmoid(z[i]));
}

double bce_with_logits(int64_t n, const float* logits, const float* labels, float* dlogit) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double z = logits[i];
    const double y = labels[i];
    total += bce_sample_loss(z, y);
    if (dlogit != nullptr) {
      dlogit[i] = static_cast<float>((stable_sigmoid(z) - y) / static_cast<double>(n));
    }
  }
  return total / static_cast<double>(n);
}

}  // namespace perflab::kernels::cpu
