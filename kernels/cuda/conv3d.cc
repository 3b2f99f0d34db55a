// 3D convolution through cuDNN's convolution API: plan (descriptors, the
// heuristics' algorithm, workspace) once per shape; run() enqueues at most a
// plane gather, one cuDNN call and a plane add (kernels/cuda/conv3d.h).
#include "kernels/cuda/conv3d.h"

// cuDNN 9 marks this legacy convolution API deprecated in favour of its graph
// API, but still ships and supports it; the attribute is only emitted when
// CUDNN_WARN_DEPRECATED is defined. This file uses the legacy API on purpose
// (one call per pass, capturable, heuristics per shape), so it keeps the
// attribute off for itself whatever the build defines, and only here.
#undef CUDNN_WARN_DEPRECATED
#include <cudnn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/round_up.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/conv3d_planes.h"

namespace perflab::kernels::cuda {
namespace {

using conv3d_detail::PlaneShape;

constexpr size_t kConvWorkspaceAlignment = 256;

/// The input-side view (x, or dx for backward data) and the output-side one
/// (y for forward, dy otherwise) of a call, as read-only views.
ConstDevicePlaneView x_side(const Conv3dArguments& a) {
  return a.pass == Conv3dPass::kBackwardData ? cpu::as_const(a.dx) : a.x;
}
ConstDevicePlaneView y_side(const Conv3dArguments& a) {
  return a.pass == Conv3dPass::kForward ? cpu::as_const(a.y) : a.dy;
}

bool same_layout(const ConstDevicePlaneView& a, const ConstDevicePlaneView& b) {
  return a.planes == b.planes && a.channel_stride == b.channel_stride && a.batch_stride == b.batch_stride;
}

/// Everything but pointers and accumulate.
bool same_shape(const Conv3dArguments& a, const Conv3dArguments& b) {
  const cpu::Conv3dGeometry& g = a.geometry;
  const cpu::Conv3dGeometry& h = b.geometry;
  return a.pass == b.pass && a.math == b.math && a.d_offset == b.d_offset && g.batch == h.batch &&
         g.c_in == h.c_in && g.c_out == h.c_out && g.height == h.height && g.width == h.width && g.k == h.k &&
         same_layout(x_side(a), x_side(b)) && same_layout(y_side(a), y_side(b));
}

Status check_view(const char* name, const ConstDevicePlaneView& v, int64_t batch, int64_t channels, int64_t hw,
                  size_t element) {
  if (v.planes < 0) return Status::invalid(fmt::format("conv3d: {}.planes = {} is negative", name, v.planes));
  if (v.channel_stride < v.planes * hw) {
    return Status::invalid(fmt::format("conv3d: {}.channel_stride = {} is below planes*H*W = {}", name,
                                       v.channel_stride, v.planes * hw));
  }
  if (v.batch_stride < channels * v.channel_stride) {
    return Status::invalid(fmt::format("conv3d: {}.batch_stride = {} is below channels*channel_stride = {}", name,
                                       v.batch_stride, channels * v.channel_stride));
  }
  if (v.batch_stride > INT_MAX / batch || v.planes > INT_MAX / 2) {
    return Status::invalid(fmt::format("conv3d: {}'s extent exceeds cuDNN's int range", name));
  }
  if (reinterpret_cast<uintptr_t>(v.data) % element != 0) {
    return Status::invalid(fmt::format("conv3d: {}.data is not aligned to its {}-byte elements", name, element));
  }
  return Status::success();
}

int to_int(int64_t v) { return static_cast<int>(v); }

/// The math type the convolution descriptor asks for: FMA only for kFp32;
/// tensor cores without down-conversion for kBf16; cuDNN's default (TF32
/// tensor cores) for kTf32.
cudnnMathType_t asked_math(Conv3dMath math) {
  switch (math) {
    case Conv3dMath::kFp32:
      return CUDNN_FMA_MATH;
    case Conv3dMath::kBf16:
      return CUDNN_TENSOR_OP_MATH;
    case Conv3dMath::kTf32:
      break;
  }
  return CUDNN_DEFAULT_MATH;
}

/// The stored elements' cuDNN type (the compute type stays fp32).
cudnnDataType_t storage_type(Conv3dMath math) {
  return math == Conv3dMath::kBf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

/// The first of cuDNN's ranked algorithms that ran its self-check, fits the
/// math asked for (never a down-conversion; no tensor cores for kFp32) and
/// reports a workspace size for this configuration. When none of the ranked
/// ones does, every algorithm of the pass (`count` of them, ranked or not) is
/// asked for its workspace with the math asked for (the query fails for a
/// configuration the algorithm does not support), and the one needing the
/// least, at most kFallbackWorkspaceBytes, is taken (the tests compare every
/// pass with the CPU kernel, so a wrong choice fails there). What cuDNN answered for each is appended to `tried`, so a
/// shape with no algorithm says why (the first H200 run found none for any
/// backward-data shape, 2026-11-26, with no more detail to go on).
template <typename Perf, typename Algo, typename WorkspaceSize>
bool choose_algorithm(const std::vector<Perf>& perf, int returned, int count, Conv3dMath math,
                      WorkspaceSize workspace_size, Algo* algo, size_t* bytes, cudnnMathType_t* math_type,
                      std::string* tried) {
  const cudnnMathType_t asked = asked_math(math);
  for (int i = 0; i < returned; ++i) {
    const Perf& candidate = perf[static_cast<size_t>(i)];
    *tried += fmt::format(" [algo {} ranked {}: {}, math {}", static_cast<int>(candidate.algo), i,
                          cudnnGetErrorString(candidate.status), static_cast<int>(candidate.mathType));
    if (candidate.status != CUDNN_STATUS_SUCCESS || candidate.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
        (math == Conv3dMath::kFp32 && candidate.mathType == CUDNN_TENSOR_OP_MATH)) {
      *tried += "]";
      continue;
    }
    size_t needed = 0;
    const cudnnStatus_t ws = workspace_size(candidate.algo, &needed);
    if (ws != CUDNN_STATUS_SUCCESS) {
      *tried += fmt::format(", workspace {}]", cudnnGetErrorString(ws));
      continue;
    }
    *tried += "]";
    *algo = candidate.algo;
    // The query ran with the math asked for and the plan runs with the
    // candidate's, which the heuristics sized (`memory`): the larger of both.
    *bytes = std::max(needed, candidate.memory);
    *math_type = math == Conv3dMath::kFp32 ? CUDNN_FMA_MATH : candidate.mathType;
    return true;
  }
  constexpr size_t kFallbackWorkspaceBytes = size_t{1} << 30;
  bool found = false;
  for (int a = 0; a < count; ++a) {
    size_t needed = 0;
    const cudnnStatus_t ws = workspace_size(static_cast<Algo>(a), &needed);
    *tried += ws == CUDNN_STATUS_SUCCESS ? fmt::format(" [algo {} by its workspace query: {} bytes]", a, needed)
                                         : fmt::format(" [algo {} by its workspace query: {}]", a, cudnnGetErrorString(ws));
    if (ws != CUDNN_STATUS_SUCCESS || needed > kFallbackWorkspaceBytes || (found && needed >= *bytes)) continue;
    *algo = static_cast<Algo>(a);
    *bytes = needed;
    *math_type = asked;
    found = true;
  }
  return found;
}

}  // namespace

const char* conv3d_pass_name(Conv3dPass pass) {
  switch (pass) {
    case Conv3dPass::kForward:
      return "forward";
    case Conv3dPass::kBackwardData:
      return "backward_data";
    case Conv3dPass::kBackwardFilter:
      return "backward_filter";
  }
  return "unknown";
}

const char* conv3d_math_name(Conv3dMath math) {
  switch (math) {
    case Conv3dMath::kTf32:
      return "tf32";
    case Conv3dMath::kFp32:
      return "fp32";
    case Conv3dMath::kBf16:
      return "bf16";
  }
  return "unknown";
}

size_t conv3d_element_bytes(Conv3dMath math) { return math == Conv3dMath::kBf16 ? 2 : sizeof(float); }

CudnnHandle::CudnnHandle() { PERFLAB_CUDNN_CHECK(cudnnCreate(&handle_)); }
CudnnHandle::~CudnnHandle() {
  if (handle_ != nullptr) cudnnDestroy(handle_);
}

Status Conv3d::can_implement(const Conv3dArguments& a) {
  const cpu::Conv3dGeometry& g = a.geometry;
  try {
    cpu::conv3d_check_geometry(g);
  } catch (const std::invalid_argument& e) {
    return Status::invalid(e.what());
  }
  const int64_t hw = g.height * g.width;
  const bool data = a.pass == Conv3dPass::kBackwardData;
  if (g.batch > INT_MAX || g.c_in > INT_MAX || g.c_out > INT_MAX || hw > INT_MAX) {
    return Status::invalid("conv3d: a size exceeds cuDNN's int range");
  }
  const size_t element = conv3d_element_bytes(a.math);
  if (Status s = check_view(data ? "dx" : "x", x_side(a), g.batch, g.c_in, hw, element); !s) return s;
  if (Status s = check_view(a.pass == Conv3dPass::kForward ? "y" : "dy", y_side(a), g.batch, g.c_out, hw, element);
      !s) {
    return s;
  }
  // Staged calls hold Y + 2r x-side planes densely; d_offset only moves them.
  const int64_t block = g.batch * g.c_in * (y_side(a).planes + g.k - 1) * hw;
  if (block > INT_MAX) return Status::invalid("conv3d: the staging block exceeds cuDNN's int range");
  if (a.d_offset > INT_MAX || a.d_offset < -INT_MAX) {
    return Status::invalid(fmt::format("conv3d: d_offset = {} is out of range", a.d_offset));
  }
  for (const void* p : {a.w, static_cast<const void*>(a.dw)}) {
    if (reinterpret_cast<uintptr_t>(p) % element != 0) {
      return Status::invalid(fmt::format("conv3d: weights are not aligned to their {}-byte elements", element));
    }
  }
  return Status::success();
}

bool Conv3d::direct(const Conv3dArguments& a) {
  const int64_t r = a.geometry.k / 2, x = x_side(a).planes, y = y_side(a).planes;
  const int64_t pad = r - a.d_offset;
  return x >= 1 && y >= 1 && pad >= 0 && pad <= 2 * r && y == x - 2 * a.d_offset;
}

struct Conv3d::Plan {
  Status status = Status::success();
  cudnnHandle_t handle = nullptr;
  Conv3dArguments shape;
  bool trivial = false;  ///< X or Y is 0: no cuDNN call.
  bool staged = false;
  int64_t first = 0;         ///< Staged: the block holds x-side planes [first, first + block_planes).
  int64_t block_planes = 0;
  /// Staged data gradient: dy is gathered into a dense block at dy_offset
  /// too (cuDNN's backward-data pass takes no plane range of a larger
  /// buffer: on an H100 it refused every such dy the halo's overlap
  /// schedule gave it, while taking the whole padded buffer).
  size_t cudnn_bytes = 0, block_offset = 0, dy_offset = 0, total_bytes = 0;
  cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr;
  cudnnFilterDescriptor_t w_desc = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t forward_algo{};
  cudnnConvolutionBwdDataAlgo_t data_algo{};
  cudnnConvolutionBwdFilterAlgo_t filter_algo{};
  std::string tried;  ///< What cuDNN answered for each form built (for the no-algorithm message).
  /// kBackwardData as a forward convolution (Conv3dPlanOptions): its plan,
  /// its arguments' shape, and where the flipped weights and its workspace
  /// sit in ours.
  std::unique_ptr<Conv3d> via_forward;
  Conv3dArguments forward_shape;
  size_t forward_offset = 0;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() { destroy(); }

  void destroy() {
    if (conv != nullptr) cudnnDestroyConvolutionDescriptor(conv);
    if (w_desc != nullptr) cudnnDestroyFilterDescriptor(w_desc);
    if (y_desc != nullptr) cudnnDestroyTensorDescriptor(y_desc);
    if (x_desc != nullptr) cudnnDestroyTensorDescriptor(x_desc);
    conv = nullptr;
    w_desc = nullptr;
    x_desc = y_desc = nullptr;
  }

  /// kBackwardData as the forward convolution of dy with the flipped,
  /// transposed weights and -d_offset (dy the input, dx the output: the
  /// views as they are); false when that has no algorithm either.
  bool build_via_forward(const CudnnHandle& owner) {
    destroy();
    staged = false;
    Conv3dArguments f;
    f.pass = Conv3dPass::kForward;
    f.math = shape.math;
    f.geometry = shape.geometry;
    std::swap(f.geometry.c_in, f.geometry.c_out);
    f.d_offset = -shape.d_offset;
    f.x = shape.dy;
    f.y = shape.dx;
    via_forward = std::make_unique<Conv3d>(owner, f);
    if (!via_forward->status()) {
      tried += " [as a forward convolution (C_in and C_out swapped, d_offset negated): " +
               via_forward->status().reason() + "]";
      via_forward.reset();
      return false;
    }
    forward_shape = f;
    const cpu::Conv3dGeometry& g = shape.geometry;
    const auto weights = static_cast<size_t>(g.c_out * g.c_in * g.k * g.k * g.k) * conv3d_element_bytes(shape.math);
    forward_offset = round_up(weights, kConvWorkspaceAlignment);
    cudnn_bytes = 0;
    total_bytes = forward_offset + via_forward->workspace_bytes();
    return true;
  }

  /// Descriptors and algorithm for the direct (staged = false) or staged
  /// form; false when cuDNN has no algorithm for it.
  bool build(bool stage) {
    destroy();
    staged = stage;
    tried += stage ? " staged:" : " direct:";
    const cpu::Conv3dGeometry& g = shape.geometry;
    const int64_t r = g.k / 2, hw = g.height * g.width;
    const ConstDevicePlaneView xv = x_side(shape), yv = y_side(shape);
    first = shape.d_offset - r;
    block_planes = yv.planes + 2 * r;
    PERFLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc));
    PERFLAB_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc));
    PERFLAB_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc));
    PERFLAB_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    const int64_t x_planes = staged ? block_planes : xv.planes;
    const int64_t x_cs = staged ? block_planes * hw : xv.channel_stride;
    const int64_t x_bs = staged ? g.c_in * x_cs : xv.batch_stride;
    const std::array<int, 5> x_dims{to_int(g.batch), to_int(g.c_in), to_int(x_planes), to_int(g.height),
                                    to_int(g.width)};
    const std::array<int, 5> x_strides{to_int(x_bs), to_int(x_cs), to_int(hw), to_int(g.width), 1};
    const std::array<int, 5> y_dims{to_int(g.batch), to_int(g.c_out), to_int(yv.planes), to_int(g.height),
                                    to_int(g.width)};
    const bool dense_dy = staged && shape.pass == Conv3dPass::kBackwardData;
    const int64_t y_cs = dense_dy ? yv.planes * hw : yv.channel_stride;
    const int64_t y_bs = dense_dy ? g.c_out * y_cs : yv.batch_stride;
    const std::array<int, 5> y_strides{to_int(y_bs), to_int(y_cs), to_int(hw), to_int(g.width), 1};
    const std::array<int, 5> w_dims{to_int(g.c_out), to_int(g.c_in), g.k, g.k, g.k};
    const std::array<int, 3> pads{to_int(staged ? 0 : r - shape.d_offset), to_int(r), to_int(r)};
    const std::array<int, 3> ones{1, 1, 1};
    const cudnnDataType_t stored = storage_type(shape.math);
    PERFLAB_CUDNN_CHECK(cudnnSetTensorNdDescriptor(x_desc, stored, 5, x_dims.data(), x_strides.data()));
    PERFLAB_CUDNN_CHECK(cudnnSetTensorNdDescriptor(y_desc, stored, 5, y_dims.data(), y_strides.data()));
    PERFLAB_CUDNN_CHECK(cudnnSetFilterNdDescriptor(w_desc, stored, CUDNN_TENSOR_NCHW, 5, w_dims.data()));
    // The compute type is fp32 whatever is stored (for bf16: cuDNN's
    // PSEUDO_BFLOAT16 configuration, fp32 accumulation).
    PERFLAB_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(conv, 3, pads.data(), ones.data(), ones.data(),
                                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    const cudnnMathType_t asked = asked_math(shape.math);
    PERFLAB_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, asked));

    std::array<int, 5> out{};
    PERFLAB_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(conv, x_desc, w_desc, 5, out.data()));
    if (out != y_dims) {
      throw Error(fmt::format("conv3d: cuDNN's output has {} planes where {} were planned", out[2],
                                         y_dims[2]));
    }
    cudnnMathType_t math_type = asked;
    bool found = false;
    switch (shape.pass) {
      case Conv3dPass::kForward: {
        int count = 0, returned = 0;
        PERFLAB_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &count));
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(count));
        PERFLAB_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc, w_desc, conv, y_desc, count,
                                                                   &returned, perf.data()));
        found = choose_algorithm(
            perf, returned, count, shape.math,
            [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
              return cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc, w_desc, conv, y_desc, algo, bytes);
            },
            &forward_algo, &cudnn_bytes, &math_type, &tried);
        break;
      }
      case Conv3dPass::kBackwardData: {
        int count = 0, returned = 0;
        PERFLAB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &count));
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(count));
        PERFLAB_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, w_desc, y_desc, conv, x_desc, count,
                                                                        &returned, perf.data()));
        found = choose_algorithm(
            perf, returned, count, shape.math,
            [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
              return cudnnGetConvolutionBackwardDataWorkspaceSize(handle, w_desc, y_desc, conv, x_desc, algo, bytes);
            },
            &data_algo, &cudnn_bytes, &math_type, &tried);
        break;
      }
      case Conv3dPass::kBackwardFilter: {
        int count = 0, returned = 0;
        PERFLAB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &count));
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<size_t>(count));
        PERFLAB_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, x_desc, y_desc, conv, w_desc,
                                                                          count, &returned, perf.data()));
        found = choose_algorithm(
            perf, returned, count, shape.math,
            [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
              return cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, x_desc, y_desc, conv, w_desc, algo,
                                                                    bytes);
            },
            &filter_algo, &cudnn_bytes, &math_type, &tried);
        break;
      }
    }
    if (!found) return false;
    PERFLAB_CUDNN_CHECK(cudnnSetConvolutionMathType(conv, math_type));
    const auto block_bytes =
        static_cast<size_t>(g.batch * g.c_in * block_planes * hw) * conv3d_element_bytes(shape.math);
    block_offset = round_up(cudnn_bytes, kConvWorkspaceAlignment);
    total_bytes = staged ? block_offset + block_bytes : cudnn_bytes;
    if (dense_dy) {
      dy_offset = round_up(total_bytes, kConvWorkspaceAlignment);
      total_bytes = dy_offset + static_cast<size_t>(g.batch * g.c_out * yv.planes * hw) *
                                    conv3d_element_bytes(shape.math);
    }
    return true;
  }
};

Conv3d::Conv3d(const CudnnHandle& handle, const Conv3dArguments& shape, const Conv3dPlanOptions& options)
    : plan_(std::make_unique<Plan>()) {
  Plan& p = *plan_;
  p.handle = handle.get();
  p.shape = shape;
  p.shape.x.data = nullptr;
  p.shape.dx.data = nullptr;
  p.shape.y.data = nullptr;
  p.shape.dy.data = nullptr;
  p.shape.w = nullptr;
  p.shape.dw = nullptr;
  p.status = can_implement(p.shape);
  if (!p.status) return;
  p.trivial = x_side(shape).planes == 0 || y_side(shape).planes == 0;
  if (p.trivial) return;
  // The views as they are when cuDNN can take them; the staged block when it
  // cannot, or when it has no algorithm for those strides; the data
  // gradient as a forward convolution when neither has an algorithm (or
  // when asked to).
  const bool data = shape.pass == Conv3dPass::kBackwardData;
  // A data gradient whose cuDNN queries fail outright goes on to the
  // fallback too (what failed is kept for the message).
  const auto attempt = [&](bool stage) {
    if (!data) return p.build(stage);
    try {
      return p.build(stage);
    } catch (const CudaError& e) {
      p.tried += std::string(" [") + e.what() + "]";
      return false;
    }
  };
  if (!(data && options.backward_data_via_forward)) {
    if (direct(shape) && attempt(false)) return;
    if (attempt(true)) return;
  } else {
    p.tried += " [cuDNN's own backward-data pass not tried: Conv3dPlanOptions]";
  }
  if (data && p.build_via_forward(handle)) return;
  p.status = Status::invalid(fmt::format(
      "conv3d: cuDNN has no {} algorithm for N={} C_in={} C_out={} D {}->{} H={} W={} k={} ({})",
      conv3d_pass_name(shape.pass), shape.geometry.batch, shape.geometry.c_in, shape.geometry.c_out,
      x_side(shape).planes, y_side(shape).planes, shape.geometry.height, shape.geometry.width, shape.geometry.k,
      conv3d_math_name(shape.math)) + "; cuDNN " + std::to_string(cudnnGetVersion()) +
      " answered" + p.tried);
}

Conv3d::~Conv3d() = default;
Conv3d::Conv3d(Conv3d&&) noexcept = default;
Conv3d& Conv3d::operator=(Conv3d&&) noexcept = default;

const Status& Conv3d::status() const { return plan_->status; }
bool Conv3d::backward_data_via_forward() const { return plan_->via_forward != nullptr; }
std::string Conv3d::fallback_reason() const {
  if (plan_->via_forward == nullptr) return "";
  return "cuDNN " + std::to_string(cudnnGetVersion()) + " answered" + plan_->tried;
}
size_t Conv3d::workspace_bytes() const { return plan_->total_bytes; }
bool Conv3d::staged() const { return plan_->via_forward ? plan_->via_forward->staged() : plan_->staged; }

void Conv3d::run(const Conv3dArguments& a, void* workspace, cudaStream_t stream) const {
  const Plan& p = *plan_;
  if (!p.status) throw UsageError("Conv3d: cannot run: " + p.status.reason());
  if (!same_shape(a, p.shape)) throw UsageError("Conv3d: arguments' shape differs from the planned one");
  if (p.total_bytes > 0 &&
      (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % kConvWorkspaceAlignment != 0)) {
    throw UsageError("Conv3d: workspace is null or not 256-byte aligned");
  }
  auto require = [&](const void* pointer, bool needed, const char* name) {
    if (needed && pointer == nullptr) {
      throw UsageError(fmt::format("Conv3d {}: {} is null", conv3d_pass_name(a.pass), name));
    }
  };
  const cpu::Conv3dGeometry& g = a.geometry;
  const int64_t x_planes = x_side(a).planes, y_planes = y_side(a).planes;
  const bool bf16 = a.math == Conv3dMath::kBf16;
  const PlaneShape x_shape{g.batch, g.c_in, g.height * g.width, bf16};
  const PlaneShape y_shape{g.batch, g.c_out, g.height * g.width, bf16};
  void* block = p.staged ? static_cast<char*>(workspace) + p.block_offset : nullptr;
  void* cudnn_workspace = p.cudnn_bytes > 0 ? workspace : nullptr;
  const float one = 1.0f, zero = 0.0f;
  const float* beta = a.accumulate ? &one : &zero;
  if (!p.trivial) PERFLAB_CUDNN_CHECK(cudnnSetStream(p.handle, stream));

  switch (a.pass) {
    case Conv3dPass::kForward: {
      require(a.x.data, x_planes > 0, "x.data");
      require(a.w, true, "w");
      require(a.y.data, y_planes > 0, "y.data");
      if (p.trivial) {
        conv3d_detail::add_planes(nullptr, 0, 0, a.y, y_shape, a.accumulate, stream);  // y = acc ? y : 0
        return;
      }
      const void* x = a.x.data;
      if (p.staged) {
        conv3d_detail::gather_planes(a.x, x_shape, p.first, p.block_planes, block, stream);
        x = block;
      }
      PERFLAB_CUDNN_CHECK(cudnnConvolutionForward(p.handle, &one, p.x_desc, x, p.w_desc, a.w, p.conv,
                                                  p.forward_algo, cudnn_workspace, p.cudnn_bytes, beta, p.y_desc,
                                                  a.y.data));
      return;
    }
    case Conv3dPass::kBackwardData: {
      require(a.dy.data, y_planes > 0, "dy.data");
      require(a.w, true, "w");
      require(a.dx.data, x_planes > 0, "dx.data");
      if (p.trivial) {
        conv3d_detail::add_planes(nullptr, 0, 0, a.dx, x_shape, a.accumulate, stream);  // dx = acc ? dx : 0
        return;
      }
      if (p.via_forward) {
        void* flipped = workspace;
        conv3d_detail::flip_weights(a.w, flipped, g.c_in, g.c_out, g.k, bf16, stream);
        Conv3dArguments f = p.forward_shape;
        f.x = a.dy;
        f.y = a.dx;
        f.w = flipped;
        f.accumulate = a.accumulate;
        p.via_forward->run(f, static_cast<char*>(workspace) + p.forward_offset, stream);
        return;
      }
      if (!p.staged) {
        PERFLAB_CUDNN_CHECK(cudnnConvolutionBackwardData(p.handle, &one, p.w_desc, a.w, p.y_desc, a.dy.data, p.conv,
                                                         p.data_algo, cudnn_workspace, p.cudnn_bytes, beta,
                                                         p.x_desc, a.dx.data));
        return;
      }
      void* dy_block = static_cast<char*>(workspace) + p.dy_offset;
      conv3d_detail::gather_planes(a.dy, y_shape, 0, y_planes, dy_block, stream);
      PERFLAB_CUDNN_CHECK(cudnnConvolutionBackwardData(p.handle, &one, p.w_desc, a.w, p.y_desc, dy_block, p.conv,
                                                       p.data_algo, cudnn_workspace, p.cudnn_bytes, &zero,
                                                       p.x_desc, block));
      conv3d_detail::add_planes(block, p.first, p.block_planes, a.dx, x_shape, a.accumulate, stream);
      return;
    }
    case Conv3dPass::kBackwardFilter: {
      require(a.x.data, x_planes > 0, "x.data");
      require(a.dy.data, y_planes > 0, "dy.data");
      require(a.dw, true, "dw");
      if (p.trivial) {
        if (!a.accumulate) {
          const auto bytes =
              static_cast<size_t>(g.c_out * g.c_in * g.k * g.k * g.k) * conv3d_element_bytes(a.math);
          PERFLAB_CUDA_CHECK(cudaMemsetAsync(a.dw, 0, bytes, stream));
        }
        return;
      }
      const void* x = a.x.data;
      if (p.staged) {
        conv3d_detail::gather_planes(a.x, x_shape, p.first, p.block_planes, block, stream);
        x = block;
      }
      PERFLAB_CUDNN_CHECK(cudnnConvolutionBackwardFilter(p.handle, &one, p.x_desc, x, p.y_desc, a.dy.data, p.conv,
                                                         p.filter_algo, cudnn_workspace, p.cudnn_bytes, beta,
                                                         p.w_desc, a.dw));
      return;
    }
  }
}

}  // namespace perflab::kernels::cuda
