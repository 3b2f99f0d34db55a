// The sigmoid binary cross-entropy's per-sample math, one definition for
// the CPU reference (kernels/cpu/bce.cc) and the GPU's loss kernels
// (kernels/cuda/bce_device.cuh): in double, so both sides compute the same
// function to double rounding.
#pragma once

#include <cmath>

#include "base/host_device.h"

namespace perflab::kernels {

/// σ(z) without overflow: exp is only ever taken of a non-positive number.
PERFLAB_HOST_DEVICE inline double stable_sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + ::exp(-z));
  const double e = ::exp(z);
  return e / (1.0 + e);
}

/// l(z, y) = max(z, 0) - z y + log(1 + e^-|z|).
PERFLAB_HOST_DEVICE inline double bce_sample_loss(double z, double y) {
  return ::fmax(z, 0.0) - z * y + ::log1p(::exp(-::fabs(z)));
}

}  // namespace perflab::kernels
