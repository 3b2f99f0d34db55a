// 3D convolution on a CUDA device through cuDNN: the twin of
// kernels/cpu/conv3d.h, with its geometry, its plane views (holding device
// pointers here), its d_offset rule (output plane o sees input planes
// o + d_offset + kd - r; planes outside the view are zero), and its
// accumulate (beta = 1) for all three passes. fp32 storage with TF32 tensor
// cores (cuDNN's default, as frameworks run it) or plain fp32 FMA; or bf16
// storage (tensors and weights) with fp32 accumulation on bf16 tensor cores.
//
// Lifecycle (CUTLASS-style): Conv3d::can_implement(args) (host only) ->
// Conv3d(handle, args) once per shape, outside the timed path (descriptors
// and the algorithm from cuDNN's heuristics) -> workspace_bytes() ->
// run(args, workspace, stream) any number of times. run() only enqueues:
// no allocation, no host synchronisation, so it can be captured in a CUDA
// graph (after one eager run, as the harness does: cuDNN loads its kernels
// on first use). The "shape" is everything but the pointers and `accumulate`: the
// pass, math, geometry, d_offset, both views' plane counts and strides.
//
// How d_offset reaches cuDNN (cross-correlation, stride 1, pad_h = pad_w = r):
// cuDNN's output plane o reads input plane o - pad_d + kd, and it has
// X + 2 pad_d - 2r planes. So when pad_d = r - d_offset lies in [0, 2r],
// Y = X - 2 d_offset and X >= 1, the strided views go to cuDNN as they are:
// a whole volume (d = 0, Y = X), a halo-padded slab (d = +r, X = Y + 2r), the
// data gradient of one (d = -r, Y = X + 2r). Otherwise (a thin correction
// of halo planes alone, as the CPU halo layer computes it), the call is "staged": the x-side planes the output
// window reads, [d - r, d - r + Y + 2r), live in a zero-padded dense block in
// the workspace and cuDNN runs with pad_d = 0. Forward and backward filter
// gather x into the block first; backward data gathers dy into a dense block
// of its own (cuDNN's backward-data pass refused the strided plane ranges the
// halo's earlier overlap schedule gave it on an H100, while taking whole
// buffers; a direct-form call cuDNN turns down is staged the same way),
// writes the x-side block, then adds its planes that fall in dx's view into
// dx (zeroing the rest of dx unless accumulating). A staged correction of Y planes costs a convolution of Y
// planes: cuDNN multiplies the block's zero planes too.
//
// The data gradient is the adjoint of the forward map, so when cuDNN has no
// backward-data algorithm for a shape (the first H200 run found none for
// any), it runs as a forward convolution of dy, d_offset negated, with the
// weights flipped and transposed into the workspace
// (cpu::conv3d_adjoint_source; Conv3dPlanOptions forces it for tests).
//
// One cuDNN handle serves every Conv3d built on it; run() sets its stream,
// so plans sharing a handle must run from one host thread.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cpu/conv3d.h"
#include "kernels/cuda/status.h"

struct cudnnContext;  // cudnnHandle_t is cudnnContext*; cudnn.h stays out of headers.

namespace perflab::kernels::cuda {

/// Which of the three maps of kernels/cpu/conv3d.h a call computes.
enum class Conv3dPass { kForward, kBackwardData, kBackwardFilter };

/// kTf32: fp32 storage, cuDNN's default math (TF32 tensor cores on Ampere
/// and later). kFp32: fp32 storage, fp32 FMA only (CUDNN_FMA_MATH).
/// kBf16: every tensor and the weights stored bf16 (the views' elements are
/// bf16 bit patterns), products exact and summed in fp32 (cuDNN's
/// PSEUDO_BFLOAT16 configuration: bf16 tensors, fp32 compute type), the
/// result rounded to bf16 as it is stored (a staged data gradient twice:
/// its block, then its sum into dx).
enum class Conv3dMath { kTf32, kFp32, kBf16 };

/// "forward", "backward_data", "backward_filter".
const char* conv3d_pass_name(Conv3dPass pass);
/// "tf32", "fp32", "bf16".
const char* conv3d_math_name(Conv3dMath math);
/// Bytes of one stored element: 4, or 2 for kBf16.
size_t conv3d_element_bytes(Conv3dMath math);

/// A plane view of device memory whose elements are the math's storage type
/// (float, or bf16 bits): typed views (cpu::PlaneView, a view of uint16_t)
/// convert to these implicitly.
using DevicePlaneView = cpu::BasicPlaneView<void>;
using ConstDevicePlaneView = cpu::BasicPlaneView<const void>;

/// One call. The views and weights are device memory holding the math's
/// storage type; strides count elements. A pass reads and writes only its
/// own fields (the others are ignored):
///   kForward         y  = (accumulate ? y : 0)  + conv(x)        x, w -> y
///   kBackwardData    dx = (accumulate ? dx : 0) + convᵀ(dy)      dy, w -> dx
///   kBackwardFilter  dw = (accumulate ? dw : 0) + dW(x, dy)      x, dy -> dw
/// X (planes of x or dx) and Y (planes of y or dy) may be any counts >= 0.
struct Conv3dArguments {
  Conv3dPass pass = Conv3dPass::kForward;
  Conv3dMath math = Conv3dMath::kTf32;
  cpu::Conv3dGeometry geometry;
  int64_t d_offset = 0;
  bool accumulate = false;   ///< Per call: add to the output (cuDNN beta = 1).
  ConstDevicePlaneView x;   ///< kForward, kBackwardFilter: [N][C_in][X][H][W].
  DevicePlaneView dx;       ///< kBackwardData (written): [N][C_in][X][H][W].
  DevicePlaneView y;        ///< kForward (written): [N][C_out][Y][H][W].
  ConstDevicePlaneView dy;  ///< kBackwardData, kBackwardFilter: [N][C_out][Y][H][W].
  const void* w = nullptr;  ///< kForward, kBackwardData: [C_out][C_in][k][k][k].
  void* dw = nullptr;       ///< kBackwardFilter (written): [C_out][C_in][k][k][k].
};

/// How a Conv3d is planned.
struct Conv3dPlanOptions {
  /// kBackwardData: run it as a forward convolution of dy with the weights
  /// flipped and transposed (cpu::conv3d_adjoint_source; d_offset negated,
  /// C_in and C_out swapped), even when cuDNN has a backward-data
  /// algorithm. Without this, that is the fallback when it has none (the
  /// first H200 run found none for any backward-data shape). For tests.
  bool backward_data_via_forward = false;
};

/// Owns a cuDNN handle (created on the current device). Build once at setup.
class CudnnHandle {
 public:
  CudnnHandle();
  ~CudnnHandle();
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnContext* get() const { return handle_; }

 private:
  cudnnContext* handle_ = nullptr;
};

/// A planned 3D convolution pass (see the file comment).
class Conv3d {
 public:
  /// Whether the shape can run, and why not: a valid geometry, views that
  /// fit their strides, sizes within cuDNN's int range, pointers aligned to
  /// the storage element (null ones are allowed: pointers are per call). Host
  /// only: never touches a device.
  static Status can_implement(const Conv3dArguments& args);
  /// Whether this shape goes to cuDNN on its views as they are (false:
  /// staged through a zero-padded block, or nothing for cuDNN to do because
  /// X or Y is 0). Host only.
  static bool direct(const Conv3dArguments& args);

  /// Plans args' shape on the current device: descriptors and the first
  /// algorithm cuDNN's heuristics rank that runs in this configuration.
  /// Throws CudaError on a library failure; a shape can_implement rejects, or
  /// one cuDNN has no algorithm for, leaves status() not ok.
  Conv3d(const CudnnHandle& handle, const Conv3dArguments& shape, const Conv3dPlanOptions& options = {});
  ~Conv3d();
  Conv3d(Conv3d&&) noexcept;
  Conv3d& operator=(Conv3d&&) noexcept;
  Conv3d(const Conv3d&) = delete;
  Conv3d& operator=(const Conv3d&) = delete;

  /// ok, or why this shape cannot run.
  const Status& status() const;
  /// A kBackwardData plan that runs as a forward convolution (a flip of the
  /// weights into the workspace, then the forward: Conv3dPlanOptions).
  bool backward_data_via_forward() const;
  /// With backward_data_via_forward(): cuDNN's version and what it answered
  /// for the forms tried before the fallback (each ranked algorithm's status
  /// and math, the workspace queries); "" otherwise.
  std::string fallback_reason() const;
  /// Whether run() stages the call through a zero-padded block (plane copies
  /// around cuDNN) instead of handing cuDNN the views as they are; for a data
  /// gradient as a forward convolution, whether that forward is staged.
  bool staged() const;
  /// Device workspace run() needs, bytes: cuDNN's, then the staging block
  /// (and, for a staged data gradient, dy's dense block);
  /// or, a data gradient as a forward convolution, the flipped weights,
  /// then the forward plan's.
  size_t workspace_bytes() const;

  /// Enqueues the pass on `stream`. Throws UsageError when status() is not
  /// ok, args' shape differs from the planned one, a pointer the pass needs
  /// is null, or the workspace is null (when needed) or not 256-byte
  /// aligned; CudaError when cuDNN or a launch fails.
  void run(const Conv3dArguments& args, void* workspace, cudaStream_t stream) const;

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

}  // namespace perflab::kernels::cuda
