// RNN-T loss on the CPU. Three passes over the batch: log-softmax
// denominators per logit row (parallel over rows), the alpha/beta recursions
// (parallel over sequences, each serial), and the gradient (parallel over
// rows). The workspace holds, per row: the log-softmax denominator, alpha and
// beta. See rnnt_loss.h for the formulas.
#include "kernels/cpu/rnnt_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "base/error.h"

namespace perflab::kernels::cpu {
namespace {

template <typename Acc>
constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();

/// log(exp(a) + exp(b)), exact when either is -inf.
template <typename Acc>
inline Acc log_add(Acc a, Acc b) {
  if (a < b) std::swap(a, b);
  if (b == kNegInf<Acc>) return a;
  return a + std::log1p(std::exp(b - a));
}

/// Where the rows of sequence b start and how far apart its frames are.
struct Layout {
  const int64_t* offsets = nullptr;  ///< Packed row offsets; nullptr for the padded layout.
  int64_t max_time = 0;              ///< T (padded layout).
  int64_t positions = 0;             ///< U+1 (padded layout).

  int64_t base(int64_t b) const { return offsets ? offsets[b] : b * max_time * positions; }
  int64_t stride(int64_t labels_b) const { return offsets ? labels_b + 1 : positions; }
};

std::string loss_sequence_prefix(int64_t b) { return "rnnt_loss: sequence " + std::to_string(b) + ": "; }

template <typename Scalar, typename Acc>
Acc log_sum_exp(const Scalar* z, int64_t n) {
  Acc peak = static_cast<Acc>(z[0]);
  for (int64_t v = 1; v < n; ++v) peak = std::max(peak, static_cast<Acc>(z[v]));
  Acc sum = 0;
  for (int64_t v = 0; v < n; ++v) sum += std::exp(static_cast<Acc>(z[v]) - peak);
  return peak + std::log(sum);
}

/// Alpha (and beta when `with_beta`) of sequence b; returns log P(y|x).
template <typename Scalar, typename Acc>
Acc recurse(const Scalar* logits, const int32_t* y, int64_t vocab, int64_t blank, int64_t frames,
            int64_t labels_b, int64_t base, int64_t stride, const Acc* denom, Acc* alpha, Acc* beta,
            bool with_beta) {
  const auto lp = [&](int64_t r, int64_t k) {
    return static_cast<Acc>(logits[r * vocab + k]) - denom[r];
  };
  for (int64_t t = 0; t < frames; ++t) {
    for (int64_t u = 0; u <= labels_b; ++u) {
      const int64_t r = base + t * stride + u;
      Acc a = t == 0 && u == 0 ? Acc(0) : kNegInf<Acc>;
      if (t > 0) a = alpha[r - stride] + lp(r - stride, blank);
      if (u > 0) a = log_add(a, alpha[r - 1] + lp(r - 1, y[u - 1]));
      alpha[r] = a;
    }
  }
  const int64_t last = base + (frames - 1) * stride + labels_b;
  const Acc log_p = alpha[last] + lp(last, blank);
  if (!with_beta) return log_p;
  for (int64_t t = frames - 1; t >= 0; --t) {
    for (int64_t u = labels_b; u >= 0; --u) {
      const int64_t r = base + t * stride + u;
      if (r == last) {
        beta[r] = lp(r, blank);
        continue;
      }
      Acc b = kNegInf<Acc>;
      if (t + 1 < frames) b = beta[r + stride] + lp(r, blank);
      if (u < labels_b) b = log_add(b, beta[r + 1] + lp(r, y[u]));
      beta[r] = b;
    }
  }
  return log_p;
}

/// Gradient row of node (t, u) of a sequence; see rnnt_loss.h.
template <typename Scalar, typename Acc>
void gradient_row(const Scalar* z, Scalar* g, int64_t vocab, int64_t blank, int64_t label,
                  Acc denom, Acc alpha, Acc beta, Acc next_blank, Acc next_label, Acc cost,
                  Acc scale) {
  const Acc log_gamma = alpha + beta + cost - denom;
  for (int64_t v = 0; v < vocab; ++v) {
    g[v] = static_cast<Scalar>(scale * std::exp(static_cast<Acc>(z[v]) + log_gamma));
  }
  // The transition terms are subtracted in Acc, before rounding to Scalar.
  const auto subtract = [&](int64_t k, Acc next) {
    if (next == kNegInf<Acc>) return;
    const Acc zk = static_cast<Acc>(z[k]);
    const Acc occupied = std::exp(zk + log_gamma);
    const Acc moved = std::exp(alpha + zk - denom + next + cost);
    g[k] = static_cast<Scalar>(scale * (occupied - moved));
  };
  subtract(blank, next_blank);
  if (label >= 0) subtract(label, next_label);
}

template <typename Scalar, typename Acc>
double loss_impl(const RnntShape& shape, const RnntOptions& options, const Scalar* logits,
                 const int32_t* labels, const int32_t* logit_lengths, const int32_t* label_lengths,
                 const Layout& layout, int64_t rows, double* costs, Scalar* grad, Acc* workspace) {
  rnnt_validate(shape, options, labels, logit_lengths, label_lengths);
  const int64_t batch = shape.batch;
  const int64_t max_time = shape.max_time;
  const int64_t vocab = shape.vocab;
  const int64_t blank = rnnt_blank(shape, options);
  const bool padded = layout.offsets == nullptr;
  Acc* denom = workspace;
  Acc* alpha = workspace + rows;
  Acc* beta = workspace + 2 * rows;

#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < max_time; ++t) {
      if (t >= logit_lengths[b]) continue;
      const int64_t labels_b = label_lengths[b];
      const int64_t first = layout.base(b) + t * layout.stride(labels_b);
      for (int64_t r = first; r <= first + labels_b; ++r) {
        denom[r] = log_sum_exp<Scalar, Acc>(logits + r * vocab, vocab);
      }
    }
  }

#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t labels_b = label_lengths[b];
    const Acc log_p = recurse<Scalar, Acc>(
        logits, labels + b * shape.max_labels, vocab, blank, logit_lengths[b], labels_b,
        layout.base(b), layout.stride(labels_b), denom, alpha, beta, grad != nullptr);
    costs[b] = -static_cast<double>(log_p);
  }

  if (grad != nullptr) {
    const Acc scale = options.reduction == RnntReduction::kMean && batch > 0
                          ? Acc(1) / static_cast<Acc>(batch)
                          : Acc(1);
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t t = 0; t < max_time; ++t) {
        const int64_t frames = logit_lengths[b];
        const int64_t labels_b = label_lengths[b];
        const int64_t stride = layout.stride(labels_b);
        const int64_t first = layout.base(b) + t * stride;
        if (padded) {  // zero the padding rows of this frame
          const int64_t valid = t < frames ? labels_b + 1 : 0;
          std::fill(grad + (first + valid) * vocab, grad + (first + stride) * vocab, Scalar(0));
        }
        if (t >= frames) continue;
        const int32_t* y = labels + b * shape.max_labels;
        const Acc cost = static_cast<Acc>(costs[b]);
        for (int64_t u = 0; u <= labels_b; ++u) {
          const int64_t r = first + u;
          Acc next_blank = kNegInf<Acc>;
          if (t + 1 < frames) {
            next_blank = beta[r + stride];
          } else if (u == labels_b) {
            next_blank = 0;  // the final blank ends the path
          }
          const bool has_label = u < labels_b;
          gradient_row<Scalar, Acc>(logits + r * vocab, grad + r * vocab, vocab, blank,
                                    has_label ? y[u] : -1, denom[r], alpha[r], beta[r], next_blank,
                                    has_label ? beta[r + 1] : kNegInf<Acc>, cost, scale);
        }
      }
    }
  }

  double total = 0;
  for (int64_t b = 0; b < batch; ++b) total += costs[b];
  if (options.reduction == RnntReduction::kMean)
    return batch > 0 ? total / static_cast<double>(batch) : 0.0;
  return total;
}

}  // namespace

int64_t rnnt_blank(const RnntShape& shape, const RnntOptions& options) {
  return options.blank == -1 ? shape.vocab - 1 : options.blank;
}

int64_t rnnt_packed_offsets(int64_t batch, const int32_t* logit_lengths,
                            const int32_t* label_lengths, int64_t* offsets) {
  int64_t total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    if (logit_lengths[b] < 0 || label_lengths[b] < 0) {
      throw UsageError(loss_sequence_prefix(b) + "negative length (logit length " +
                       std::to_string(logit_lengths[b]) + ", label length " +
                       std::to_string(label_lengths[b]) + ")");
    }
    offsets[b] = total;
    total += static_cast<int64_t>(logit_lengths[b]) * (static_cast<int64_t>(label_lengths[b]) + 1);
  }
  offsets[batch] = total;
  return total;
}

int64_t rnnt_padded_rows(const RnntShape& shape) {
  return shape.batch * shape.max_time * (shape.max_labels + 1);
}

int64_t rnnt_workspace_elements(int64_t rows) { return 3 * rows; }

void rnnt_validate(const RnntShape& shape, const RnntOptions& options, const int32_t* labels,
                   const int32_t* logit_lengths, const int32_t* label_lengths) {
  if (shape.batch < 0 || shape.max_time < 0 || shape.max_labels < 0 || shape.vocab < 1) {
    throw UsageError("rnnt_loss: invalid shape B=" + std::to_string(shape.batch) + " T=" +
                     std::to_string(shape.max_time) + " U=" + std::to_string(shape.max_labels) +
                     " V=" + std::to_string(shape.vocab));
  }
  const int64_t blank = rnnt_blank(shape, options);
  if (blank < 0 || blank >= shape.vocab) {
    throw UsageError("rnnt_loss: blank index " + std::to_string(options.blank) +
                     " is outside [0, " + std::to_string(shape.vocab) + ")");
  }
  for (int64_t b = 0; b < shape.batch; ++b) {
    const int64_t frames = logit_lengths[b];
    const int64_t labels_b = label_lengths[b];
    if (frames < 1 || frames > shape.max_time) {
      throw UsageError(loss_sequence_prefix(b) + "logit length " + std::to_string(frames) +
                       " is outside [1, " + std::to_string(shape.max_time) + "]");
    }
    if (labels_b < 0 || labels_b > shape.max_labels) {
      throw UsageError(loss_sequence_prefix(b) + "label length " + std::to_string(labels_b) +
                       " is outside [0, " + std::to_string(shape.max_labels) + "]");
    }
    for (int64_t u = 0; u < labels_b; ++u) {
      const int64_t y = labels[b * shape.max_labels + u];
      if (y < 0 || y >= shape.vocab || y == blank) {
        throw UsageError(loss_sequence_prefix(b) + "label " + std::to_string(u) + " is " +
                         std::to_string(y) + ", not a symbol in [0, " +
                         std::to_string(shape.vocab) + ") other than blank " +
                         std::to_string(blank));
      }
    }
  }
}

template <typename Scalar, typename Acc>
double rnnt_loss(const RnntShape& shape, const RnntOptions& options, const Scalar* logits,
                 const int32_t* labels, const int32_t* logit_lengths, const int32_t* label_lengths,
                 double* costs, Scalar* grad, Acc* workspace) {
  const Layout layout{nullptr, shape.max_time, shape.max_labels + 1};
  return loss_impl<Scalar, Acc>(shape, options, logits, labels, logit_lengths, label_lengths,
                                layout, rnnt_padded_rows(shape), costs, grad, workspace);
}

template <typename Scalar, typename Acc>
double rnnt_loss_packed(const RnntShape& shape, const RnntOptions& options, const Scalar* logits,
                        const int32_t* labels, const int32_t* logit_lengths,
                        const int32_t* label_lengths, const int64_t* offsets, double* costs,
                        Scalar* grad, Acc* workspace) {
  const Layout layout{offsets, shape.max_time, shape.max_labels + 1};
  return loss_impl<Scalar, Acc>(shape, options, logits, labels, logit_lengths, label_lengths,
                                layout, offsets[shape.batch], costs, grad, workspace);
}

#define PERFLAB_RNNT_INSTANTIATE(Scalar, Acc)                                                     \
  template double rnnt_loss<Scalar, Acc>(const RnntShape&, const RnntOptions&, const Scalar*,     \
                                         const int32_t*, const int32_t*, const int32_t*, double*, \
                                         Scalar*, Acc*);                                          \
  template double rnnt_loss_packed<Scalar, Acc>(                                                  \
      const RnntShape&, const RnntOptions&, const Scalar*, const int32_t*, const int32_t*,        \
      const int32_t*, const int64_t*, double*, Scalar*, Acc*);
PERFLAB_RNNT_INSTANTIATE(float, double)
PERFLAB_RNNT_INSTANTIATE(double, double)
PERFLAB_RNNT_INSTANTIATE(float, float)
#undef PERFLAB_RNNT_INSTANTIATE

}  // namespace perflab::kernels::cpu
