// The counter-based generator: a pure function of (seed, stream, index),
// in range, and with the moments of its distribution (n = 10^6 fixed draws:
// the bounds are 5 standard errors, and the draws never change).
#include "base/counter_random.h"

#include <cmath>

#include <gtest/gtest.h>

namespace perflab {
namespace {

constexpr int kN = 1000000;

TEST(CounterRandom, AValueDependsOnlyOnSeedStreamAndIndex) {
  EXPECT_EQ(counter_bits(7, 1, 12345), counter_bits(7, 1, 12345));
  EXPECT_NE(counter_bits(7, 1, 12345), counter_bits(7, 1, 12346));
  EXPECT_NE(counter_bits(7, 1, 12345), counter_bits(7, 2, 12345));
  EXPECT_NE(counter_bits(7, 1, 12345), counter_bits(8, 1, 12345));
  EXPECT_EQ(counter_normal(3, 4, 99), counter_normal(3, 4, 99));
}

TEST(CounterRandom, UniformIsInRangeWithMeanOneHalf) {
  double sum = 0;
  for (int i = 0; i < kN; ++i) {
    const double u = counter_uniform(2024, 1, static_cast<uint64_t>(i));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  // Standard error of the mean: sqrt(1/12 / n) = 2.9e-4.
  EXPECT_NEAR(sum / kN, 0.5, 5 * std::sqrt(1.0 / 12 / kN));
}

TEST(CounterRandom, NormalHasMeanZeroAndVarianceOne) {
  double sum = 0, squares = 0;
  for (int i = 0; i < kN; ++i) {
    const double x = counter_normal(2024, 1, static_cast<uint64_t>(i));
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    squares += x * x;
  }
  const double mean = sum / kN;
  // Standard errors: of the mean 1/sqrt(n); of the variance sqrt(2/n).
  EXPECT_NEAR(mean, 0.0, 5 / std::sqrt(kN));
  EXPECT_NEAR(squares / kN - mean * mean, 1.0, 5 * std::sqrt(2.0 / kN));
}

TEST(CounterRandom, ANormalIsOneHalfOfItsPair) {
  const NormalPair p = counter_normal_pair(5, 6, 21);
  EXPECT_EQ(counter_normal(5, 6, 42), p.first);
  EXPECT_EQ(counter_normal(5, 6, 43), p.second);
}

}  // namespace
}  // namespace perflab
