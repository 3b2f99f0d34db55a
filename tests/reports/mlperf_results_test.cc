// MLLOG reading (outside input: bad lines counted, never thrown) and the
// summarizer's scoring rules on hand-worked values.
#include "reports/mlperf_results.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

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

// Hostile logs: each is a failed run with its reason, never an exception or a
// crash (issue 24: a value nested 50,000 levels overflowed the stack; a
// run_stop before run_start was scored as -1 minute; a status array threw).
TEST(MlperfResults, HostileLogsAreFailedRunsWithTheReason) {
  const std::string start = event(1000, "run_start", "null");
  const std::string stop = event(61000, "run_stop", "null", "{\"status\": \"success\"}");
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "{\"a\":";
  deep += "1" + std::string(50000, '}');
  const MllogFile nested = parse_mllog(event(0, "submission_benchmark", deep) + start + stop);
  EXPECT_EQ(nested.first_problem, "line 1: JSON nested more than 100 levels deep");
  EXPECT_FALSE(mlperf_run(nested, "r.txt", "b").ok);

  const MllogFile long_line = parse_mllog(event(0, "note", "\"" + std::string(2 << 20, 'x') + "\"") + start + stop);
  EXPECT_EQ(long_line.first_problem, "line 1: a line longer than 1 MiB");

  const MlperfRun backwards = mlperf_run(
      parse_mllog(event(61000, "run_start", "null") + event(1000, "run_stop", "null", "{\"status\": \"success\"}")),
      "r.txt", "b");
  EXPECT_FALSE(backwards.ok);
  EXPECT_EQ(backwards.problem, "run_stop (line 2, time_ms 1000) comes before run_start (line 1, time_ms 61000)");

  const MlperfRun array_status =
      mlperf_run(parse_mllog(start + event(61000, "run_stop", "null", "{\"status\": [\"success\"]}")), "r.txt", "b");
  EXPECT_FALSE(array_status.ok);
  EXPECT_EQ(array_status.problem, "line 2: run_stop's metadata.status is array, not a string");
}

TEST(MlperfResults, DropsPerBenchmark) {
  // The average itself is harness/scoring's (scoring_test); the drop is the benchmark's.
  EXPECT_EQ(mlperf_dropped_scores("unet3d"), 4u);
  EXPECT_EQ(mlperf_dropped_scores("dlrm_dcnv2"), 1u);
}

// Without --rcps: mlperf_logging's own RCPs, for the version the results'
// path names, else the newest that has the benchmark (a stand-in
// rcp_checker folder: training_4.0.0 and 5.1.0 have dlrm_dcnv2, 6.1.0 not).
TEST(MlperfResults, DefaultRcpsFollowThePathsVersionElseTheNewest) {
  namespace fs = std::filesystem;
  const fs::path checker = fs::temp_directory_path() / ("perflab_rcp_checker_" + std::to_string(::getpid()));
  fs::remove_all(checker);
  for (const char* v : {"training_4.0.0", "training_5.1.0", "training_6.1.0", "hpc_3.0.0"}) {
    fs::create_directories(checker / v);
  }
  for (const char* v : {"training_4.0.0", "training_5.1.0", "hpc_3.0.0"}) {
    std::ofstream(checker / v / "rcps_dlrm_dcnv2.json") << "{}";
  }
  const RcpSource named = default_rcps_in(checker, "/data/training_results_v4.0/NVIDIA/results/sys/dlrm_dcnv2/result_0.txt",
                                          "dlrm_dcnv2");
  EXPECT_EQ(named.path, checker / "training_4.0.0");
  EXPECT_NE(named.note.find("training_4.0.0 RCPs (the version the results' path names)"), std::string::npos) << named.note;
  const RcpSource newest = default_rcps_in(checker, "/data/sub/results/sys/dlrm_dcnv2/result_0.txt", "dlrm_dcnv2");
  EXPECT_EQ(newest.path, checker / "training_5.1.0") << "6.1.0 has no dlrm_dcnv2; hpc is not training";
  EXPECT_NE(newest.note.find("the newest for dlrm_dcnv2"), std::string::npos) << newest.note;
  // A version that has no RCPs for the benchmark normalises nothing, as its
  // summarizer; a version the package does not have falls back to the newest.
  const RcpSource lacking = default_rcps_in(checker, "/x/training_results_v6.1/r.txt", "dlrm_dcnv2");
  EXPECT_TRUE(lacking.path.empty());
  EXPECT_NE(lacking.note.find("training_6.1.0 (the version the results' path names) has no RCPs for dlrm_dcnv2"),
            std::string::npos) << lacking.note;
  const RcpSource missing = default_rcps_in(checker, "/x/training_results_v9.9/r.txt", "dlrm_dcnv2");
  EXPECT_EQ(missing.path, checker / "training_5.1.0");
  EXPECT_NE(missing.note.find("has no training_9.9.0, which the path names"), std::string::npos) << missing.note;
  // A results repository's version wins over a folder further in that looks like one.
  EXPECT_EQ(default_rcps_in(checker, "/d/training_results_v4.0/NVIDIA/tools_v5.1/r.txt", "dlrm_dcnv2").path,
            checker / "training_4.0.0");
  const RcpSource none = default_rcps_in(checker, "/x/r.txt", "unet3d");
  EXPECT_TRUE(none.path.empty());
  EXPECT_NE(none.note.find("has no RCPs for unet3d"), std::string::npos) << none.note;
  fs::remove_all(checker);
}

}  // namespace
}  // namespace perflab::reports
