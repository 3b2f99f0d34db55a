// Private to the CUDA RNN-T loss: the resolved problem passed by value to its
// kernels, and the launchers rnnt_loss.cc calls. Host-only (plain data and
// declarations); the kernels live in rnnt_recursion.cu, rnnt_loss_unfused.cu
// and rnnt_loss_fused.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/rnnt_loss.h"

namespace perflab::kernels::cuda::rnnt_detail {

/// Everything a kernel needs, resolved on the host (no host data behind it).
struct RnntProblem {
  int64_t batch = 0;
  int64_t max_time = 0;
  int64_t max_labels = 0;  ///< U; U+1 label positions.
  int64_t vocab = 0;
  int64_t blank = 0;     ///< Resolved blank index in [0, V).
  int64_t rows = 0;      ///< Rows of logits/grad/workspace.
  bool packed = false;   ///< Layout.
  bool mean = false;     ///< Reduction kMean (loss and gradient divided by B).
  float grad_scale = 1;  ///< 1/B for kMean, else 1.
  RnntDType dtype = RnntDType::kFloat32;
  /// Rows are read and written four elements at a time: V % 4 == 0 and
  /// logits, grad (and the unfused log-probs) aligned to four elements, so
  /// every row starts aligned (rnnt_common.cuh's load4/store4).
  bool vector4 = false;
  const void* logits = nullptr;
  const int32_t* labels = nullptr;
  const int32_t* logit_lengths = nullptr;
  const int32_t* label_lengths = nullptr;
  const int64_t* offsets = nullptr;  ///< Packed only.
  float* costs = nullptr;
  void* grad = nullptr;
  float* loss = nullptr;
};

/// Workspace carved into fp32 arrays (unused ones are nullptr).
struct RnntWorkspace {
  float* log_probs = nullptr;  ///< Unfused: [rows, V].
  float* lse = nullptr;        ///< Fused: [rows] log-sum-exp of each row.
  float* lp_blank = nullptr;   ///< Fused: [rows] log-prob of blank.
  float* lp_label = nullptr;   ///< Fused: [rows] log-prob of the next label (-inf at u = U_b).
  float* alpha = nullptr;      ///< [rows]
  float* beta = nullptr;       ///< [rows]
};

/// Threads per block of the row kernels (one warp per row).
constexpr int kRowThreads = 256;

// Unfused (rnnt_loss_unfused.cu).
void launch_log_softmax(const RnntProblem& p, const RnntWorkspace& w, cudaStream_t stream);
void launch_unfused_gradient(const RnntProblem& p, const RnntWorkspace& w, cudaStream_t stream);

// Fused (rnnt_loss_fused.cu).
void launch_row_stats(const RnntProblem& p, const RnntWorkspace& w, cudaStream_t stream);
void launch_fused_gradient(const RnntProblem& p, const RnntWorkspace& w, cudaStream_t stream);

// Shared (rnnt_recursion.cu). Alpha (and beta when `with_beta`) from the
// unfused log-probabilities (w.log_probs) or the fused row values
// (w.lp_blank, w.lp_label); writes costs.
void launch_alpha_beta(const RnntProblem& p, const RnntWorkspace& w, bool fused, bool with_beta,
                       cudaStream_t stream);
/// One block: loss = Σ costs (/ B for kMean), in batch order.
void launch_reduce_loss(const RnntProblem& p, cudaStream_t stream);

}  // namespace perflab::kernels::cuda::rnnt_detail
