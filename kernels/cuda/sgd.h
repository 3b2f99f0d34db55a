// Dense SGD on the GPU, and the fp32 -> bf16 copy for mixed precision.
//
//   SgdUpdate        w[i] -= lr_device[0] * g[i] over a flat array (one launch
//                    for every dense parameter when they share one
//                    allocation), rounded as the CPU rounds (product, then
//                    difference: no fused multiply-add), so it matches
//                    CpuModel::apply_gradients bit for bit. When weights_bf16
//                    is set, the updated weights are also written there as
//                    bf16 (round to nearest even) in the same pass. The
//                    gradients may be bf16 (gradients_bf16: a bf16 model's
//                    GEMMs write them so), widened exactly as they are read.
//   CastFloatToBf16  dst[i] = bf16(src[i]): fp32 master weights -> the bf16
//                    copies the GEMMs read.
// The learning rate is read from device memory, so a captured CUDA graph
// replays with the current value. run() never allocates or synchronises.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/status.h"
#include "kernels/launch.h"

namespace perflab::kernels::cuda {

/// A flat dense update.
struct SgdArguments {
  int64_t count = 0;                      ///< Floats in weights and gradients.
  float* weights = nullptr;               ///< [count], fp32 master weights.
  const float* gradients = nullptr;       ///< [count]; or, instead, gradients_bf16
  const float* lr_device = nullptr;       ///< Device float: the learning rate.
  __nv_bfloat16* weights_bf16 = nullptr;  ///< Optional [count]: bf16 copy of the updated weights.
  const __nv_bfloat16* gradients_bf16 = nullptr;  ///< [count], bf16: exactly one of it and gradients is set
  /// At most this many blocks (0: a thread per four values); a grid-stride
  /// loop covers the rest, with the same bits. An update that runs beside
  /// a chain of short kernels keeps to a few blocks a SM, so the chain's
  /// next kernel finds threads free instead of waiting for the update's.
  int64_t max_blocks = 0;
};

/// w -= lr * g (and optionally the bf16 copy of w).
class SgdUpdate {
 public:
  static Status can_implement(const SgdArguments& args);
  /// Always 0.
  static size_t workspace_bytes(const SgdArguments& args);
  static void run(const SgdArguments& args, void* workspace, cudaStream_t stream);
  /// What run() launches: one kernel reading weights and gradients (bf16
  /// ones when gradients_bf16 is set) and writing the weights (and,
  /// `bf16_copy`: weights_bf16 set, their bf16 copy). Host-only.
  static LaunchList launches(const SgdArguments& args, bool bf16_copy);
};

/// A flat fp32 -> bf16 copy.
struct CastArguments {
  int64_t count = 0;             ///< Elements.
  const float* src = nullptr;    ///< [count]
  __nv_bfloat16* dst = nullptr;  ///< [count] (or count / row rows of dst_stride); must not overlap src.
  /// Optional: src is rows of `row` elements (count a multiple of it),
  /// written `dst_stride` elements apart in dst, the columns between left as
  /// they are (a padded input: DLRM's 13 dense features in rows of 16).
  /// 0: one flat run.
  int64_t row = 0;
  int64_t dst_stride = 0;
};

/// dst = bf16(src), round to nearest even.
class CastFloatToBf16 {
 public:
  static Status can_implement(const CastArguments& args);
  /// Always 0.
  static size_t workspace_bytes(const CastArguments& args);
  static void run(const CastArguments& args, void* workspace, cudaStream_t stream);
  /// What run() launches: one kernel, fp32 read, bf16 written. Host-only.
  static LaunchList launches(const CastArguments& args);
};

}  // namespace perflab::kernels::cuda
