// RNN-T loss on .npy files.
#include "workloads/transducer/loss_files.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "harness/atomic_file.h"
#include "base/error.h"
#include "kernels/cpu/rnnt_loss.h"
#include "workloads/transducer/npy.h"

namespace perflab::transducer {
namespace {

namespace cpu = kernels::cpu;

/// An integer array as int32, checking dtype, rank and range.
std::vector<int32_t> int32_array(const std::filesystem::path& path, const NpyArray& a, size_t rank,
                                 const char* what) {
  if (a.shape.size() != rank) {
    throw UsageError(fmt::format("{}: {} must have {} dimension(s), has {}", path.string(), what,
                                 rank, a.shape.size()));
  }
  std::vector<int32_t> out(static_cast<size_t>(a.element_count()));
  auto narrow = [&](int64_t v) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      throw UsageError(fmt::format("{}: value {} does not fit in int32", path.string(), v));
    }
    return static_cast<int32_t>(v);
  };
  if (a.dtype == "<i4") {
    std::copy(a.as<int32_t>(), a.as<int32_t>() + out.size(), out.begin());
  } else if (a.dtype == "<i8") {
    for (size_t i = 0; i < out.size(); ++i) out[i] = narrow(a.as<int64_t>()[i]);
  } else {
    throw UsageError(fmt::format("{}: {} must be <i4 or <i8, is {}", path.string(), what, a.dtype));
  }
  return out;
}

cpu::RnntReduction parse_reduction(const std::string& text) {
  if (text == "none") return cpu::RnntReduction::kNone;
  if (text == "sum") return cpu::RnntReduction::kSum;
  if (text == "mean") return cpu::RnntReduction::kMean;
  throw UsageError(fmt::format("--reduction: '{}' is not valid; valid values: none, sum, mean", text));
}

/// Refuses a logit that is not finite (the loss is then not a number, and
/// "loss -nan" with exit 0 hid it) or so large that log-softmax cannot
/// resolve it: x - logsumexp(x) rounds with an absolute error of about
/// |x|·ε, so beyond 2^16 in fp32 (ε = 2^-24: 0.004 per log-probability) or
/// 2^40 in fp64 the loss is noise (all logits 3e38 gave a loss of 0 where
/// -log(1/V) per step is due, and negative costs).
template <typename Scalar>
void require_resolvable(const NpyArray& logits, const std::filesystem::path& path) {
  constexpr double kLimit = sizeof(Scalar) == 4 ? 65536.0 : 1099511627776.0;
  const Scalar* v = logits.as<Scalar>();
  const int64_t n = logits.element_count();
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) {
      throw UsageError(fmt::format("{}: logit {} (flat index) is {}; the loss needs finite logits", path.string(), i,
                                   static_cast<double>(v[i])));
    }
    if (std::fabs(static_cast<double>(v[i])) > kLimit) {
      throw UsageError(fmt::format("{}: logit {} (flat index) is {:g}, beyond ±{:g}, where {} log-softmax loses the "
                                   "loss to rounding; scale the logits",
                                   path.string(), i, static_cast<double>(v[i]), kLimit,
                                   sizeof(Scalar) == 4 ? "fp32" : "fp64"));
    }
  }
}

template <typename Scalar>
double evaluate(const cpu::RnntShape& shape, const cpu::RnntOptions& options, const NpyArray& logits,
                bool packed, const std::vector<int32_t>& labels, const std::vector<int32_t>& t_len,
                const std::vector<int32_t>& u_len, std::vector<double>& costs, NpyArray& grads) {
  std::vector<int64_t> offsets(static_cast<size_t>(shape.batch) + 1);
  int64_t rows = packed ? cpu::rnnt_packed_offsets(shape.batch, t_len.data(), u_len.data(), offsets.data())
                        : cpu::rnnt_padded_rows(shape);
  std::vector<double> workspace(static_cast<size_t>(cpu::rnnt_workspace_elements(rows)));
  if (packed) {
    return cpu::rnnt_loss_packed<Scalar, double>(shape, options, logits.as<Scalar>(), labels.data(),
                                                 t_len.data(), u_len.data(), offsets.data(),
                                                 costs.data(), grads.as<Scalar>(), workspace.data());
  }
  return cpu::rnnt_loss<Scalar, double>(shape, options, logits.as<Scalar>(), labels.data(),
                                        t_len.data(), u_len.data(), costs.data(),
                                        grads.as<Scalar>(), workspace.data());
}

}  // namespace

LossFileSummary evaluate_loss_files(const LossFileOptions& o) {
  NpyArray logits = read_npy(o.logits);
  std::vector<int32_t> t_len = int32_array(o.logit_lengths, read_npy(o.logit_lengths), 1, "logit lengths");
  std::vector<int32_t> u_len = int32_array(o.label_lengths, read_npy(o.label_lengths), 1, "label lengths");
  NpyArray label_array = read_npy(o.labels);
  std::vector<int32_t> labels = int32_array(o.labels, label_array, 2, "labels");

  const auto batch = static_cast<int64_t>(t_len.size());
  if (static_cast<int64_t>(u_len.size()) != batch || label_array.shape[0] != batch) {
    throw UsageError(fmt::format("batch sizes differ: {} logit lengths, {} label lengths, {} label rows",
                                 batch, u_len.size(), label_array.shape[0]));
  }
  if (logits.dtype != "<f4" && logits.dtype != "<f8") {
    throw UsageError(fmt::format("{}: logits must be <f4 or <f8, are {}", o.logits.string(), logits.dtype));
  }
  const bool packed = logits.shape.size() == 2;
  if (!packed && logits.shape.size() != 4) {
    throw UsageError(fmt::format("{}: logits must be [B, T, U+1, V] or packed [R, V], have {} dimension(s)",
                                 o.logits.string(), logits.shape.size()));
  }
  cpu::RnntShape shape;
  shape.batch = batch;
  shape.max_labels = label_array.shape[1];
  shape.vocab = logits.shape.back();
  if (packed) {
    shape.max_time = batch > 0 ? *std::max_element(t_len.begin(), t_len.end()) : 0;
  } else {
    if (logits.shape[0] != batch || logits.shape[2] != shape.max_labels + 1) {
      throw UsageError(fmt::format("{}: logits are [{}, {}, {}, {}]; expected [B={}, T, U+1={}, V]",
                                   o.logits.string(), logits.shape[0], logits.shape[1],
                                   logits.shape[2], logits.shape[3], batch, shape.max_labels + 1));
    }
    shape.max_time = logits.shape[1];
  }
  cpu::RnntOptions options;
  options.blank = o.blank;
  options.reduction = parse_reduction(o.reduction);
  cpu::rnnt_validate(shape, options, labels.data(), t_len.data(), u_len.data());
  if (packed) {
    std::vector<int64_t> offsets(static_cast<size_t>(batch) + 1);
    int64_t rows = cpu::rnnt_packed_offsets(batch, t_len.data(), u_len.data(), offsets.data());
    if (logits.shape[0] != rows) {
      throw UsageError(fmt::format("{}: packed logits have {} rows; the lengths need Σ T_b·(U_b+1) = {}",
                                   o.logits.string(), logits.shape[0], rows));
    }
  }

  if (logits.dtype == "<f4") {
    require_resolvable<float>(logits, o.logits);
  } else {
    require_resolvable<double>(logits, o.logits);
  }

  NpyArray grads;
  grads.dtype = logits.dtype;
  grads.shape = logits.shape;
  grads.data.assign(logits.data.size(), 0);
  std::vector<double> costs(static_cast<size_t>(batch));
  LossFileSummary summary;
  summary.batch = batch;
  summary.layout = packed ? "packed" : "padded";
  summary.dtype = logits.dtype;
  summary.loss = logits.dtype == "<f4"
                     ? evaluate<float>(shape, options, logits, packed, labels, t_len, u_len, costs, grads)
                     : evaluate<double>(shape, options, logits, packed, labels, t_len, u_len, costs, grads);

  // A cost is -log P of the labels: finite and not below 0 beyond rounding
  // (a sum of at most T + U log-probabilities, each within 0.004 of its
  // exact value by the bound above): a last check before anything is written.
  for (int64_t b = 0; b < batch; ++b) {
    const double cost = costs[static_cast<size_t>(b)];
    const double steps = static_cast<double>(t_len[static_cast<size_t>(b)]) + u_len[static_cast<size_t>(b)];
    if (!std::isfinite(cost) || cost < -0.004 * std::max(steps, 1.0)) {
      throw Error(fmt::format("{}: the loss of sequence {} came out {}, not a negative log-likelihood: the logits "
                              "are beyond what {} arithmetic resolves",
                              o.logits.string(), b, cost, logits.dtype == "<f4" ? "fp32" : "fp64"));
    }
  }
  ensure_writable_directory(o.out_dir);
  write_npy(o.out_dir / "costs.npy", "<f8", {batch}, costs.data());
  write_npy(o.out_dir / "loss.npy", "<f8", {}, &summary.loss);
  write_npy(o.out_dir / "grads.npy", grads);
  return summary;
}

}  // namespace perflab::transducer
