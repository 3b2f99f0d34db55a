// Sigmoid and binary cross-entropy on logits, on the CPU.
#include "kernels/cpu/bce.h"

#include <cmath>

namespace perflab::kernels::cpu {
namespace {

/// σ(z) without overflow: exp is only ever taken of a non-positive number.
inline double stable_sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

}  // namespace

void sigmoid(int64_t n, const float* z, float* p) {
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(stable_sigmoid(z[i]));
}

double bce_with_logits(int64_t n, const float* logits, const float* labels, float* dlogit) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double z = logits[i];
    const double y = labels[i];
    total += std::fmax(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
    if (dlogit != nullptr) {
      dlogit[i] = static_cast<float>((stable_sigmoid(z) - y) / static_cast<double>(n));
    }
  }
  return total / static_cast<double>(n);
}

}  // namespace perflab::kernels::cpu
