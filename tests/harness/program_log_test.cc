// An external program's log -> facts -> verdict (harness/program_log.h):
// every reason a run fails, in the order the header states, and the times,
// counts and throughput read from the log.
#include "harness/program_log.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace perflab {
namespace {

std::string line(const std::string& key, const std::string& value, double ms, const std::string& metadata = "") {
  return ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(ms) + ", \"event_type\": \"POINT_IN_TIME\", "
         "\"key\": \"" + key + "\", \"value\": " + value + ", \"metadata\": {" + metadata + "}}\n";
}

/// A complete log: init 2 s, run 10 s, evals at epochs 1 and 2 (0.6, 0.8).
std::string good_log(const std::string& status = "success") {
  return line("init_start", "null", 1000) + line("submission_benchmark", "\"mine\"", 1000) +
         line("submission_org", "\"us\"", 1000) + line("global_batch_size", "64", 1000) +
         line("train_samples", "1000", 1000) + line("eval_samples", "100", 1000) +
         line("lowest_numerical_precision_in_linear", "\"bf16\"", 1000) + line("init_stop", "null", 3000) +
         line("run_start", "null", 3000) + line("train_loss", "0.7", 6000, "\"epoch_num\": 1") +
         line("eval_accuracy", "0.6", 7000, "\"epoch_num\": 1") + line("train_loss", "0.5", 11000, "\"epoch_num\": 2") +
         line("eval_accuracy", "0.8", 12000, "\"epoch_num\": 2") +
         line("run_stop", "null", 13000, "\"status\": \"" + status + "\"");
}

ProcessOutcome exited(int status = 0) {
  ProcessOutcome p;
  p.exit_status = status;
  p.wall_s = 15;
  return p;
}

ProgramVerdict judge(const std::string& log, const ProcessOutcome& p = exited(), std::optional<double> target = {},
                     const ComplianceOutcome& compliance = {"passed", ""}) {
  ProgramQuality q;
  q.target = target;
  return judge_program_run(program_log_facts(parse_mllog(log), q.key), p, q, compliance);
}

TEST(ProgramLog, FactsComeFromTheLog) {
  const ProgramLogFacts f = program_log_facts(parse_mllog(good_log()), "eval_accuracy");
  EXPECT_EQ(f.global_batch_size, 64);
  EXPECT_EQ(f.train_samples, 1000);
  EXPECT_EQ(f.eval_samples, 100);
  EXPECT_EQ(f.precision, "bf16");
  EXPECT_EQ(f.run_stop_status, "success");
  EXPECT_EQ(f.submission, (nlohmann::json{{"submission_benchmark", "mine"}, {"submission_org", "us"}}));
  ASSERT_EQ(f.curve.size(), 2u);
  EXPECT_DOUBLE_EQ(f.curve[1].value, 0.8);
  EXPECT_DOUBLE_EQ(f.curve[1].epoch, 2);
  EXPECT_EQ(f.curve[1].samples, 2000);  // epochs x the samples the log states an epoch has
  EXPECT_DOUBLE_EQ(f.curve[1].train_loss, 0.5);  // the last loss before the evaluation
  EXPECT_DOUBLE_EQ(f.curve[1].elapsed_s, 9);     // from run_start
  EXPECT_DOUBLE_EQ(*f.epochs, 2);
  EXPECT_EQ(f.samples, 2000);
}

TEST(ProgramLog, ASuccessfulRunIsTimedByItsLog) {
  const ProgramVerdict v = judge(good_log(), exited(), 0.75);
  EXPECT_TRUE(v.success) << v.reason;
  EXPECT_DOUBLE_EQ(v.time_to_train_s, 10);  // run_start .. run_stop, not the process's 15 s
  EXPECT_DOUBLE_EQ(v.init_s, 2);
  EXPECT_DOUBLE_EQ(v.throughput, 200);  // 2000 samples over 10 s: the log states no throughput
  EXPECT_EQ(v.throughput_source, "samples over run time");
  EXPECT_EQ(v.reason, "eval_accuracy 0.8 >= target 0.75");
}

TEST(ProgramLog, AStatedThroughputIsTaken) {
  const std::string log = good_log() + line("tracked_stats", "{\"throughput\": 900}", 8000) +
                          line("tracked_stats", "{\"throughput\": 1100}", 9000) + line("throughput", "1000", 9500);
  const ProgramVerdict v = judge(log);
  EXPECT_DOUBLE_EQ(v.throughput, 1000);  // the median of what it states
  EXPECT_EQ(v.throughput_source, "log: throughput");
}

TEST(ProgramLog, EveryFailureHasItsReasonInOrder) {
  ProcessOutcome timed_out = exited();
  timed_out.timed_out = true;
  timed_out.signal = 15;
  EXPECT_EQ(judge(good_log(), timed_out).reason.rfind("the program timed out after 15 s", 0), 0u);
  ProcessOutcome crashed = exited();
  crashed.signal = 11;
  EXPECT_EQ(judge(good_log(), crashed).reason, "the program was killed by SIGSEGV");
  EXPECT_EQ(judge(good_log(), exited(3)).reason, "the program exited with status 3");
  EXPECT_EQ(judge("no log here\n").reason, "the program wrote no :::MLLOG line");
  EXPECT_EQ(judge(":::MLLOG {oops\n").reason.rfind("its log has no valid :::MLLOG line (line 1:", 0), 0u);
  EXPECT_EQ(judge(line("init_start", "null", 1)).reason, "its log has no run_start");
  const std::string cut = good_log().substr(0, good_log().rfind(":::MLLOG")) + ":::MLLOG {\"key\": \"run_st";
  EXPECT_EQ(judge(cut).reason.rfind("its log has no run_stop and a bad line (line 14", 0), 0u) << judge(cut).reason;
  EXPECT_EQ(judge(good_log() + line("run_stop", "null", 14000, "\"status\": \"success\"")).reason,
            "its log has 2 run_stop lines (MLPerf allows one)");
  EXPECT_EQ(judge(good_log() + ":::MLLOG []\n").reason.rfind("its log has 1 bad :::MLLOG line(s)", 0), 0u);
  EXPECT_EQ(judge(good_log("aborted")).reason, "its run_stop status is aborted");
  EXPECT_EQ(judge(good_log(), exited(), 0.9).reason, "target eval_accuracy >= 0.9 not reached (best 0.8)");
  EXPECT_EQ(judge(good_log(), exited(), 0.7, {"failed", "ERROR: x"}).reason,
            "its log failed the compliance check: ERROR: x");
  // A failed run's time is the process's (no run_stop to time it by).
  EXPECT_DOUBLE_EQ(judge(line("run_start", "null", 1)).time_to_train_s, 15);
  ProgramLogFacts missing;
  missing.file_missing = true;
  EXPECT_EQ(judge_program_run(missing, exited(), {}, {}).reason, "the program wrote no log file");
}

TEST(ProgramLog, ALowerIsBetterTargetIsReachedFromBelow) {
  ProgramQuality q;
  q.key = "eval_loss";
  q.target = 0.3;
  q.higher_is_better = false;
  const std::string log = line("run_start", "null", 0) + line("eval_loss", "0.5", 10) + line("eval_loss", "0.25", 20) +
                          line("run_stop", "null", 30, "\"status\": \"success\"");
  const ProgramVerdict v = judge_program_run(program_log_facts(parse_mllog(log), q.key), exited(), q, {"passed", ""});
  EXPECT_TRUE(v.success) << v.reason;
  EXPECT_EQ(v.reason, "eval_loss 0.25 <= target 0.3");
}

}  // namespace
}  // namespace perflab
