// Tests for the CPU sigmoid and binary cross-entropy on logits
// (kernels/cpu/bce.h): hand-worked values, stability at extreme logits, and
// the gradient against central finite differences.
#include "kernels/cpu/bce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace perflab::kernels::cpu {
namespace {

TEST(BceTest, ZeroLogitCostsLnTwo) {
  const std::vector<float> z = {0, 0, 0};
  const std::vector<float> y = {0, 1, 0.5f};
  std::vector<float> dz(3);
  EXPECT_DOUBLE_EQ(bce_with_logits(3, z.data(), y.data(), dz.data()), std::log(2.0));
  EXPECT_FLOAT_EQ(dz[0], 0.5f / 3);
  EXPECT_FLOAT_EQ(dz[1], -0.5f / 3);
  EXPECT_FLOAT_EQ(dz[2], 0.0f);
}

TEST(BceTest, HandWorkedValue) {
  // z = ln 3: σ = 3/4, so the loss is -ln(3/4) for y = 1 and -ln(1/4) for y = 0.
  const float z[] = {static_cast<float>(std::log(3.0)), static_cast<float>(std::log(3.0))};
  const float y[] = {1, 0};
  float dz[2];
  const double expected = (-std::log(0.75) - std::log(0.25)) / 2;
  EXPECT_NEAR(bce_with_logits(2, z, y, dz), expected, 1e-6);
  EXPECT_NEAR(dz[0], (0.75 - 1) / 2, 1e-6);
  EXPECT_NEAR(dz[1], 0.75 / 2, 1e-6);
}

TEST(BceTest, StableAtExtremeLogits) {
  const std::vector<float> z = {100, -100, 1e4f, -1e4f, 3e38f, -3e38f};
  const std::vector<float> right = {1, 0, 1, 0, 1, 0};
  const std::vector<float> wrong = {0, 1, 0, 1, 0, 1};
  std::vector<float> dz(z.size());
  const double small = bce_with_logits(6, z.data(), right.data(), dz.data());
  EXPECT_GE(small, 0.0);
  EXPECT_LT(small, 1e-40);
  for (float g : dz) EXPECT_LT(std::fabs(g), 1e-40f);
  const double large = bce_with_logits(6, z.data(), wrong.data(), dz.data());
  double expected = 0;  // every logit is on the wrong side: the loss is about |z|
  for (float value : z) expected += std::fabs(static_cast<double>(value)) / 6;
  EXPECT_NEAR(large, expected, 1e-12 * expected);
  EXPECT_TRUE(std::isfinite(large));
  for (size_t i = 0; i < z.size(); ++i) EXPECT_FLOAT_EQ(std::fabs(dz[i]), 1.0f / 6) << i;
}

TEST(BceTest, SigmoidValues) {
  const std::vector<float> z = {0, 2, -2, 100, -100, -1e4f};
  std::vector<float> p(z.size());
  sigmoid(static_cast<int64_t>(z.size()), z.data(), p.data());
  EXPECT_EQ(p[0], 0.5f);
  EXPECT_FLOAT_EQ(p[1], static_cast<float>(1 / (1 + std::exp(-2.0))));
  EXPECT_FLOAT_EQ(p[1] + p[2], 1.0f);
  EXPECT_EQ(p[3], 1.0f);
  EXPECT_GT(p[4], 0.0f);
  EXPECT_LT(p[4], 1e-40f);
  EXPECT_EQ(p[5], 0.0f);
  sigmoid(static_cast<int64_t>(z.size()), p.data(), p.data());  // in place is allowed
  EXPECT_FLOAT_EQ(p[0], static_cast<float>(1 / (1 + std::exp(-0.5))));
}

// The loss is smooth, so a central difference with a small step agrees with
// the analytic gradient to O(step²); the loss is evaluated in double.
TEST(BceTest, GradientMatchesFiniteDifferences) {
  constexpr float kStep = 1e-3f;
  for (int64_t n : {1, 3, 7, 17, 1025}) {
    std::mt19937 gen(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> logit(-8.0f, 8.0f);
    std::bernoulli_distribution label(0.3);
    std::vector<float> z(static_cast<size_t>(n)), y(static_cast<size_t>(n)), dz(z.size());
    for (int64_t i = 0; i < n; ++i) {
      z[i] = logit(gen);
      y[i] = label(gen) ? 1.0f : 0.0f;
    }
    double reference = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double p = 1 / (1 + std::exp(-static_cast<double>(z[i])));
      reference -= y[i] > 0 ? std::log(p) : std::log1p(-p);
    }
    ASSERT_NEAR(bce_with_logits(n, z.data(), y.data(), dz.data()),
                reference / static_cast<double>(n), 1e-12)
        << "n=" << n;
    for (int64_t i = 0; i < n; ++i) {
      const float saved = z[i];
      z[i] = saved + kStep;
      const double plus = bce_with_logits(n, z.data(), y.data(), nullptr);
      const double up = z[i];
      z[i] = saved - kStep;
      const double minus = bce_with_logits(n, z.data(), y.data(), nullptr);
      const double down = z[i];
      z[i] = saved;
      const double expected = (plus - minus) / (up - down);
      ASSERT_NEAR(dz[i], expected, 1e-4 * std::fabs(expected) + 1e-9)
          << "dlogit[" << i << "] z=" << z[i] << " y=" << y[i] << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace perflab::kernels::cpu
