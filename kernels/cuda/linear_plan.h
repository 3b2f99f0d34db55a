// Internal to the CUDA linear layer (kernels/cuda/linear.cc): one planned
// cublasLtMatmul. The descriptor, the three layouts and the algorithm are
// made once (cublasLtMatmulAlgoGetHeuristic at planning); run() only sets
// per-call pointers and enqueues the matmul: no allocation, no host sync.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
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
/// unless tune() times them and keeps the fastest. The heuristic returns
/// them in order of its estimated time, so the first is its pick however
/// many are asked for; 32, not 8: on an H200 at 1590d6a (TF32, batch 512)
/// the heuristic's picks were mostly Ampere-generation kernels
/// (cutlass_80_tensorop_s1688gemm, 138 us of the step's GEMM time) with
/// split-K reductions, and eight candidates timed gave 1.00x; more widen
/// the search for about 20 GEMMs x 32 candidates x a few ms at setup.
inline constexpr int kLinearAlgorithmCandidates = 32;

/// LtGemm::search: for each of cuBLASLt's algorithm ids that can run these
/// types, the heuristic limited to that id (CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID)
/// is asked for its best kSearchPerAlgorithm configurations; new ones are
/// added to the candidates until there are kSearchMostCandidates. On an
/// H200 at 32e4a50 the plain heuristic returned at most 8 candidates a GEMM
/// however many were asked for, and at TF32 batch 512 its picks were
/// mostly Ampere-generation kernels (cutlass_80_tensorop_s1688gemm, with
/// split-K reductions): tuning them gave 1.01x.
inline constexpr int kSearchPerAlgorithm = 4;
inline constexpr int kSearchMostCandidates = 64;

/// LtGemm::tune times each candidate as a CUDA graph of back-to-back
/// launches, replayed `repetitions` times: about kTuneBatchMs of device time
/// a replay by its warm-up launch's time, from 1 to kTuneMaxBatch launches.
inline constexpr double kTuneBatchMs = 0.2;
inline constexpr int kTuneMaxBatch = 32;

/// The launches in a candidate's timed graph when one launch between two
/// events took `once_ms` (which counts the host's call too, so it errs
/// long and the batch short): ceil(kTuneBatchMs / once_ms), within [1,
/// kTuneMaxBatch]; kTuneMaxBatch for a time that is not positive.
int tune_batch(double once_ms);

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

  /// Adds the configurations of the other algorithm ids (kSearchPerAlgorithm
  /// an id, the heuristic limited to it, queried with plan()'s stand-in
  /// epilogue pointers; those cublasLtMatmulAlgoCheck passes with the
  /// workspace we give) to the heuristic's candidates, up to `most` in all,
  /// a rank at a time (every id's best, then every id's second, ...);
  /// returns how many it added. Host-only queries; tune() times them. Call
  /// after plan(); the epilogue pointers must be set again before a run.
  int search(cublasLtHandle_t handle, int per_algorithm = kSearchPerAlgorithm, int most = kSearchMostCandidates);

  /// Candidate i's configuration as cuBLASLt reports it ("algo 21 tile 18
  /// stages 12 split-k 1 ..."): what a result records of the kept one.
  std::string describe(int i) const;

  /// Sets the epilogue's bias (or bias-gradient) pointer for the next run().
  void set_bias(const void* bias) const;
  /// Sets the epilogue's ReLU-bitmask pointer for the next run().
  void set_aux(const void* aux) const;

  /// D = op(A)·op(B) (+ epilogue) on `stream`, beta = 0 (C is D).
  void run(cublasLtHandle_t handle, const void* a, const void* b, void* d, void* workspace,
           cudaStream_t stream) const;

  /// Times every candidate the heuristic returned on these operands and
  /// keeps the fastest for run(), on a stream of the call's own (after the
  /// work already on `stream`): a warm-up launch (the first call loads the
  /// kernel), one launch between CUDA events to size the batch
  /// (tune_batch), then a graph of that many launches captured, replayed
  /// once to warm up and `repetitions` times back to back, an event after
  /// each, with no host call between two events; a candidate's time is the
  /// median replay over its launches (ms a launch). One launch between two
  /// events, the way before, also timed the host's cublasLtMatmul call: at
  /// DLE batch 512 on an H200 (1590d6a) candidates read 10-22 us where the
  /// step's profile had the same kernels at 4-10. A candidate cuBLASLt
  /// refuses to run, plainly or in a capture, is skipped (NaN). Synchronises
  /// the host: setup only. Bias/aux pointers are the ones set last.
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
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  cudaDataType_t type_ = CUDA_R_32F;  // A, B, C and D's
  cublasLtEpilogue_t epilogue_ = CUBLASLT_EPILOGUE_DEFAULT;
};

}  // namespace perflab::kernels::cuda
