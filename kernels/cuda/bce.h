// Sigmoid binary cross-entropy on logits on the GPU: the CUDA twin of
// kernels/cpu/bce.h. Per-sample math is in double, as on the CPU.
//
//   dlogit[i]          = (σ(z[i]) - y[i]) / N            (the gradient of the mean)
//   *loss_accumulator += (1/N) Σ_i l(z[i], y[i])         (the batch's mean loss)
//                        (N = n, or mean_over when the n samples are one
//                        rank's share of a larger batch)
//   *nonfinite_flag    = 1 when that mean is not finite   (sticky; never cleared here)
//                        or, with a step counter, 1 + the counter's value at
//                        the first non-finite mean (which step diverged)
//   *step_counter     += 1                                  (the device counts its steps)
//
// The loss stays on the device: the host reads the accumulator (and the
// flag) only when it chooses, e.g. at the end of a block of iterations. The
// batch sum is reduced in a fixed order (per-block partials in double, then
// one block), so results are deterministic for a given n; the mean is then
// rounded to float and added to the accumulator. With a block counter
// (done_counter) that is one launch, the last block to finish doing the
// final sum; without, two. The logits and dlogit may be bf16 (a bf16 model's
// last layer writes them so): widened as they are read, rounded to nearest
// even as they are written. run() never allocates or synchronises.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/status.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// Problem and device pointers of the loss.
struct BceArguments {
  int64_t n = 0;                      ///< Samples (logits), at least 1.
  const float* logits = nullptr;      ///< [n]
  const float* labels = nullptr;      ///< [n], each in [0, 1].
  float* dlogit = nullptr;            ///< Optional [n]: receives (σ(z) - y) / n.
  float* loss_accumulator = nullptr;  ///< Optional device float: += the batch's mean loss.
  int32_t* nonfinite_flag = nullptr;  ///< Optional device int: set to 1 on a non-finite mean loss.
  /// Optional device int, incremented by every run: the flag then records
  /// 1 + its value at the first non-finite mean instead of 1, so the host
  /// learns which step diverged without reading anything per step.
  int32_t* step_counter = nullptr;
  /// Optional: these n samples are a share of a batch of `mean_over`
  /// samples split over ranks. dlogit is then (σ(z) - y) / mean_over and
  /// the accumulator gets the mean × n / mean_over (this share of the whole
  /// batch's mean), so the shares of every rank sum to the batch's. 0: n.
  int64_t mean_over = 0;
  /// Optional device counter, 0 before the first run; every run leaves it 0
  /// (graph replays included). With it the loss is one launch: the last
  /// block to finish sums the blocks' partials in block order (the same
  /// order, so the same bits, as the two-launch form) and publishes; without
  /// it, a partial kernel and a finish kernel. Give it its own memory (not
  /// the shared workspace, which other operators overwrite between runs).
  uint32_t* done_counter = nullptr;
  /// Optional, instead of logits and dlogit: both bf16 (set logits_bf16
  /// and leave logits null; dlogit_bf16 optional like dlogit).
  const __nv_bfloat16* logits_bf16 = nullptr;  ///< [n]
  __nv_bfloat16* dlogit_bf16 = nullptr;        ///< Optional [n]
};

/// Mean BCE with logits and its gradient.
class BceWithLogits {
 public:
  /// Checks n, that labels and exactly one of logits and logits_bf16 are
  /// set, and that a dlogit has the logits' type.
  static Status can_implement(const BceArguments& args);
  /// Per-block partial sums (a few KiB at most).
  static size_t workspace_bytes(const BceArguments& args);
  static void run(const BceArguments& args, void* workspace, cudaStream_t stream);
  /// What run() launches: the per-block partial sums (logits and labels
  /// read, dlogit written) and the one-block finish. Host-only.
  static LaunchList launches(const BceArguments& args);
};

}  // namespace perflab::kernels::cuda
