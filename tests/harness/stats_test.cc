// Hand-worked checks of the statistics the reports rely on.
#include "harness/stats.h"

#include <cmath>

#include <gtest/gtest.h>

namespace perflab {
namespace {

TEST(Percentile, InterpolatesBetweenOrderStatistics) {
  // Sorted: 1 2 3 4; rank for p = 50 is 1.5 -> 2.5; p = 90 -> rank 2.7 -> 3.7.
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
}

TEST(Summarize, MeanMinMax) {
  Summary s = summarize({2, 4, 9});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.p50, 4);
}

}  // namespace
}  // namespace perflab
