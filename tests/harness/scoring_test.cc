// Scores on hand-worked values: the olympic mean (perflab's and MLPerf's
// per-benchmark average), gated medians and the RCP normalisation.
#include "harness/scoring.h"

#include <gtest/gtest.h>

namespace perflab {
namespace {

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

TEST(ScoreRuns, ThroughputIsTheMedianOnlyWhenEveryRunPassedItsGate) {
  std::vector<RunOutcome> runs = {{1, true, 0, 300, ""}, {2, true, 0, 100, ""}, {3, true, 0, 200, ""}};
  Score s = score_runs(runs, RunMode::kThroughput);
  ASSERT_TRUE(s.value);
  EXPECT_DOUBLE_EQ(*s.value, 200);
  EXPECT_EQ(s.method, "median of 3");
  runs[1] = {2, false, 0, 100, "loss is NaN"};
  s = score_runs(runs, RunMode::kThroughput);
  EXPECT_FALSE(s.value);
  EXPECT_EQ(s.reason, "seed 2: loss is NaN");
}

TEST(ScoreRuns, TimeToTrainIsTheOlympicMeanWithFailuresAsTheSlowest) {
  const std::vector<RunOutcome> runs = {
      {1, true, 10, 0, ""}, {2, false, 1, 0, "no target"}, {3, true, 30, 0, ""}, {4, true, 20, 0, ""}};
  Score s = score_runs(runs, RunMode::kTimeToTrain);
  ASSERT_TRUE(s.value);
  EXPECT_DOUBLE_EQ(*s.value, 25);  // The failed run's 1 s is not a time: it is the slowest.
}

TEST(MedianPassingThroughput, CountsOnlyRunsThatPassed) {
  const std::vector<RunOutcome> runs = {
      {1, true, 0, 100, ""}, {2, false, 0, 1e9, "diverged"}, {3, true, 0, 300, ""}};
  ASSERT_TRUE(median_passing_throughput(runs));
  EXPECT_DOUBLE_EQ(*median_passing_throughput(runs), 200);
  EXPECT_FALSE(median_passing_throughput({{1, false, 0, 100, "diverged"}}));
  EXPECT_FALSE(median_passing_throughput({}));
}

TEST(MlperfOlympicAverage, DropsPerBenchmarkWithFailuresAsTheSlowest) {
  EXPECT_DOUBLE_EQ(*mlperf_olympic_average({5, 1, 3, 2, 4}, 0, 1), 3);
  EXPECT_DOUBLE_EQ(*mlperf_olympic_average({5, 1, 3, 2, 4}, 1, 1), 3.5);
  // unet3d's drop of 4: two failures take two of the slow end's four.
  EXPECT_DOUBLE_EQ(*mlperf_olympic_average({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2, 4), 6.5);
  EXPECT_FALSE(mlperf_olympic_average({5, 1, 3}, 2, 1));  // More failures than dropped scores.
  EXPECT_FALSE(mlperf_olympic_average({1, 2}, 0, 1));     // Nothing left.
}

TEST(RcpNormalization, ScalesOnlyASubmissionFasterThanTheReference) {
  EXPECT_DOUBLE_EQ(rcp_normalization_factor(1.1, 1.0), 1.1);
  EXPECT_DOUBLE_EQ(rcp_normalization_factor(0.9, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(*normalized_score(20.0, 1.25), 25.0);
  EXPECT_FALSE(normalized_score(std::nullopt, 1.25));
}

}  // namespace
}  // namespace perflab
