// Tests for the CPU ReLU (kernels/cpu/relu.h): hand-worked values, NaN
// propagation, in-place use, and the backward pass against central finite
// differences away from the kink at zero.
#include "kernels/cpu/relu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace perflab::kernels::cpu {
namespace {

/// Uniform in [-1, 1] but at least `margin` away from zero.
std::vector<float> random_away_from_zero(size_t n, uint32_t seed, float margin) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(margin, 1.0f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> v(n);
  for (float& value : v) value = negative(gen) ? -dist(gen) : dist(gen);
  return v;
}

TEST(ReluTest, HandWorkedValues) {
  const std::vector<float> x = {-2.0f, -0.0f, 0.0f, 0.5f, 3.0f, -1e-30f};
  std::vector<float> y(x.size());
  relu_forward(static_cast<int64_t>(x.size()), x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.5f, 3.0f, 0.0f}));

  const std::vector<float> dy = {1, 2, 3, 4, 5, 6};
  std::vector<float> dx(x.size());
  relu_backward(static_cast<int64_t>(x.size()), y.data(), dy.data(), dx.data());
  EXPECT_EQ(dx, (std::vector<float>{0, 0, 0, 4, 5, 0}));
}

TEST(ReluTest, NanPropagates) {
  const float x = std::numeric_limits<float>::quiet_NaN();
  float y = 0.0f;
  relu_forward(1, &x, &y);
  EXPECT_TRUE(std::isnan(y));
}

TEST(ReluTest, InPlace) {
  std::vector<float> v = {-1.0f, 2.0f, -3.0f};
  relu_forward(3, v.data(), v.data());
  EXPECT_EQ(v, (std::vector<float>{0.0f, 2.0f, 0.0f}));
  std::vector<float> g = {7.0f, 8.0f, 9.0f};
  relu_backward(3, v.data(), g.data(), g.data());
  EXPECT_EQ(g, (std::vector<float>{0.0f, 8.0f, 0.0f}));
}

TEST(ReluTest, BackwardMatchesFiniteDifferences) {
  constexpr float kStep = 1e-3f;
  constexpr float kMargin = 1e-2f;  // no input is within a step of the kink
  for (int64_t n : {1, 3, 7, 17, 100003}) {
    std::vector<float> x = random_away_from_zero(static_cast<size_t>(n), 5, kMargin);
    const std::vector<float> r = random_away_from_zero(static_cast<size_t>(n), 7, 0.0f);
    std::vector<float> y(x.size()), dx(x.size());
    relu_forward(n, x.data(), y.data());
    relu_backward(n, y.data(), r.data(), dx.data());
    // Elementwise, so the loss Σ y·r changes only through y[i]: check each
    // element's derivative r[i]·dy[i]/dx[i] on its own.
    const int64_t stride = n > 1000 ? 997 : 1;
    for (int64_t i = 0; i < n; i += stride) {
      float plus = 0.0f, minus = 0.0f;
      const float up = x[i] + kStep, down = x[i] - kStep;
      relu_forward(1, &up, &plus);
      relu_forward(1, &down, &minus);
      const double expected =
          (static_cast<double>(plus) - minus) / (static_cast<double>(up) - down) * r[i];
      ASSERT_NEAR(dx[i], expected, 1e-5 * (1 + std::fabs(expected)))
          << "dx[" << i << "] x=" << x[i] << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cpu
