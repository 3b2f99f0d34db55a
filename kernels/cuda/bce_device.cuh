// Device functions of the sigmoid binary cross-entropy, shared by the loss
// kernel (bce.cu) and the fused last layer and loss (logit_head.cu): the
// per-sample math (kernels/bce_math.h, the CPU reference's own), and the
// publication of a batch's mean.
#pragma once

#include <cstdint>

#include "kernels/bce_math.h"

namespace perflab::kernels::cuda {

using kernels::bce_sample_loss;
using kernels::stable_sigmoid;

/// The loss of n samples (their losses summed in `total`), as this share of
/// a batch of mean_over samples, added to the accumulator; the step counter
/// advanced and the sticky non-finite flag set (1 + the step, or 1 without a
/// counter). One thread calls it, once per run.
__device__ inline void publish_loss(int64_t n, int64_t mean_over, double total, float* __restrict__ loss_accumulator,
                                    int32_t* __restrict__ nonfinite_flag, int32_t* __restrict__ step_counter) {
  const double mean = total / static_cast<double>(n);
  // n / mean_over is exactly 1 for a whole batch: the same value as before.
  const double share = static_cast<double>(n) / static_cast<double>(mean_over);
  if (loss_accumulator != nullptr) *loss_accumulator += static_cast<float>(mean * share);
  int32_t step = 0;
  if (step_counter != nullptr) {
    step = *step_counter;
    *step_counter = step + 1;
  }
  if (nonfinite_flag != nullptr && !isfinite(mean) && *nonfinite_flag == 0) {
    *nonfinite_flag = step_counter != nullptr ? step + 1 : 1;
  }
}

}  // namespace perflab::kernels::cuda
