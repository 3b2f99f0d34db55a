// Tests for the CPU fully connected layer (kernels/cpu/linear.h): forward
// against a double-precision reference, backward against central finite
// differences, and a bias gradient that does not depend on the thread count.
#include "kernels/cpu/linear.h"
#include "kernels/cpu/relu.h"

#include <gtest/gtest.h>

#include "base/random.h"
#include <omp.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace perflab::kernels::cpu {
namespace {

using test_support::random_vector;

std::string describe(const LinearShape& s) {
  return "batch=" + std::to_string(s.batch) + " in=" + std::to_string(s.in) +
         " out=" + std::to_string(s.out);
}

/// The problem sizes every test runs on: ones, odd sizes, and one large
/// enough for the kernels' parallel paths.
const std::vector<LinearShape>& shapes() {
  static const std::vector<LinearShape> kShapes = {
      {1, 1, 1}, {3, 7, 1}, {7, 17, 3}, {17, 3, 7}, {1, 33, 17}, {33, 65, 17}, {515, 13, 37}};
  return kShapes;
}

struct Layer {
  LinearShape shape;
  std::vector<float> x, w, b, y;
  explicit Layer(const LinearShape& s, uint32_t seed)
      : shape(s),
        x(random_vector(static_cast<size_t>(s.batch * s.in), seed)),
        w(random_vector(static_cast<size_t>(s.out * s.in), seed + 1)),
        b(random_vector(static_cast<size_t>(s.out), seed + 2)),
        y(static_cast<size_t>(s.batch * s.out)) {}
  /// L = Σ y·r in double: a scalar whose gradient with respect to y is r.
  double loss(const std::vector<float>& r) {
    linear_forward(shape, x.data(), w.data(), b.data(), y.data());
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y[i]) * r[i];
    return sum;
  }
};

TEST(LinearTest, ForwardMatchesDoubleReference) {
  for (const LinearShape& s : shapes()) {
    Layer layer(s, 11);
    layer.loss(std::vector<float>(layer.y.size()));
    for (int64_t i = 0; i < s.batch; ++i) {
      for (int64_t o = 0; o < s.out; ++o) {
        double expected = layer.b[o];
        for (int64_t k = 0; k < s.in; ++k) {
          expected += static_cast<double>(layer.x[i * s.in + k]) * layer.w[o * s.in + k];
        }
        const double actual = layer.y[i * s.out + o];
        ASSERT_NEAR(actual, expected, 1e-5 * static_cast<double>(1 + s.in))
            << "y[" << i << "," << o << "] " << describe(s);
      }
    }
  }
}

TEST(LinearTest, HandWorkedForward) {
  // x = [1 2], W = [[1 0] [3 -1] [0.5 0.5]], b = [0 1 -1]  ->  y = [1 2 0.5]
  const std::vector<float> x = {1, 2};
  const std::vector<float> w = {1, 0, 3, -1, 0.5f, 0.5f};
  const std::vector<float> b = {0, 1, -1};
  std::vector<float> y(3);
  linear_forward({1, 2, 3}, x.data(), w.data(), b.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 2, 0.5f}));
}

// The layer is linear in every single input, so a central difference is
// exact up to float rounding of the outputs that the element touches.
TEST(LinearTest, BackwardMatchesFiniteDifferences) {
  constexpr float kStep = 0.0625f;
  for (const LinearShape& s : shapes()) {
    if (s.batch * s.in * s.out > 100000) continue;  // keep the O(n²) check quick
    Layer layer(s, 23);
    const std::vector<float> r = random_vector(layer.y.size(), 29);
    std::vector<float> dx(layer.x.size()), dw(layer.w.size()), db(layer.b.size());
    linear_backward(s, layer.x.data(), layer.w.data(), r.data(), dx.data(), dw.data(), db.data());
    const auto check = [&](const char* name, std::vector<float>& param,
                           const std::vector<float>& grad) {
      for (size_t i = 0; i < param.size(); ++i) {
        const float saved = param[i];
        param[i] = saved + kStep;
        const double plus = layer.loss(r);
        const double up = param[i];
        param[i] = saved - kStep;
        const double minus = layer.loss(r);
        const double down = param[i];
        param[i] = saved;
        const double expected = (plus - minus) / (up - down);
        ASSERT_NEAR(grad[i], expected, 1e-4 * (1 + std::fabs(expected)))
            << "d" << name << "[" << i << "] " << describe(s);
      }
    };
    check("x", layer.x, dx);
    check("W", layer.w, dw);
    check("b", layer.b, db);
  }
}

TEST(LinearTest, BackwardWithoutInputGradient) {
  const LinearShape s{7, 5, 3};
  Layer layer(s, 31);
  const std::vector<float> dy = random_vector(layer.y.size(), 37);
  std::vector<float> dx(layer.x.size()), dw(layer.w.size()), db(layer.b.size());
  std::vector<float> dw2(dw.size()), db2(db.size());
  linear_backward(s, layer.x.data(), layer.w.data(), dy.data(), dx.data(), dw.data(), db.data());
  linear_backward(s, layer.x.data(), layer.w.data(), dy.data(), nullptr, dw2.data(), db2.data());
  EXPECT_EQ(dw, dw2);
  EXPECT_EQ(db, db2);
}

TEST(LinearTest, EmptyBatchGivesZeroParameterGradients) {
  const LinearShape s{0, 3, 2};
  const std::vector<float> w(6, 1.0f);
  std::vector<float> dw(6, 9.0f), db(2, 9.0f);
  linear_backward(s, nullptr, w.data(), nullptr, nullptr, dw.data(), db.data());
  EXPECT_EQ(dw, std::vector<float>(6, 0.0f));
  EXPECT_EQ(db, std::vector<float>(2, 0.0f));
}

TEST(LinearTest, BiasGradientIsSerialSumWhateverTheThreads) {
  const LinearShape s{1023, 5, 41};  // big enough for the parallel reduction
  Layer layer(s, 41);
  const std::vector<float> dy = random_vector(static_cast<size_t>(s.batch * s.out), 43);
  std::vector<float> dw(layer.w.size()), db1(layer.b.size()), db2(layer.b.size());
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  linear_backward(s, layer.x.data(), layer.w.data(), dy.data(), nullptr, dw.data(), db1.data());
  omp_set_num_threads(3);
  linear_backward(s, layer.x.data(), layer.w.data(), dy.data(), nullptr, dw.data(), db2.data());
  omp_set_num_threads(threads);
  for (int64_t o = 0; o < s.out; ++o) {
    float serial = 0.0f;
    for (int64_t i = 0; i < s.batch; ++i) serial += dy[i * s.out + o];
    ASSERT_EQ(db1[o], serial) << "db[" << o << "] with 1 thread, " << describe(s);
    ASSERT_EQ(db2[o], serial) << "db[" << o << "] with 3 threads, " << describe(s);
  }
}

// The bias enters the sum last instead of first: equal to linear_forward +
// relu_forward up to fp32 rounding of a sum of `in` + 1 terms (one ulp of the
// largest partial sum per term, bounded by 2^-23 (in + 1) Σ|terms|).
TEST(LinearTest, ReluForwardFusedMatchesLinearThenRelu) {
  for (const LinearShape& s : shapes()) {
    Layer layer(s, 59);
    layer.loss(std::vector<float>(layer.y.size()));
    std::vector<float> expected = layer.y;
    relu_forward(static_cast<int64_t>(expected.size()), expected.data(), expected.data());
    std::vector<float> fused(expected.size(), -1.0f);
    linear_relu_forward(s, layer.x.data(), layer.w.data(), layer.b.data(), fused.data());
    for (int64_t i = 0; i < s.batch; ++i) {
      for (int64_t o = 0; o < s.out; ++o) {
        double magnitude = std::fabs(layer.b[o]);
        for (int64_t k = 0; k < s.in; ++k)
          magnitude += std::fabs(static_cast<double>(layer.x[i * s.in + k]) * layer.w[o * s.in + k]);
        const size_t at = static_cast<size_t>(i * s.out + o);
        ASSERT_GE(fused[at], 0.0f) << describe(s);
        ASSERT_NEAR(fused[at], expected[at], std::ldexp(1.0, -23) * static_cast<double>(s.in + 1) * magnitude)
            << "y[" << i << "," << o << "] " << describe(s);
      }
    }
  }
}

// The fused ReLU mask + bias gradient does the same arithmetic in the same
// order as relu_backward followed by linear_backward: equal bit for bit,
// with about half the outputs masked (y = max(x·Wᵀ + b, 0) of random data).
TEST(LinearTest, ReluBackwardFusedEqualsReluThenLinear) {
  for (const LinearShape& s : shapes()) {
    Layer layer(s, 47);
    layer.loss(std::vector<float>(layer.y.size()));
    relu_forward(static_cast<int64_t>(layer.y.size()), layer.y.data(), layer.y.data());
    const std::vector<float> dy = random_vector(layer.y.size(), 53);
    std::vector<float> masked(dy.size()), dx1(layer.x.size()), dw1(layer.w.size()),
        db1(layer.b.size());
    relu_backward(static_cast<int64_t>(dy.size()), layer.y.data(), dy.data(), masked.data());
    linear_backward(s, layer.x.data(), layer.w.data(), masked.data(), dx1.data(), dw1.data(),
                    db1.data());
    std::vector<float> fused = dy, dx2(dx1.size()), dw2(dw1.size()), db2(db1.size());
    linear_relu_backward(s, layer.x.data(), layer.w.data(), layer.y.data(), fused.data(),
                         dx2.data(), dw2.data(), db2.data());
    EXPECT_EQ(fused, masked) << describe(s);
    EXPECT_EQ(dx2, dx1) << describe(s);
    EXPECT_EQ(dw2, dw1) << describe(s);
    EXPECT_EQ(db2, db1) << describe(s);
  }
}

}  // namespace
}  // namespace perflab::kernels::cpu
