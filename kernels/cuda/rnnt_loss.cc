// Host side of the CUDA RNN-T loss: what it can run, the workspace it needs
// and the order of its launches (the kernels are in rnnt_*.cu). Nothing here
// touches device memory.
#include "kernels/cuda/rnnt_loss.h"

#include <cstdint>
#include <limits>
#include <string>

#include "base/round_up.h"
#include "kernels/cuda/rnnt_launch.h"

namespace perflab::kernels::cuda {
namespace {

using rnnt_detail::RnntProblem;
using rnnt_detail::RnntWorkspace;

constexpr size_t kAlign = 256;  // every workspace array starts on a 256-byte boundary

std::string shape_text(const cpu::RnntShape& s) {
  return "B=" + std::to_string(s.batch) + " T=" + std::to_string(s.max_time) +
         " U=" + std::to_string(s.max_labels) + " V=" + std::to_string(s.vocab);
}

bool misaligned(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes != 0;
}

/// Float counts of the workspace arrays, in carve order.
struct Sizes {
  int64_t log_probs = 0, lse = 0, lp_blank = 0, lp_label = 0, alpha = 0, beta = 0;
};

Sizes workspace_sizes(const RnntLossArguments& args, RnntLoss::Variant variant) {
  const int64_t rows = RnntLoss::rows(args);
  Sizes s;
  if (variant == RnntLoss::Variant::kUnfused) {
    s.log_probs = rows * args.shape.vocab;
  } else {
    s.lse = s.lp_blank = s.lp_label = rows;
  }
  s.alpha = s.beta = rows;
  return s;
}

RnntWorkspace carve(const Sizes& sizes, void* workspace) {
  char* next = static_cast<char*>(workspace);
  const auto take = [&](int64_t count) -> float* {
    if (count == 0) return nullptr;
    float* p = reinterpret_cast<float*>(next);
    next += round_up(static_cast<size_t>(count) * sizeof(float), kAlign);
    return p;
  };
  RnntWorkspace w;
  w.log_probs = take(sizes.log_probs);
  w.lse = take(sizes.lse);
  w.lp_blank = take(sizes.lp_blank);
  w.lp_label = take(sizes.lp_label);
  w.alpha = take(sizes.alpha);
  w.beta = take(sizes.beta);
  return w;
}

}  // namespace

size_t rnnt_dtype_bytes(RnntDType dtype) { return dtype == RnntDType::kFloat32 ? 4 : 2; }

const char* rnnt_dtype_name(RnntDType dtype) {
  switch (dtype) {
    case RnntDType::kFloat32:
      return "fp32";
    case RnntDType::kFloat16:
      return "fp16";
    case RnntDType::kBFloat16:
      return "bf16";
  }
  return "?";
}

const char* rnnt_variant_name(RnntLoss::Variant variant) {
  return variant == RnntLoss::Variant::kFused ? "fused" : "unfused";
}

int64_t RnntLoss::rows(const RnntLossArguments& args) {
  return args.layout == TransducerLayout::kPacked ? args.packed_rows
                                                  : cpu::rnnt_padded_rows(args.shape);
}

Status RnntLoss::can_implement(const RnntLossArguments& args, Variant variant) {
  const cpu::RnntShape& s = args.shape;
  const std::string where = "rnnt_loss (" + shape_text(s) + "): ";
  if (s.batch < 0 || s.max_time < 0 || s.max_labels < 0 || s.vocab < 1) {
    return Status::invalid(where + "invalid shape: B, T, U must be >= 0 and vocab >= 1");
  }
  if (s.batch > 0 && s.max_time < 1) {
    return Status::invalid(where + "max_time must be >= 1: every sequence needs a frame");
  }
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (s.vocab > kIntMax || s.max_labels >= kIntMax || s.max_time > kIntMax) {
    return Status::invalid(where + "T, U and V must fit in int32 (labels are int32)");
  }
  if (s.batch > kIntMax || s.batch * s.max_time > kIntMax) {
    return Status::invalid(where + "B*T must be at most 2^31-1 (one block per frame)");
  }
  // rows * V elements must be addressable with int64 byte offsets.
  if (s.max_time > 0 && s.batch * s.max_time > (int64_t{1} << 62) / (s.max_labels + 1) / s.vocab / 4) {
    return Status::invalid(where + "problem too large to address");
  }
  const int64_t blank = cpu::rnnt_blank(s, args.options);
  if (blank < 0 || blank >= s.vocab) {
    return Status::invalid(where + "blank index " + std::to_string(args.options.blank) +
                           " is outside [0, " + std::to_string(s.vocab) + ")");
  }
  const auto reduction = args.options.reduction;
  if (reduction != cpu::RnntReduction::kNone && reduction != cpu::RnntReduction::kSum &&
      reduction != cpu::RnntReduction::kMean) {
    return Status::invalid(where + "unknown reduction");
  }
  if (args.dtype != RnntDType::kFloat32 && args.dtype != RnntDType::kFloat16 &&
      args.dtype != RnntDType::kBFloat16) {
    return Status::invalid(where + "unknown logits dtype");
  }
  if (variant != Variant::kUnfused && variant != Variant::kFused) {
    return Status::invalid(where + "unknown variant");
  }
  if (Status layout = check_layout(where, args.layout, args.packed_offsets, args.packed_rows, cpu::rnnt_padded_rows(s));
      !layout.ok()) {
    return layout;
  }
  if (s.batch == 0) return Status::success();
  const size_t element = rnnt_dtype_bytes(args.dtype);
  if (rows(args) > 0 && args.logits == nullptr) return Status::invalid(where + "logits is null");
  if (misaligned(args.logits, element) || misaligned(args.grad, element)) {
    return Status::invalid(where + "logits and grad must be aligned to their element size");
  }
  if (s.max_labels > 0 && args.labels == nullptr) return Status::invalid(where + "labels is null");
  if (args.logit_lengths == nullptr || args.label_lengths == nullptr) {
    return Status::invalid(where + "logit_lengths and label_lengths are required");
  }
  if (args.costs == nullptr) return Status::invalid(where + "costs is null (B floats)");
  if (args.grad != nullptr && args.grad == args.logits) {
    return Status::invalid(where + "grad must not alias logits");
  }
  return Status::success();
}

size_t RnntLoss::workspace_bytes(const RnntLossArguments& args, Variant variant) {
  if (!can_implement(args, variant)) return 0;
  const Sizes s = workspace_sizes(args, variant);
  size_t total = 0;
  for (int64_t count : {s.log_probs, s.lse, s.lp_blank, s.lp_label, s.alpha, s.beta}) {
    total += round_up(static_cast<size_t>(count) * sizeof(float), kAlign);
  }
  return total;
}

LaunchList RnntLoss::launches(const RnntLossArguments& args, Variant variant) {
  if (!can_implement(args, variant)) return {};
  if (args.shape.batch == 0) {  // run() only reduces the (empty) costs into the loss
    if (args.loss == nullptr) return {};
    return {{"reduce_loss_kernel", "reduce the costs", "", {0, 0, ""}}};
  }
  const double rows = static_cast<double>(RnntLoss::rows(args));
  const double v = static_cast<double>(args.shape.vocab);
  const double e = static_cast<double>(rnnt_dtype_bytes(args.dtype));
  const double b = static_cast<double>(args.shape.batch);
  const bool with_grad = args.grad != nullptr;
  const bool fused = variant == Variant::kFused;
  constexpr double f = sizeof(float);
  const double recursions = rows * 2 * f + rows * (with_grad ? 2 : 1) * f + b * f;  // log-probs in, alpha (beta) out
  LaunchList list;
  if (fused) {
    list.push_back({"row_stats_kernel", "log-sum-exp and the blank and label log-probabilities per row", "",
                    {rows * v * e + rows * 3 * f, 0, ""}});
  } else {
    list.push_back({"log_softmax_kernel", "log-softmax of every row", "", {rows * v * e + rows * v * f, 0, ""}});
  }
  list.push_back({"alpha_beta_kernel", with_grad ? "alpha and beta recursions" : "alpha recursion", "",
                  {recursions, 0, ""}});
  if (with_grad) {
    const double in = fused ? rows * v * e + rows * f : rows * v * f;  // logits and lse, or the log-probabilities
    list.push_back({"gradient_kernel", fused ? "gradient, softmax recomputed (one pass)" : "gradient from the log-probabilities",
                    "", {in + rows * 4 * f + rows * v * e, 0, ""}});
  } else if (args.loss != nullptr) {
    list.push_back({"reduce_loss_kernel", "reduce the costs", "", {b * f, 0, ""}});
  }
  return list;
}

Status RnntLoss::run(const RnntLossArguments& args, Variant variant, void* workspace,
                     cudaStream_t stream) const {
  Status status = can_implement(args, variant);
  if (!status) return status;
  if (workspace == nullptr && workspace_bytes(args, variant) > 0) {
    return Status::invalid("rnnt_loss: workspace is null; allocate workspace_bytes() at setup");
  }
  RnntProblem p;
  p.batch = args.shape.batch;
  p.max_time = args.shape.max_time;
  p.max_labels = args.shape.max_labels;
  p.vocab = args.shape.vocab;
  p.blank = cpu::rnnt_blank(args.shape, args.options);
  p.rows = rows(args);
  p.packed = args.layout == TransducerLayout::kPacked;
  p.mean = args.options.reduction == cpu::RnntReduction::kMean;
  p.grad_scale = p.mean && p.batch > 0 ? 1.0f / static_cast<float>(p.batch) : 1.0f;
  p.dtype = args.dtype;
  p.logits = args.logits;
  p.labels = args.labels;
  p.logit_lengths = args.logit_lengths;
  p.label_lengths = args.label_lengths;
  p.offsets = p.packed ? args.packed_offsets : nullptr;
  p.costs = args.costs;
  p.grad = args.grad;
  p.loss = args.loss;
  const RnntWorkspace w = carve(workspace_sizes(args, variant), workspace);
  const bool fused = variant == Variant::kFused;
  // Rows four elements at a time when every row starts aligned to four.
  const size_t four = 4 * rnnt_dtype_bytes(p.dtype);
  const auto aligned = [](const void* q, size_t a) { return reinterpret_cast<uintptr_t>(q) % a == 0; };
  p.vector4 = p.vocab % 4 == 0 && aligned(p.logits, four) && (p.grad == nullptr || aligned(p.grad, four)) &&
              (fused || aligned(w.log_probs, 4 * sizeof(float)));
  const bool with_grad = p.grad != nullptr;

  if (fused) {
    rnnt_detail::launch_row_stats(p, w, stream);
  } else {
    rnnt_detail::launch_log_softmax(p, w, stream);
  }
  rnnt_detail::launch_alpha_beta(p, w, fused, with_grad, stream);
  if (with_grad && p.batch > 0) {  // the gradient kernel's block 0 reduces the loss
    if (fused) {
      rnnt_detail::launch_fused_gradient(p, w, stream);
    } else {
      rnnt_detail::launch_unfused_gradient(p, w, stream);
    }
  } else {
    rnnt_detail::launch_reduce_loss(p, stream);
  }
  return Status::success();
}

}  // namespace perflab::kernels::cuda
