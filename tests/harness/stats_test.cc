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

TEST(OlympicMean, DropsFastestAndSlowest) {
  // 10, 20, 30, 100, 5: drop 5 and 100 -> mean(10, 20, 30) = 20.
  Score s = olympic_mean({10.0, 20.0, 30.0, 100.0, 5.0});
  ASSERT_TRUE(s.value);
  EXPECT_DOUBLE_EQ(*s.value, 20);
  EXPECT_EQ(s.method, "olympic mean of 5");
}

TEST(OlympicMean, OneFailureCountsAsSlowest) {
  // Failure is the slowest; drop it and the fastest (10): mean(20, 30) = 25.
  Score s = olympic_mean({10.0, std::nullopt, 30.0, 20.0});
  ASSERT_TRUE(s.value);
  EXPECT_DOUBLE_EQ(*s.value, 25);
}

TEST(OlympicMean, TwoFailuresGiveNoScore) {
  Score s = olympic_mean({10.0, std::nullopt, std::nullopt, 20.0, 30.0});
  EXPECT_FALSE(s.value);
  EXPECT_NE(s.reason.find("2 of 5 runs failed"), std::string::npos) << s.reason;
}

TEST(OlympicMean, ThreeRunsKeepsTheMiddle) {
  Score s = olympic_mean({3.0, 1.0, 2.0});
  ASSERT_TRUE(s.value);
  EXPECT_DOUBLE_EQ(*s.value, 2);
}

TEST(OlympicMean, FewerThanThreeRunsUsesThePlainMean) {
  Score s = olympic_mean({3.0, 1.0});
  ASSERT_TRUE(s.value);
  EXPECT_DOUBLE_EQ(*s.value, 2);
  EXPECT_NE(s.method.find("needs 3"), std::string::npos);
  EXPECT_FALSE(olympic_mean({std::nullopt}).value);
  EXPECT_FALSE(olympic_mean({}).value);
}

}  // namespace
}  // namespace perflab
