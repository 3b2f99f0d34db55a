// The transducer on the CPU: the reference kernels (kernels/cpu), timed.
// Its correctness gate checks properties the reference must satisfy rather
// than comparing it with itself: for the loss, finite non-negative costs,
// gradient rows that sum to zero, zero padding, and central finite
// differences of sequence 0's cost against the gradient; for the joint,
// sampled outputs and one gradient row recomputed from their definitions.
#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "base/error.h"
#include "workloads/transducer/transducer_benchmark.h"

namespace perflab::transducer {
namespace {

namespace cpu = kernels::cpu;

class CpuRun final : public TimedStep {
 public:
  CpuRun(const Problem& problem, const ProblemData& data) : pr_(problem), data_(data) {
    // The rows the layout uses: padded, or the most a length set packs.
    const int64_t stored = stored_rows(pr_, data_.sets);
    const auto width = static_cast<size_t>(pr_.row_width());
    out_.resize(static_cast<size_t>(stored) * width);
    if (pr_.op == Op::kLoss) {
      costs_.resize(static_cast<size_t>(pr_.batch));
      workspace_.resize(static_cast<size_t>(cpu::rnnt_workspace_elements(stored)));
    } else {
      df_.resize(data_.f.size());
      dg_.resize(data_.g.size());
    }
  }

  void run_iteration(int64_t iteration) override {
    last_set_ = static_cast<size_t>(iteration % static_cast<int64_t>(data_.sets.size()));
    const LengthSet& s = data_.sets[last_set_];
    const bool packed = pr_.layout == Layout::kPacked;
    if (pr_.op == Op::kLoss) {
      const auto shape = pr_.loss_shape();
      double loss = packed ? cpu::rnnt_loss_packed<float, double>(
                                 shape, pr_.options, data_.values.data(), s.labels.data(), s.frames.data(),
                                 s.label_lengths.data(), s.offsets.data(), costs_.data(), out_.data(),
                                 workspace_.data())
                           : cpu::rnnt_loss<float, double>(shape, pr_.options, data_.values.data(),
                                                           s.labels.data(), s.frames.data(),
                                                           s.label_lengths.data(), costs_.data(),
                                                           out_.data(), workspace_.data());
      losses_.add(loss);
    } else {
      const auto shape = pr_.joint_shape();
      const auto act = cpu::JointActivation::kRelu;
      if (packed) {
        cpu::transducer_joint_forward_packed(shape, act, data_.f.data(), data_.g.data(), s.frames.data(),
                                             s.label_lengths.data(), s.offsets.data(), out_.data());
        cpu::transducer_joint_backward_packed(shape, act, out_.data(), data_.values.data(), s.frames.data(),
                                              s.label_lengths.data(), s.offsets.data(), df_.data(),
                                              dg_.data());
      } else {
        cpu::transducer_joint_forward(shape, act, data_.f.data(), data_.g.data(), s.frames.data(),
                                      s.label_lengths.data(), out_.data());
        cpu::transducer_joint_backward(shape, act, out_.data(), data_.values.data(), s.frames.data(),
                                       s.label_lengths.data(), df_.data(), dg_.data());
      }
      losses_.add(static_cast<double>(df_[0]));  // a value that turns NaN if the joint does
    }
  }

  double take_loss() override { return losses_.take(); }

  CorrectnessReport check_correctness() override {
    return pr_.op == Op::kLoss ? check_loss() : check_joint();
  }

 private:
  /// Row index of (b, t, u) in the current layout.
  int64_t row(const LengthSet& s, int64_t b, int64_t t, int64_t u) const {
    if (pr_.layout == Layout::kPacked) return s.offsets[b] + t * (s.label_lengths[b] + 1) + u;
    return (b * pr_.max_time + t) * (pr_.max_labels + 1) + u;
  }

  CorrectnessReport check_loss() {
    const LengthSet& s = data_.sets[last_set_];
    const int64_t V = pr_.vocab;
    double worst_row_sum = 0, nonzero_padding = 0;
    for (double c : costs_) {
      if (!std::isfinite(c) || c < 0) return {false, fmt::format("a cost is {} (must be finite, >= 0)", c)};
    }
    // Every valid gradient row sums to zero; padding rows are zero.
    for (int64_t b = 0; b < pr_.batch; ++b) {
      for (int64_t t = 0; t < pr_.max_time; ++t) {
        for (int64_t u = 0; u <= pr_.max_labels; ++u) {
          bool valid = t < s.frames[b] && u <= s.label_lengths[b];
          if (!valid && pr_.layout == Layout::kPacked) continue;
          const float* g = out_.data() + row(s, b, t, u) * V;
          double sum = 0, abs_sum = 0;
          for (int64_t v = 0; v < V; ++v) {
            sum += g[v];
            abs_sum += std::fabs(g[v]);
          }
          if (valid) {
            worst_row_sum = std::max(worst_row_sum, std::fabs(sum));
          } else {
            nonzero_padding += abs_sum;
          }
        }
      }
    }
    if (nonzero_padding != 0) return {false, fmt::format("padding rows of the gradient are not zero (Σ|g| = {})", nonzero_padding)};
    if (worst_row_sum > 1e-5) return {false, fmt::format("a gradient row sums to {:.3g}, not 0", worst_row_sum)};
    // Central differences of sequence 0's cost (in double) at random logits.
    const double scale = reduction_scale();
    std::mt19937_64 gen(7);
    const int32_t T0 = s.frames[0], U0 = s.label_lengths[0];
    double worst = 0;
    constexpr int kProbes = 4;
    for (int probe = 0; probe < kProbes; ++probe) {
      int64_t t = std::uniform_int_distribution<int64_t>(0, T0 - 1)(gen);
      int64_t u = std::uniform_int_distribution<int64_t>(0, U0)(gen);
      int64_t v = std::uniform_int_distribution<int64_t>(0, V - 1)(gen);
      const double h = 1e-4;
      double plus = sequence0_cost(s, t, u, v, h), minus = sequence0_cost(s, t, u, v, -h);
      double numeric = (plus - minus) / (2 * h) * scale;
      double analytic = out_[static_cast<size_t>(row(s, 0, t, u) * V + v)];
      double err = std::fabs(numeric - analytic) / std::max(1e-3 * scale, std::fabs(numeric));
      worst = std::max(worst, err);
    }
    bool ok = worst < 1e-2;
    return {ok, fmt::format("costs finite; gradient rows sum to 0 (worst {:.2g}); padding zero; "
                            "{} finite-difference probes of sequence 0, worst relative error {:.2g} (limit 1e-2)",
                            worst_row_sum, kProbes, worst)};
  }

  /// The gradient's scale relative to d cost_0 / d logits under the reduction.
  double reduction_scale() const {
    return pr_.options.reduction == cpu::RnntReduction::kMean ? 1.0 / static_cast<double>(pr_.batch) : 1.0;
  }

  /// cost of sequence 0 (double precision) with logit (t, u, v) moved by h.
  double sequence0_cost(const LengthSet& s, int64_t t, int64_t u, int64_t v, double h) {
    const int64_t T0 = s.frames[0], U0 = s.label_lengths[0], V = pr_.vocab;
    cpu::RnntShape one{1, T0, U0, V};
    std::vector<double> logits(static_cast<size_t>(T0 * (U0 + 1) * V));
    for (int64_t tt = 0; tt < T0; ++tt) {
      for (int64_t uu = 0; uu <= U0; ++uu) {
        const float* src = data_.values.data() + row(s, 0, tt, uu) * V;
        std::copy(src, src + V, logits.begin() + (tt * (U0 + 1) + uu) * V);
      }
    }
    logits[static_cast<size_t>((t * (U0 + 1) + u) * V + v)] += h;
    std::vector<double> workspace(static_cast<size_t>(cpu::rnnt_workspace_elements(T0 * (U0 + 1))));
    double cost = 0;
    cpu::RnntOptions options = pr_.options;
    options.reduction = cpu::RnntReduction::kSum;
    int32_t frames = s.frames[0], labels_len = s.label_lengths[0];
    cpu::rnnt_loss<double, double>(one, options, logits.data(), s.labels.data(), &frames, &labels_len,
                                   &cost, nullptr, workspace.data());
    return cost;
  }

  CorrectnessReport check_joint() {
    const LengthSet& s = data_.sets[last_set_];
    const int64_t H = pr_.hidden;
    std::mt19937_64 gen(11);
    double worst = 0;
    constexpr int kSamples = 256;
    for (int i = 0; i < kSamples; ++i) {
      int64_t b = std::uniform_int_distribution<int64_t>(0, pr_.batch - 1)(gen);
      if (s.frames[b] == 0) continue;
      int64_t t = std::uniform_int_distribution<int64_t>(0, s.frames[b] - 1)(gen);
      int64_t u = std::uniform_int_distribution<int64_t>(0, s.label_lengths[b])(gen);
      int64_t k = std::uniform_int_distribution<int64_t>(0, H - 1)(gen);
      float sum = data_.f[(b * pr_.max_time + t) * H + k] + data_.g[(b * (pr_.max_labels + 1) + u) * H + k];
      float expected = std::max(sum, 0.0f);
      worst = std::max(worst, static_cast<double>(std::fabs(out_[row(s, b, t, u) * H + k] - expected)));
    }
    // df[0, 0, :] = Σ_u dh[0, 0, u, :] [h > 0], summed here in double.
    double worst_df = 0;
    for (int64_t k = 0; k < H; ++k) {
      double acc = 0;
      for (int64_t u = 0; u <= s.label_lengths[0]; ++u) {
        int64_t r = row(s, 0, 0, u);
        if (out_[r * H + k] > 0) acc += data_.values[r * H + k];
      }
      worst_df = std::max(worst_df, std::fabs(acc - df_[k]) / std::max(1.0, std::fabs(acc)));
    }
    bool ok = worst <= 1e-6 && worst_df <= 1e-4;
    return {ok, fmt::format("{} sampled outputs recomputed (worst error {:.2g}, limit 1e-6); df[0,0,:] "
                            "recomputed in double (worst relative error {:.2g}, limit 1e-4)",
                            kSamples, worst, worst_df)};
  }

  const Problem& pr_;
  const ProblemData& data_;
  std::vector<float> out_;  ///< loss: gradient; joint: h
  std::vector<double> costs_;
  std::vector<double> workspace_;
  std::vector<float> df_, dg_;
  size_t last_set_ = 0;
  LossMean losses_;
};

}  // namespace

std::unique_ptr<TimedStep> make_cpu_run(const Problem& problem, const ProblemData& data) {
  if (data.tensors != TensorsOn::kHost) throw Error("internal: the cpu run needs the inputs on the host");
  return std::make_unique<CpuRun>(problem, data);
}

}  // namespace perflab::transducer
