// MLLOG reading (outside input: bad lines counted, never thrown) and the
// summarizer's scoring rules on hand-worked values.
#include "reports/mlperf_results.h"

#include <gtest/gtest.h>

namespace perflab::reports {
namespace {

std::string event(double t, const std::string& key, const std::string& value, const std::string& meta = "{}") {
  return "[1,0]<stdout>: :::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(t) + ", \"event_type\": "
         "\"POINT_IN_TIME\", \"key\": \"" + key + "\", \"value\": " + value + ", \"metadata\": " + meta + "}\n";
}

TEST(MllogReader, ReadsEventsAndCountsBadLines) {
  const std::string text = "plain output\n" + event(1000, "run_start", "null") +
                           ":::MLLOG {not json\n:::MLLOG {\"key\": \"x\", \"time_ms\": 1, \"value\": 1}\n" +
                           event(61000, "run_stop", "null", "{\"status\": \"success\"}");
  const MllogFile f = parse_mllog(text);
  ASSERT_EQ(f.events.size(), 2u);
  EXPECT_EQ(f.events[0].key, "run_start");
  EXPECT_EQ(f.events[0].line, 2u);
  EXPECT_EQ(f.bad_lines, 2u);
  EXPECT_EQ(f.first_problem, "line 3: not a JSON object after :::MLLOG");
  EXPECT_EQ(parse_mllog("").events.size(), 0u);
  EXPECT_EQ(parse_mllog(":::MLLOG ").bad_lines, 1u);
}

TEST(MlperfResults, RunMinutesStatusAndConvergence) {
  const std::string good = event(0, "submission_benchmark", "\"dlrm_dcnv2\"") + event(0, "global_batch_size", "55296") +
                           event(1000, "run_start", "null") +
                           event(2000, "eval_accuracy", "0.8", "{\"epoch_num\": 0.35004}") +
                           event(3000, "eval_accuracy", "0.81", "{\"epoch_num\": 0.70004}") +
                           event(1000 + 90 * 60000, "run_stop", "null", "{\"status\": \"success\"}");
  const MlperfRun r = mlperf_run(parse_mllog(good), "result_0.txt", "folder_name");
  EXPECT_TRUE(r.ok) << r.problem;
  EXPECT_DOUBLE_EQ(r.minutes, 90);
  EXPECT_EQ(r.benchmark, "dlrm_dcnv2");
  EXPECT_EQ(r.global_batch_size, 55296);
  EXPECT_DOUBLE_EQ(*r.converged_at, 0.7);  // The last eval before run_stop, rounded to 3 decimals.

  const MlperfRun aborted = mlperf_run(parse_mllog(event(0, "run_start", "null") +
                                                   event(60000, "run_stop", "null", "{\"status\": \"aborted\"}")),
                                       "r.txt", "resnet");
  EXPECT_FALSE(aborted.ok);
  EXPECT_EQ(aborted.problem, "run_stop status 'aborted'");
  EXPECT_EQ(aborted.benchmark, "resnet");
  EXPECT_EQ(mlperf_run(parse_mllog(event(0, "run_start", "null")), "r.txt", "b").problem, "no run_stop");
}

TEST(MlperfResults, SummarizerOlympicAverage) {
  // 5 runs, none failed: drop 1 from each end -> mean of 2, 3, 4.
  EXPECT_DOUBLE_EQ(*mlperf_olympic_average({5, 1, 3, 2, 4}, 0, 1), 3);
  // One failure is the slowest already: drop the fastest only -> mean of 2, 3, 4, 5.
  EXPECT_DOUBLE_EQ(*mlperf_olympic_average({5, 1, 3, 2, 4}, 1, 1), 3.5);
  EXPECT_FALSE(mlperf_olympic_average({5, 1, 3}, 2, 1));  // More failures than dropped scores.
  // unet3d drops 4: with 2 failures, 4 fastest and 2 slowest of 10 go.
  EXPECT_EQ(mlperf_dropped_scores("unet3d"), 4u);
  EXPECT_EQ(mlperf_dropped_scores("dlrm_dcnv2"), 1u);
  EXPECT_DOUBLE_EQ(*mlperf_olympic_average({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2, 4), 6.5);
  EXPECT_FALSE(mlperf_olympic_average({1, 2}, 0, 1));
}

}  // namespace
}  // namespace perflab::reports
