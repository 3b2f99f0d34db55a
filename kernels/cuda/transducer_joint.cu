// RNN-T joint on a CUDA device; see transducer_joint.h. Kernels:
//   forward_kernel  one block per frame (b, t): rows (b, t, u) of h, elements
//                   strided over the block (row-major, so stores coalesce)
//   pack_kernel     one block per frame: copies the valid rows of a padded h
//                   into the packed layout (unfused packed forward only)
//   df_kernel       one block per frame (b, t): threads over H, sum over u
//   dg_kernel       one block per label position (b, u): threads over H, sum over t
#include "kernels/cuda/transducer_joint.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/cuda/check.h"

namespace perflab::kernels::cuda {
namespace {

constexpr int kThreads = 256;

/// Resolved problem, passed by value to the kernels.
struct JointProblem {
  int64_t batch = 0, max_time = 0, max_labels = 0, hidden = 0;
  bool relu = false;
  const int32_t* frames = nullptr;
  const int32_t* label_lengths = nullptr;
  const int64_t* offsets = nullptr;  ///< nullptr: padded rows.
  int64_t packed_rows = 0;
};

/// Sequence b: lengths, validity and where its rows are in `offsets`'
/// layout (padded when offsets is nullptr).
struct Sequence {
  bool valid = false;
  int64_t frames = 0, labels = 0, base = 0, stride = 0;
};

__device__ Sequence load_sequence(const JointProblem& p, const int64_t* offsets, int64_t b) {
  Sequence s;
  s.frames = p.frames[b];
  s.labels = p.label_lengths[b];
  s.valid = s.frames >= 0 && s.frames <= p.max_time && s.labels >= 0 && s.labels <= p.max_labels;
  if (offsets != nullptr) {
    s.base = offsets[b];
    s.stride = s.labels + 1;
    const int64_t end = offsets[b + 1];
    s.valid = s.valid && s.base >= 0 && end <= p.packed_rows && end - s.base == s.frames * s.stride;
  } else {
    s.base = b * p.max_time * (p.max_labels + 1);
    s.stride = p.max_labels + 1;
  }
  return s;
}

/// Element loads and stores: fp32 in registers, dtype in memory (stores
/// round to nearest even).
__device__ __forceinline__ float load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void store(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }

/// std::max(x, 0) exactly as the CPU reference computes it.
__device__ __forceinline__ float activate(bool relu, float x) { return relu && x < 0.0f ? 0.0f : x; }

/// Rows (b, t, 0..) of h for the block's frame, in the layout of `offsets`.
template <typename T>
__global__ void forward_kernel(JointProblem p, const int64_t* offsets, const T* f, const T* g, T* h) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) / p.max_time;
  const int64_t t = static_cast<int64_t>(blockIdx.x) % p.max_time;
  const Sequence s = load_sequence(p, offsets, b);
  const bool packed = offsets != nullptr;
  if (packed && (!s.valid || t >= s.frames)) return;
  const int64_t hidden = p.hidden;
  const int64_t positions = packed ? s.labels + 1 : p.max_labels + 1;
  const T* f_row = f + (b * p.max_time + t) * hidden;
  const T* g_rows = g + b * (p.max_labels + 1) * hidden;
  T* out = h + (s.base + t * s.stride) * hidden;  // rows of one frame are contiguous
  for (int64_t i = threadIdx.x; i < positions * hidden; i += blockDim.x) {
    const int64_t u = i / hidden;
    const int64_t k = i - u * hidden;
    if (!s.valid) {
      store(out, i, NAN);
    } else if (t >= s.frames || u > s.labels) {
      store(out, i, 0.0f);
    } else {
      store(out, i, activate(p.relu, load(f_row, k) + load(g_rows, u * hidden + k)));
    }
  }
}

/// Valid rows of frame (b, t) from padded `from` into packed `to`.
template <typename T>
__global__ void pack_kernel(JointProblem p, const T* from, T* to) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) / p.max_time;
  const int64_t t = static_cast<int64_t>(blockIdx.x) % p.max_time;
  const Sequence s = load_sequence(p, p.offsets, b);
  if (!s.valid || t >= s.frames) return;
  const int64_t count = (s.labels + 1) * p.hidden;
  const T* src = from + (b * p.max_time + t) * (p.max_labels + 1) * p.hidden;
  T* dst = to + (s.base + t * s.stride) * p.hidden;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) dst[i] = src[i];
}

template <typename T>
__device__ __forceinline__ float masked(bool relu, const T* h, const T* dh, int64_t i) {
  return relu ? (load(h, i) > 0.0f ? load(dh, i) : 0.0f) : load(dh, i);
}

/// df[b, t, :] = Σ_u dh'[row(b, t, u), :], u ascending.
template <typename T>
__global__ void df_kernel(JointProblem p, const T* h, const T* dh, float* df) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) / p.max_time;
  const int64_t t = static_cast<int64_t>(blockIdx.x) % p.max_time;
  const Sequence s = load_sequence(p, p.offsets, b);
  float* out = df + (b * p.max_time + t) * p.hidden;
  for (int64_t k = threadIdx.x; k < p.hidden; k += blockDim.x) {
    float sum = s.valid ? 0.0f : NAN;
    if (s.valid && t < s.frames) {
      for (int64_t u = 0; u <= s.labels; ++u) {
        sum += masked(p.relu, h, dh, (s.base + t * s.stride + u) * p.hidden + k);
      }
    }
    out[k] = sum;
  }
}

/// dg[b, u, :] = Σ_t dh'[row(b, t, u), :], t ascending.
template <typename T>
__global__ void dg_kernel(JointProblem p, const T* h, const T* dh, float* dg) {
  const int64_t positions = p.max_labels + 1;
  const int64_t b = static_cast<int64_t>(blockIdx.x) / positions;
  const int64_t u = static_cast<int64_t>(blockIdx.x) % positions;
  const Sequence s = load_sequence(p, p.offsets, b);
  float* out = dg + (b * positions + u) * p.hidden;
  for (int64_t k = threadIdx.x; k < p.hidden; k += blockDim.x) {
    float sum = s.valid ? 0.0f : NAN;
    if (s.valid && u <= s.labels) {
      for (int64_t t = 0; t < s.frames; ++t) {
        sum += masked(p.relu, h, dh, (s.base + t * s.stride + u) * p.hidden + k);
      }
    }
    out[k] = sum;
  }
}

std::string shape_text(const cpu::JointShape& s) {
  return "B=" + std::to_string(s.batch) + " T=" + std::to_string(s.max_time) +
         " U=" + std::to_string(s.max_labels) + " H=" + std::to_string(s.hidden);
}

int64_t padded_elements(const cpu::JointShape& s) {
  return s.batch * s.max_time * (s.max_labels + 1) * s.hidden;
}

/// The passes on elements of type T (see run()).
template <typename T>
void launch(const TransducerJointArguments& args, TransducerJoint::Variant variant, JointPass pass,
            const JointProblem& p, void* workspace, cudaStream_t stream) {
  const cpu::JointShape& s = args.shape;
  const auto frame_blocks = static_cast<unsigned>(s.batch * s.max_time);
  const auto label_blocks = static_cast<unsigned>(s.batch * (s.max_labels + 1));
  const T* f = static_cast<const T*>(args.f);
  const T* g = static_cast<const T*>(args.g);
  T* h = static_cast<T*>(args.h);
  const T* dh = static_cast<const T*>(args.dh);
  if (pass == JointPass::kForward) {
    if (frame_blocks == 0) return;
    if (p.offsets != nullptr && variant == TransducerJoint::Variant::kUnfused) {
      T* padded = static_cast<T*>(workspace);
      forward_kernel<T><<<frame_blocks, kThreads, 0, stream>>>(p, nullptr, f, g, padded);
      PERFLAB_CUDA_CHECK_LAUNCH("transducer_joint forward_kernel");
      pack_kernel<T><<<frame_blocks, kThreads, 0, stream>>>(p, padded, h);
      PERFLAB_CUDA_CHECK_LAUNCH("transducer_joint pack_kernel");
    } else {
      forward_kernel<T><<<frame_blocks, kThreads, 0, stream>>>(p, p.offsets, f, g, h);
      PERFLAB_CUDA_CHECK_LAUNCH("transducer_joint forward_kernel");
    }
    return;
  }
  if (frame_blocks > 0) {
    df_kernel<T><<<frame_blocks, kThreads, 0, stream>>>(p, h, dh, args.df);
    PERFLAB_CUDA_CHECK_LAUNCH("transducer_joint df_kernel");
  }
  dg_kernel<T><<<label_blocks, kThreads, 0, stream>>>(p, h, dh, args.dg);
  PERFLAB_CUDA_CHECK_LAUNCH("transducer_joint dg_kernel");
}

}  // namespace

Status TransducerJoint::can_implement(const TransducerJointArguments& args, Variant variant,
                                      JointPass pass) {
  const cpu::JointShape& s = args.shape;
  const std::string where = "transducer_joint (" + shape_text(s) + "): ";
  if (s.batch < 0 || s.max_time < 0 || s.max_labels < 0 || s.hidden < 0) {
    return Status::invalid(where + "invalid shape: B, T, U, H must be >= 0");
  }
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (s.max_time > kIntMax || s.max_labels >= kIntMax || s.hidden > kIntMax ||
      s.batch * s.max_time > kIntMax || s.batch * (s.max_labels + 1) > kIntMax) {
    return Status::invalid(where + "B*T and B*(U+1) must be at most 2^31-1 (one block each)");
  }
  if (s.hidden > 0 && s.batch * s.max_time > (int64_t{1} << 60) / (s.max_labels + 1) / s.hidden) {
    return Status::invalid(where + "problem too large to address");
  }
  if (args.activation != cpu::JointActivation::kIdentity &&
      args.activation != cpu::JointActivation::kRelu) {
    return Status::invalid(where + "unknown activation");
  }
  if (args.dtype != RnntDType::kFloat32 && args.dtype != RnntDType::kBFloat16 && args.dtype != RnntDType::kFloat16) {
    return Status::invalid(where + "unknown dtype");
  }
  if (variant != Variant::kUnfused && variant != Variant::kFused) {
    return Status::invalid(where + "unknown variant");
  }
  if (pass != JointPass::kForward && pass != JointPass::kBackward) {
    return Status::invalid(where + "unknown pass");
  }
  if (Status layout = check_layout(where, args.layout, args.packed_offsets, args.packed_rows,
                                   s.batch * s.max_time * (s.max_labels + 1));
      !layout.ok()) {
    return layout;
  }
  if (s.batch == 0 || s.hidden == 0) return Status::success();
  if (args.frames == nullptr || args.label_lengths == nullptr) {
    return Status::invalid(where + "frames and label_lengths are required");
  }
  if (pass == JointPass::kForward) {
    if (args.f == nullptr || args.g == nullptr || args.h == nullptr) {
      return Status::invalid(where + "forward needs f, g and h");
    }
    if (static_cast<const void*>(args.h) == args.f || static_cast<const void*>(args.h) == args.g) {
      return Status::invalid(where + "h must not alias f or g");
    }
  } else {
    if (args.dh == nullptr || args.df == nullptr || args.dg == nullptr) {
      return Status::invalid(where + "backward needs dh, df and dg");
    }
    if (args.activation == cpu::JointActivation::kRelu && args.h == nullptr) {
      return Status::invalid(where + "backward through ReLU needs the forward output h");
    }
    if (args.df == args.dg || static_cast<const void*>(args.df) == args.dh ||
        static_cast<const void*>(args.dg) == args.dh) {
      return Status::invalid(where + "df and dg must not alias each other or dh");
    }
  }
  return Status::success();
}

size_t TransducerJoint::workspace_bytes(const TransducerJointArguments& args, Variant variant,
                                        JointPass pass) {
  if (!can_implement(args, variant, pass)) return 0;
  const bool unfused_pack = variant == Variant::kUnfused && pass == JointPass::kForward &&
                            args.layout == TransducerLayout::kPacked;
  return unfused_pack ? static_cast<size_t>(padded_elements(args.shape)) * rnnt_dtype_bytes(args.dtype) : 0;
}

Status TransducerJoint::run(const TransducerJointArguments& args, Variant variant, JointPass pass,
                            void* workspace, cudaStream_t stream) const {
  Status status = can_implement(args, variant, pass);
  if (!status) return status;
  if (workspace == nullptr && workspace_bytes(args, variant, pass) > 0) {
    return Status::invalid("transducer_joint: workspace is null; allocate workspace_bytes() at setup");
  }
  const cpu::JointShape& s = args.shape;
  if (s.batch == 0 || s.hidden == 0) return Status::success();
  JointProblem p;
  p.batch = s.batch;
  p.max_time = s.max_time;
  p.max_labels = s.max_labels;
  p.hidden = s.hidden;
  p.relu = args.activation == cpu::JointActivation::kRelu;
  p.frames = args.frames;
  p.label_lengths = args.label_lengths;
  const bool packed = args.layout == TransducerLayout::kPacked;
  p.offsets = packed ? args.packed_offsets : nullptr;
  p.packed_rows = args.packed_rows;
  switch (args.dtype) {
    case RnntDType::kFloat32:
      launch<float>(args, variant, pass, p, workspace, stream);
      break;
    case RnntDType::kBFloat16:
      launch<__nv_bfloat16>(args, variant, pass, p, workspace, stream);
      break;
    case RnntDType::kFloat16:
      launch<__half>(args, variant, pass, p, workspace, stream);
      break;
  }
  return Status::success();
}

LaunchList TransducerJoint::launches(const TransducerJointArguments& args, Variant variant, JointPass pass) {
  const cpu::JointShape& s = args.shape;
  if (s.batch == 0 || s.hidden == 0) return {};
  // Activations in dtype; df and dg fp32 (the backward's frames/labels
  // terms count the fp32 write, the forward's the dtype read).
  const double e = static_cast<double>(rnnt_dtype_bytes(args.dtype));
  constexpr double f = sizeof(float);
  const double h = static_cast<double>(s.hidden);
  const double frames_in = static_cast<double>(s.batch * s.max_time) * h * e;
  const double labels_in = static_cast<double>(s.batch * (s.max_labels + 1)) * h * e;
  const double frames = static_cast<double>(s.batch * s.max_time) * h * f;
  const double labels = static_cast<double>(s.batch * (s.max_labels + 1)) * h * f;
  const double padded = static_cast<double>(s.batch * s.max_time * (s.max_labels + 1)) * h * e;
  const bool packed = args.layout == TransducerLayout::kPacked;
  const double rows = packed ? static_cast<double>(args.packed_rows) * h * e : padded;
  const bool frames_exist = s.batch * s.max_time > 0;  // run() skips the frame kernels otherwise
  if (!frames_exist) {
    if (pass == JointPass::kForward) return {};
    return {{"dg_kernel", "joint backward: dg", "", {labels, 0, ""}}};
  }
  if (pass == JointPass::kForward) {
    if (packed && variant == Variant::kUnfused) {
      return {{"forward_kernel", "joint forward into the padded layout", "", {frames_in + labels_in + padded, 0, ""}},
              {"pack_kernel", "pack the padded rows", "", {2 * rows, 0, ""}}};
    }
    return {{"forward_kernel", "joint forward", "", {frames_in + labels_in + rows, 0, ""}}};
  }
  const double relu = args.activation == cpu::JointActivation::kRelu ? rows : 0;
  return {{"df_kernel", "joint backward: df", "", {rows + relu + frames, 0, ""}},
          {"dg_kernel", "joint backward: dg", "", {rows + relu + labels, 0, ""}}};
}

}  // namespace perflab::kernels::cuda
