// Tests for reports/statistics: t quantiles and cdf against tabulated values,
// and a confidence interval worked by hand.
#include "reports/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"

namespace perflab::reports {
namespace {

TEST(StudentT, QuantilesMatchTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.95, 9), 1.833113, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706205, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.95, 2), 2.919986, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.995, 30), 2.749996, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.5, 7), 0.0, 1e-12);
  EXPECT_NEAR(student_t_quantile(0.05, 9), -1.833113, 1e-6);
}

TEST(StudentT, CdfInvertsQuantile) {
  EXPECT_NEAR(student_t_cdf(2.776445, 4), 0.975, 1e-7);
  EXPECT_NEAR(student_t_cdf(0, 3), 0.5, 1e-12);
  EXPECT_NEAR(student_t_cdf(-1.833113, 9), 0.05, 1e-7);
  EXPECT_EQ(student_t_cdf(std::numeric_limits<double>::infinity(), 3), 1.0);
}

TEST(StudentT, RejectsBadArguments) {
  EXPECT_THROW(student_t_quantile(0, 3), UsageError);
  EXPECT_THROW(student_t_quantile(1, 3), UsageError);
  EXPECT_THROW(student_t_quantile(0.5, 0), UsageError);
  EXPECT_THROW(student_t_cdf(1, -1), UsageError);
}

TEST(Statistics, MeanAndStddev) {
  EXPECT_EQ(mean({}), 0);
  EXPECT_EQ(sample_stddev({5}), 0);
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum to 32, s^2 = 32/7.
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(v), 5);
  EXPECT_NEAR(sample_stddev(v), std::sqrt(32.0 / 7.0), 1e-12);
}

TEST(Statistics, ConfidenceIntervalWorkedByHand) {
  // 10, 12, 14, 16, 18: mean 14, s^2 = (16+4+0+4+16)/4 = 10, s/sqrt(5) = sqrt(2),
  // half width = t_{0.975,4} * sqrt(2) = 2.776445 * 1.414214 = 3.926487.
  const MeanCi ci = mean_confidence_interval({10, 12, 14, 16, 18});
  EXPECT_EQ(ci.n, 5u);
  EXPECT_DOUBLE_EQ(ci.mean, 14);
  EXPECT_NEAR(ci.low, 14 - 3.926487, 1e-5);
  EXPECT_NEAR(ci.high, 14 + 3.926487, 1e-5);
}

TEST(Statistics, ConfidenceIntervalOfOneValueIsAPoint) {
  const MeanCi ci = mean_confidence_interval({3.5});
  EXPECT_EQ(ci.n, 1u);
  EXPECT_EQ(ci.low, 3.5);
  EXPECT_EQ(ci.high, 3.5);
  const MeanCi empty = mean_confidence_interval({});
  EXPECT_EQ(empty.n, 0u);
  EXPECT_THROW(mean_confidence_interval({1, 2}, 1.5), UsageError);
}

}  // namespace
}  // namespace perflab::reports
