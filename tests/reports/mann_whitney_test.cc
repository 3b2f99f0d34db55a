// The U test against scipy.stats.mannwhitneyu (values computed with scipy
// 1.x, method="exact" or "asymptotic", alternative="two-sided").
#include "reports/mann_whitney.h"

#include <gtest/gtest.h>

namespace perflab::reports {
namespace {

TEST(MannWhitney, ExactSeparatedSamples) {
  // scipy: statistic 0.0, pvalue 0.007936507936507936 (= 2 / C(10, 5)).
  const UTest t = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_EQ(t.method, UTestMethod::kExact);
  EXPECT_DOUBLE_EQ(t.u, 0);
  EXPECT_NEAR(t.p_value, 0.007936507936507936, 1e-15);
  // Symmetric: swapping the samples gives U = n1 n2 and the same p.
  const UTest s = mann_whitney_u({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(s.u, 25);
  EXPECT_NEAR(s.p_value, t.p_value, 1e-15);
}

TEST(MannWhitney, ExactOverlappingSamples) {
  // scipy: statistic 6.0, pvalue 0.12554112554112554.
  const UTest t = mann_whitney_u({1.1, 2.5, 3.3, 4.2, 7.5}, {2.0, 6, 7, 8.5, 9, 10});
  EXPECT_EQ(t.method, UTestMethod::kExact);
  EXPECT_DOUBLE_EQ(t.u, 6);
  EXPECT_NEAR(t.p_value, 0.12554112554112554, 1e-12);
}

TEST(MannWhitney, NormalApproximationWithTies) {
  // scipy (asymptotic): statistic 4.5, pvalue 0.06414661873440437.
  const UTest t = mann_whitney_u({1, 2, 2, 3, 4}, {2, 3, 5, 6, 6, 7});
  EXPECT_EQ(t.method, UTestMethod::kNormal);
  EXPECT_DOUBLE_EQ(t.u, 4.5);
  EXPECT_NEAR(t.p_value, 0.06414661873440437, 1e-12);
}

TEST(MannWhitney, NormalApproximationForLargeSamples) {
  // x = 0..24, y = x + 5.5; scipy (asymptotic): statistic 190.0, pvalue 0.017925777357406476.
  std::vector<double> x, y;
  for (int i = 0; i < 25; ++i) {
    x.push_back(i);
    y.push_back(i + 5.5);
  }
  const UTest t = mann_whitney_u(x, y);
  EXPECT_EQ(t.method, UTestMethod::kNormal);
  EXPECT_DOUBLE_EQ(t.u, 190);
  EXPECT_NEAR(t.p_value, 0.017925777357406476, 1e-12);
}

TEST(MannWhitney, DegenerateInputs) {
  EXPECT_EQ(mann_whitney_u({}, {1, 2}).method, UTestMethod::kNone);
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1, 2}).p_value, 1);
  const UTest tied = mann_whitney_u({3, 3, 3}, {3, 3});
  EXPECT_DOUBLE_EQ(tied.p_value, 1);
}

TEST(MannWhitney, SmallestPValue) {
  EXPECT_NEAR(smallest_u_p_value(3, 3), 0.1, 1e-12);         // 2 / 20
  EXPECT_NEAR(smallest_u_p_value(4, 4), 2.0 / 70, 1e-12);    // first size below 0.05
  EXPECT_NEAR(smallest_u_p_value(5, 5), 0.007936507936507936, 1e-12);
  EXPECT_DOUBLE_EQ(smallest_u_p_value(0, 5), 1);
}

}  // namespace
}  // namespace perflab::reports
