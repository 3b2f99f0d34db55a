// The lower triangle's pair index, for the interaction's tensor-core kernels
// (interaction_tc.cu: writing Z·Zᵀ's pairs, filling the pair gradients) and
// a host test (tests/kernels/cuda/pair_index_test.cc). Host and device.
#pragma once

#include <cmath>

#include "base/host_device.h"

namespace perflab::kernels::cuda {

/// The pair (i, j), i > j >= 0, at index p = i (i - 1) / 2 + j (the lower
/// triangle row by row), for 0 <= p < 2^28. A single-precision estimate of
/// the row, then integer corrections that make it exact whatever the
/// estimate (r (r + 1) stays under 2^30 there), all in 32-bit integers,
/// where a double-precision square root and 64-bit arithmetic ran at every
/// pair of every sample (11 pairs a lane a sample at DLRM's 27 features;
/// scripts/sass --diff at 8758d0b: the bf16 tensor-core backward 1,136 ->
/// 968 instructions, its DFMA and DMUL gone).
PERFLAB_HOST_DEVICE inline void pair_from_index(int p, int* i, int* j) {
  int r = static_cast<int>((1.0f + sqrtf(1.0f + 8.0f * static_cast<float>(p))) * 0.5f);
  while (r * (r - 1) / 2 > p) --r;
  while ((r + 1) * r / 2 <= p) ++r;
  *i = r;
  *j = p - r * (r - 1) / 2;
}

}  // namespace perflab::kernels::cuda
