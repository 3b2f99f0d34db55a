// Several matrices transposed in one launch: dst = srcᵀ for each, fp32 or
// bf16, the bits moved unchanged (the CPU reference is the element copy).
//
// Why: on Hopper a TF32 tensor-core GEMM reads both operands K-major from
// shared memory (the hardware transposes 16-bit types only), so the
// cuBLASLt kernels for a data-gradient GEMM dx = dz·W, whose W [out, in]
// is M-major there, run slower than the forward GEMM of the same FLOPs: on
// an H200 at 1590d6a (each GEMM timed alone by gemm_algorithms=tuned, TF32,
// batch 65,536: docs/results/2026-11-27-h200-gpu-check-1590d6a/tuned-gemms.md)
// 404.6 us against 348.6 for the 1024 x 1024 layer, 235.3 against 204.0
// for 480 -> 1024 (whose dgrad writes fewer bytes); in bf16 0.97x and
// 0.85x. A copy of Wᵀ makes that GEMM "TN", K-major on both sides
// (kernels/cuda/linear.h: dgrad_reads_w_t). DLRM writes those copies once a
// training step (about 9 MB of fp32 weights at the DLE shape), up to
// kMaxTransposeMatrices layers a launch; cuBLASLt's cublasLtMatrixTransform
// would take a launch a matrix.
//
// A block of 32 x 8 threads moves a 32 x 32 tile through shared memory
// (transpose_tiles.h), reads and writes along rows. run() never allocates
// or synchronises; it can be captured in a CUDA graph.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda/status.h"
#include "kernels/cuda/transpose_tiles.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// `matrices` in launches of up to kMaxTransposeMatrices, in order.
std::vector<TransposeBatch> transpose_batches(const std::vector<TransposeMatrix>& matrices, int element_bytes);

class TransposeMatrices {
 public:
  /// 1 to kMaxTransposeMatrices matrices, each with rows and cols >= 1 and
  /// both pointers set and aligned to the element, element_bytes 4 or 2, no
  /// source overlapping any destination.
  static Status can_implement(const TransposeBatch& batch);
  /// One launch on `stream` (tile_start is filled here).
  static void run(TransposeBatch batch, cudaStream_t stream);
  /// One kernel reading and writing every element once. Host-only.
  static LaunchList launches(const TransposeBatch& batch);
};

}  // namespace perflab::kernels::cuda
