// Internal to the CUDA linear layer (kernels/cuda/linear.cc): one planned
// cublasLtMatmul. The descriptor, the three layouts and the algorithm are
// made once (cublasLtMatmulAlgoGetHeuristic at planning); run() only sets
// per-call pointers and enqueues the matmul: no allocation, no host sync.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cuda/linear.h"
#include "kernels/cuda/status.h"

namespace perflab::kernels::cuda {

/// The cuBLASLt workspace every planned GEMM may use (NVIDIA recommends
/// 32 MiB on Hopper); the first bytes of Linear's workspace.
inline constexpr size_t kLinearCublasWorkspaceBytes = size_t{32} << 20;

/// What one GEMM computes, in cuBLASLt's column-major terms: D = op(A)·op(B)
/// with every layout "rows, cols, ld = rows" (see linear.cc for how the
/// row-major tensors map onto these).
struct GemmSpec {
  const char* name;  ///< "forward", "dgrad", "wgrad": for messages.
  Precision precision;
  cublasOperation_t trans_a, trans_b;
  uint64_t a_rows, a_cols, b_rows, b_cols, d_rows, d_cols;
  cublasLtEpilogue_t epilogue;
  int64_t aux_ld_bits;  ///< ReLU bitmask leading dimension when the epilogue has aux.
};

/// Algorithms asked of cuBLASLt's heuristic per GEMM: the first is used
/// unless tune() times them and keeps the fastest.
inline constexpr int kLinearAlgorithmCandidates = 8;

/// A planned cublasLtMatmul (move-only resource owner).
class LtGemm {
 public:
  LtGemm() = default;
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  ~LtGemm();

  /// Creates descriptor and layouts and asks the heuristic for an algorithm
  /// that works with kLinearPointerAlignment-aligned pointers and a
  /// kLinearCublasWorkspaceBytes workspace. Not ok (naming the GEMM, its
  /// sizes and epilogue) when cuBLASLt has none; throws CudaError when a
  /// descriptor cannot be made.
  Status plan(cublasLtHandle_t handle, const GemmSpec& spec);

  /// Sets the epilogue's bias (or bias-gradient) pointer for the next run().
  void set_bias(const void* bias) const;
  /// Sets the epilogue's ReLU-bitmask pointer for the next run().
  void set_aux(const void* aux) const;

  /// D = op(A)·op(B) (+ epilogue) on `stream`, beta = 0 (C is D).
  void run(cublasLtHandle_t handle, const void* a, const void* b, void* d, void* workspace,
           cudaStream_t stream) const;

  /// Times every candidate the heuristic returned on these operands (one
  /// warm-up, then `repetitions` runs, CUDA events, median) and keeps the
  /// fastest for run(). A candidate cuBLASLt refuses to run is skipped
  /// (NaN). Synchronises the host: setup only. Bias/aux pointers are the
  /// ones set last.
  GemmChoice tune(cublasLtHandle_t handle, const void* a, const void* b, void* d, void* workspace,
                  cudaStream_t stream, int repetitions);

  /// How many candidates the heuristic returned (at least 1 once planned).
  int candidates() const { return static_cast<int>(candidates_.size()); }

 private:
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  std::vector<cublasLtMatmulAlgo_t> candidates_;
  cublasLtMatmulAlgo_t algo_{};
  const char* name_ = "";
};

}  // namespace perflab::kernels::cuda
