// Tests for the CPU RNN-T loss (kernels/cpu/rnnt_loss.h): hand-worked costs,
// the closed form for equal logits, the gradient against central finite
// differences at odd sizes, float against double, padding that must not leak,
// long sequences, packed against padded, reductions and input validation.
#include "kernels/cpu/rnnt_loss.h"

#include <gtest/gtest.h>

#include "tests/support/single_thread.h"
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/random.h"

namespace perflab::kernels::cpu {
namespace {

/// One RNN-T problem in the padded layout, logits stored in double.
struct Problem {
  RnntShape shape;
  std::vector<double> logits;    // [B, T, U+1, V]
  std::vector<int32_t> labels;   // [B, U]
  std::vector<int32_t> frames;   // T_b
  std::vector<int32_t> lengths;  // U_b
};

using test_support::SingleThread;

std::string describe(const RnntShape& s) {
  return "B=" + std::to_string(s.batch) + " T=" + std::to_string(s.max_time) +
         " U=" + std::to_string(s.max_labels) + " V=" + std::to_string(s.vocab);
}

int64_t index(const RnntShape& s, int64_t b, int64_t t, int64_t u, int64_t v) {
  return ((b * s.max_time + t) * (s.max_labels + 1) + u) * s.vocab + v;
}

/// Random logits in [-3, 3), random non-blank labels (blank = V-1), the given lengths.
Problem random_problem(const RnntShape& s, std::vector<int32_t> frames,
                       std::vector<int32_t> lengths, uint32_t seed) {
  Problem p{s, {}, {}, std::move(frames), std::move(lengths)};
  const std::vector<float> z =
      test_support::random_vector(static_cast<size_t>(rnnt_padded_rows(s) * s.vocab), seed, -3, 3);
  p.logits.assign(z.begin(), z.end());
  std::mt19937 gen(seed + 1000);
  std::uniform_int_distribution<int32_t> symbol(0, static_cast<int32_t>(s.vocab - 2));
  p.labels.resize(static_cast<size_t>(s.batch * s.max_labels));
  for (int32_t& y : p.labels) y = symbol(gen);
  return p;
}

/// Costs, reduced loss and gradient of a problem, computed as <Scalar, Acc>.
template <typename Scalar>
struct Result {
  std::vector<double> costs;
  double loss = 0;
  std::vector<Scalar> grad;
};

template <typename Scalar, typename Acc>
Result<Scalar> run(const Problem& p, RnntOptions options = {}, bool with_grad = true) {
  const std::vector<Scalar> logits(p.logits.begin(), p.logits.end());
  Result<Scalar> r;
  r.costs.resize(static_cast<size_t>(p.shape.batch));
  if (with_grad) r.grad.assign(logits.size(), Scalar(-7));  // overwritten everywhere
  std::vector<Acc> ws(static_cast<size_t>(rnnt_workspace_elements(rnnt_padded_rows(p.shape))));
  r.loss = rnnt_loss<Scalar, Acc>(p.shape, options, logits.data(), p.labels.data(), p.frames.data(),
                                  p.lengths.data(), r.costs.data(),
                                  with_grad ? r.grad.data() : nullptr, ws.data());
  return r;
}

std::vector<double> softmax(const double* z, int64_t n) {
  double peak = z[0];
  for (int64_t v = 1; v < n; ++v) peak = std::max(peak, z[v]);
  std::vector<double> p(static_cast<size_t>(n));
  double sum = 0;
  for (int64_t v = 0; v < n; ++v) sum += p[v] = std::exp(z[v] - peak);
  for (double& value : p) value /= sum;
  return p;
}

TEST(RnntLossTest, OneFrameNoLabelsCostsMinusLogSoftmaxOfBlank) {
  Problem p = random_problem({1, 1, 0, 5}, {1}, {0}, 1);
  const Result<double> r = run<double, double>(p);
  const std::vector<double> prob = softmax(p.logits.data(), 5);
  EXPECT_NEAR(r.costs[0], -std::log(prob[4]), 1e-12);
  EXPECT_NEAR(r.loss, -std::log(prob[4]), 1e-12);
  // One path, one emission: the gradient is softmax - onehot(blank).
  for (int64_t v = 0; v < 5; ++v) {
    EXPECT_NEAR(r.grad[v], prob[v] - (v == 4 ? 1.0 : 0.0), 1e-12) << "v=" << v;
  }
}

// T=2, U=1, label y: two paths through the grid, each three emissions,
//   label at (0,0), blank at (0,1), final blank at (1,1):  p00(y)·p01(∅)·p11(∅)
//   blank at (0,0), label at (1,0), final blank at (1,1):  p00(∅)·p10(y)·p11(∅)
// so P(y|x) = p11(∅)·(p00(y)·p01(∅) + p00(∅)·p10(y)), with pTU = softmax of row (t,u).
TEST(RnntLossTest, HandWorkedTwoFramesOneLabel) {
  Problem p = random_problem({1, 2, 1, 3}, {2}, {1}, 2);
  p.labels = {1};
  const Result<double> r = run<double, double>(p);
  const auto prob = [&](int64_t t, int64_t u) {
    return softmax(&p.logits[index(p.shape, 0, t, u, 0)], 3);
  };
  const int64_t y = 1, blank = 2;
  const double expected =
      prob(1, 1)[blank] * (prob(0, 0)[y] * prob(0, 1)[blank] + prob(0, 0)[blank] * prob(1, 0)[y]);
  EXPECT_NEAR(r.costs[0], -std::log(expected), 1e-12);
  // Node (1,1) is on every path and emits only the final blank.
  const std::vector<double> p11 = prob(1, 1);
  for (int64_t v = 0; v < 3; ++v) {
    EXPECT_NEAR(r.grad[index(p.shape, 0, 1, 1, v)], p11[v] - (v == blank ? 1 : 0), 1e-12);
  }
}

// With equal logits every emission has probability 1/V and every path emits
// T+U symbols; there are C(T-1+U, U) paths (the final blank is fixed), so
//   cost = (T+U)·log V - log C(T+U-1, U).
double equal_logits_cost(int64_t t, int64_t u, int64_t v) {
  const double log_paths =
      std::lgamma(double(t + u)) - std::lgamma(double(u + 1)) - std::lgamma(double(t));
  return double(t + u) * std::log(double(v)) - log_paths;
}

TEST(RnntLossTest, EqualLogitsMatchClosedForm) {
  struct Case {
    int32_t t, u, v;
  };
  for (const Case c : {Case{1, 0, 2}, Case{1, 3, 5}, Case{3, 2, 5}, Case{7, 4, 11},
                       Case{1000, 200, 8}}) {  // the last one would underflow outside log space
    Problem p = random_problem({1, c.t, c.u, c.v}, {c.t}, {c.u}, 3);
    std::fill(p.logits.begin(), p.logits.end(), 0.25);
    const Result<double> r = run<double, double>(p);
    const double expected = equal_logits_cost(c.t, c.u, c.v);
    EXPECT_NEAR(r.costs[0], expected, 1e-12 * expected) << describe(p.shape);
  }
}

// Central differences of the reduced loss in double: step 1e-5 gives a
// truncation error of O(1e-10) and a rounding error of O(1e-11) here.
TEST(RnntLossTest, GradientMatchesFiniteDifferences) {
  const SingleThread one_thread;
  constexpr double kStep = 1e-5;
  struct Case {
    RnntShape shape;
    std::vector<int32_t> frames, lengths;
    RnntReduction reduction;
  };
  const std::vector<Case> cases = {
      {{3, 5, 3, 7}, {5, 3, 1}, {3, 0, 2}, RnntReduction::kMean},
      {{3, 5, 3, 7}, {2, 5, 4}, {1, 3, 0}, RnntReduction::kSum},
      {{1, 3, 2, 2}, {3}, {2}, RnntReduction::kNone},
      {{2, 4, 5, 3}, {4, 1}, {5, 5}, RnntReduction::kMean},
  };
  for (const Case& c : cases) {
    Problem p = random_problem(c.shape, c.frames, c.lengths, 4);
    const RnntOptions options{-1, c.reduction};
    const Result<double> r = run<double, double>(p, options);
    for (size_t i = 0; i < p.logits.size(); ++i) {
      const double saved = p.logits[i];
      p.logits[i] = saved + kStep;
      const double plus = run<double, double>(p, options, false).loss;
      p.logits[i] = saved - kStep;
      const double minus = run<double, double>(p, options, false).loss;
      p.logits[i] = saved;
      const double expected = (plus - minus) / (2 * kStep);
      ASSERT_NEAR(r.grad[i], expected, 1e-8) << "grad[" << i << "] " << describe(c.shape);
    }
  }
}

TEST(RnntLossTest, GradientRowsSumToZeroAndPaddingIsZero) {
  Problem p = random_problem({3, 9, 4, 6}, {9, 2, 5}, {4, 0, 3}, 5);
  const Result<double> r = run<double, double>(p);
  const RnntShape& s = p.shape;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < s.max_time; ++t) {
      for (int64_t u = 0; u <= s.max_labels; ++u) {
        const bool valid = t < p.frames[b] && u <= p.lengths[b];
        double sum = 0;
        for (int64_t v = 0; v < s.vocab; ++v) {
          const double g = r.grad[index(s, b, t, u, v)];
          if (!valid) {
            ASSERT_EQ(g, 0.0) << "padding b=" << b << " t=" << t << " u=" << u;
          }
          sum += g;
        }
        ASSERT_NEAR(sum, 0.0, 1e-13) << "b=" << b << " t=" << t << " u=" << u;
      }
    }
  }
}

// Padding (t >= T_b, u > U_b, labels past U_b) is never read: filling it with
// NaN, infinities and huge values changes nothing, bit for bit.
TEST(RnntLossTest, PaddingDoesNotLeak) {
  const Problem clean = random_problem({3, 6, 4, 5}, {6, 3, 1}, {2, 4, 0}, 6);
  Problem dirty = clean;
  const RnntShape& s = clean.shape;
  const double poison[] = {std::numeric_limits<double>::quiet_NaN(), 1e30, -1e30,
                           std::numeric_limits<double>::infinity()};
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < s.max_time; ++t) {
      for (int64_t u = 0; u <= s.max_labels; ++u) {
        if (t < clean.frames[b] && u <= clean.lengths[b]) continue;
        for (int64_t v = 0; v < s.vocab; ++v) dirty.logits[index(s, b, t, u, v)] = poison[v % 4];
      }
    }
    for (int64_t u = clean.lengths[b]; u < s.max_labels; ++u) {
      dirty.labels[b * s.max_labels + u] = -12345;
    }
  }
  const Result<float> a = run<float, double>(clean);
  const Result<float> d = run<float, double>(dirty);
  for (int64_t b = 0; b < s.batch; ++b) {
    ASSERT_TRUE(std::isfinite(d.costs[b])) << "b=" << b;
    ASSERT_EQ(d.costs[b], a.costs[b]) << "b=" << b;
  }
  for (size_t i = 0; i < a.grad.size(); ++i) {
    ASSERT_TRUE(std::isfinite(d.grad[i])) << "grad[" << i << "]";
    ASSERT_EQ(d.grad[i], a.grad[i]) << "grad[" << i << "]";
  }
}

// Float recursions lose about one ulp of |alpha| per step; at these sizes the
// costs (about 100) agree to 1e-5 relative and the gradient to 1e-5 absolute.
// Double recursions on float logits agree with the double reference to 1e-12.
TEST(RnntLossTest, FloatAgreesWithDouble) {
  Problem p = random_problem({4, 31, 9, 17}, {31, 20, 7, 1}, {9, 5, 0, 3}, 7);
  for (double& z : p.logits) z = static_cast<float>(z);  // exactly representable in both
  const Result<double> ref = run<double, double>(p);
  const Result<float> ff = run<float, float>(p);
  const Result<float> fd = run<float, double>(p);
  for (int64_t b = 0; b < p.shape.batch; ++b) {
    EXPECT_NEAR(ff.costs[b], ref.costs[b], 1e-5 * ref.costs[b]) << "b=" << b;
    EXPECT_NEAR(fd.costs[b], ref.costs[b], 1e-12 * ref.costs[b]) << "b=" << b;
  }
  for (size_t i = 0; i < ref.grad.size(); ++i) {
    ASSERT_NEAR(ff.grad[i], ref.grad[i], 1e-5) << "float/float grad[" << i << "]";
    ASSERT_NEAR(fd.grad[i], ref.grad[i], 1e-7) << "float/double grad[" << i << "]";
  }
}

TEST(RnntLossTest, LongSequenceStaysFinite) {
  Problem p = random_problem({2, 1000, 200, 8}, {1000, 777}, {200, 150}, 8);
  const Result<float> r = run<float, double>(p, {-1, RnntReduction::kSum});
  const RnntShape& s = p.shape;
  for (int64_t b = 0; b < s.batch; ++b) {
    ASSERT_TRUE(std::isfinite(r.costs[b])) << "b=" << b;
    ASSERT_GT(r.costs[b], 0.0) << "b=" << b;
    for (int64_t t = 0; t < p.frames[b]; ++t) {
      for (int64_t u = 0; u <= p.lengths[b]; ++u) {
        double sum = 0;
        for (int64_t v = 0; v < s.vocab; ++v) {
          const float g = r.grad[index(s, b, t, u, v)];
          ASSERT_TRUE(std::isfinite(g)) << "b=" << b << " t=" << t << " u=" << u << " v=" << v;
          ASSERT_LE(std::fabs(g), 1.0f + 1e-6f);
          sum += g;
        }
        ASSERT_NEAR(sum, 0.0, 1e-6) << "b=" << b << " t=" << t << " u=" << u;
      }
    }
  }
}

TEST(RnntLossTest, PackedEqualsPadded) {
  const Problem p = random_problem({5, 7, 4, 9}, {7, 1, 4, 7, 2}, {4, 0, 2, 1, 4}, 9);
  const RnntShape& s = p.shape;
  std::vector<int64_t> offsets(static_cast<size_t>(s.batch + 1));
  const int64_t rows =
      rnnt_packed_offsets(s.batch, p.frames.data(), p.lengths.data(), offsets.data());
  EXPECT_EQ(rows, 7 * 5 + 1 * 1 + 4 * 3 + 7 * 2 + 2 * 5);
  std::vector<float> packed(static_cast<size_t>(rows * s.vocab));
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < p.frames[b]; ++t) {
      for (int64_t u = 0; u <= p.lengths[b]; ++u) {
        const int64_t row = offsets[b] + t * (p.lengths[b] + 1) + u;
        for (int64_t v = 0; v < s.vocab; ++v) {
          packed[row * s.vocab + v] = static_cast<float>(p.logits[index(s, b, t, u, v)]);
        }
      }
    }
  }
  for (RnntReduction reduction : {RnntReduction::kSum, RnntReduction::kMean}) {
    const RnntOptions options{-1, reduction};
    const Result<float> padded = run<float, double>(p, options);
    std::vector<double> costs(static_cast<size_t>(s.batch));
    std::vector<float> grad(packed.size());
    std::vector<double> ws(static_cast<size_t>(rnnt_workspace_elements(rows)));
    const double loss = rnnt_loss_packed<float, double>(
        s, options, packed.data(), p.labels.data(), p.frames.data(), p.lengths.data(),
        offsets.data(), costs.data(), grad.data(), ws.data());
    EXPECT_EQ(loss, padded.loss);
    EXPECT_EQ(costs, padded.costs);
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t t = 0; t < p.frames[b]; ++t) {
        for (int64_t u = 0; u <= p.lengths[b]; ++u) {
          const int64_t row = offsets[b] + t * (p.lengths[b] + 1) + u;
          for (int64_t v = 0; v < s.vocab; ++v) {
            ASSERT_EQ(grad[row * s.vocab + v], padded.grad[index(s, b, t, u, v)])
                << "b=" << b << " t=" << t << " u=" << u << " v=" << v << " " << describe(s);
          }
        }
      }
    }
  }
}

TEST(RnntLossTest, Reductions) {
  const Problem p = random_problem({3, 4, 2, 5}, {4, 2, 3}, {2, 1, 0}, 10);
  const Result<double> none = run<double, double>(p, {-1, RnntReduction::kNone});
  const Result<double> sum = run<double, double>(p, {-1, RnntReduction::kSum});
  const Result<double> mean = run<double, double>(p, {-1, RnntReduction::kMean});
  const double total = none.costs[0] + none.costs[1] + none.costs[2];
  EXPECT_EQ(none.costs, sum.costs);
  EXPECT_EQ(none.costs, mean.costs);  // costs are always per sequence, unreduced
  EXPECT_EQ(none.loss, total);
  EXPECT_EQ(sum.loss, total);
  EXPECT_DOUBLE_EQ(mean.loss, total / 3);
  EXPECT_EQ(none.grad, sum.grad);
  for (size_t i = 0; i < sum.grad.size(); ++i) {
    ASSERT_NEAR(mean.grad[i], sum.grad[i] / 3, 1e-16) << "grad[" << i << "]";
  }
}

// Moving blank from V-1 to 0 and permuting the logits to match leaves the
// cost unchanged.
TEST(RnntLossTest, BlankIndexIsConfigurable) {
  Problem last = random_problem({2, 5, 3, 6}, {5, 4}, {3, 2}, 11);
  Problem first = last;
  const int64_t v_count = last.shape.vocab;
  for (size_t row = 0; row < last.logits.size() / v_count; ++row) {
    for (int64_t v = 0; v < v_count; ++v) {  // symbol v moves to v+1, blank V-1 moves to 0
      first.logits[row * v_count + (v + 1) % v_count] = last.logits[row * v_count + v];
    }
  }
  for (int32_t& y : first.labels) ++y;
  const Result<double> a = run<double, double>(last);
  const Result<double> b = run<double, double>(first, {0, RnntReduction::kMean});
  for (size_t i = 0; i < a.costs.size(); ++i) EXPECT_NEAR(b.costs[i], a.costs[i], 1e-12);
}

TEST(RnntLossTest, ResultsDoNotDependOnThreadCount) {
  const Problem p = random_problem({5, 13, 6, 11}, {13, 4, 9, 1, 12}, {6, 2, 0, 3, 5}, 12);
  const Result<float> many = run<float, double>(p);
  Result<float> one;
  {
    const SingleThread one_thread;
    one = run<float, double>(p);
  }
  EXPECT_EQ(one.costs, many.costs);
  EXPECT_EQ(one.grad, many.grad);
}

void expect_usage_error(const Problem& p, RnntOptions options, const std::string& needle) {
  try {
    run<double, double>(p, options);
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(RnntLossTest, RejectsInvalidLengthsAndLabels) {
  const Problem good = random_problem({3, 4, 3, 5}, {4, 2, 3}, {3, 1, 0}, 13);
  const RnntOptions options;
  const auto with = [&](auto edit) {
    Problem p = good;
    edit(p);
    return p;
  };
  expect_usage_error(with([](Problem& p) { p.frames[1] = 0; }), options,
                     "sequence 1: logit length 0");
  expect_usage_error(with([](Problem& p) { p.frames[2] = 5; }), options,
                     "sequence 2: logit length 5");
  expect_usage_error(with([](Problem& p) { p.lengths[1] = -1; }), options,
                     "sequence 1: label length -1");
  expect_usage_error(with([](Problem& p) { p.lengths[0] = 4; }), options,
                     "sequence 0: label length 4");
  expect_usage_error(with([](Problem& p) { p.labels[3 + 0] = 4; }), options,
                     "sequence 1: label 0 is 4");  // blank
  expect_usage_error(with([](Problem& p) { p.labels[2] = 5; }), options,
                     "sequence 0: label 2 is 5");
  expect_usage_error(with([](Problem& p) { p.labels[0] = -1; }), options,
                     "sequence 0: label 0 is -1");
  expect_usage_error(good, {5, RnntReduction::kMean}, "blank index 5");
  expect_usage_error(good, {-2, RnntReduction::kMean}, "blank index -2");
  // Labels past U_b are not checked; blank 0 makes label 0 invalid instead.
  Problem p = with([](Problem& q) { q.labels[3 + 1] = 99; });
  EXPECT_NO_THROW((run<double, double>(p)));
  p.labels[0] = 0;
  expect_usage_error(p, {0, RnntReduction::kMean}, "sequence 0: label 0 is 0");

  const std::vector<int32_t> frames = {2, -1}, lengths = {1, 1};
  std::vector<int64_t> offsets(3);
  EXPECT_THROW(rnnt_packed_offsets(2, frames.data(), lengths.data(), offsets.data()), UsageError);
}

}  // namespace
}  // namespace perflab::kernels::cpu
