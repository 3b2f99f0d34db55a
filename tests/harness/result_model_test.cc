// The typed result reader on hand-built documents: a version-1 file (no
// batch_param, no execution, training plan always present), a version-2
// throughput file (null training fields, an execution record, interrupted),
// and malformed documents that get one line naming the file.
#include "reports/result_view.h"

#include <gtest/gtest.h>

#include "harness/error.h"
#include "tests/reports/result_builder.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

json v2_throughput() {
  json doc = testing::make_result({}, testing::runs_with_times({1.5}));
  doc["schema_version"] = 2;
  doc["kind"] = "throughput";
  doc["interrupted"] = "SIGTERM";
  doc["spec"]["workload"] = "transducer";
  doc["spec"]["params"] = {{"batch", 64}};
  doc["spec"]["mode"] = "throughput";
  doc["spec"]["iterations"] = 50;
  doc["spec"]["batch_param"] = "batch";
  doc["spec"]["learning_rate_param"] = nullptr;
  for (const char* k : {"train_samples", "eval_samples", "iterations_per_epoch", "max_epochs", "eval_interval_epochs"}) {
    doc["plan"][k] = nullptr;
  }
  doc["plan"]["sample_unit"] = "sequences";
  doc["runs"][0]["epochs"] = nullptr;
  doc["runs"][0]["execution"] = {
      {"cuda_graphs", {{"used", true}, {"captured", 4}, {"replayed", 96}, {"note", "in use"}}},
      {"host_syncs_per_iteration", {{"min", 0}, {"max", 0}, {"expected", 0}}}};
  doc["score"] = {{"time_to_train_s", nullptr}, {"throughput_samples_per_s", 1234.5}, {"method", "median of 1"},
                  {"reason", ""}};
  return doc;
}

TEST(ResultView, ReadsVersionOne) {
  testing::FakeSpec spec;
  spec.params = {{"batch_size", 512}, {"learning_rate", 0.5}};
  const ResultView v = parse_result(testing::make_result(spec, testing::runs_with_times({10, 12})), "/r/result.json");
  EXPECT_EQ(v.schema_version, 1);
  EXPECT_EQ(v.kind, RunMode::kTimeToTrain);
  EXPECT_FALSE(v.throughput());
  EXPECT_EQ(v.spec.workload, "dlrm");
  EXPECT_EQ(v.spec.batch_param, "batch_size");  // derived for version 1
  EXPECT_EQ(v.spec.learning_rate_param, "learning_rate");
  EXPECT_EQ(v.spec.param_number("batch_size"), 512);
  EXPECT_EQ(v.spec.mode, RunMode::kTimeToTrain);  // version-1 files before modes
  ASSERT_TRUE(v.plan.iterations_per_epoch);
  EXPECT_EQ(v.plan.global_batch_size, 512);
  EXPECT_EQ(v.plan.sample_unit, "samples");
  ASSERT_EQ(v.runs.size(), 2u);
  EXPECT_TRUE(v.runs[0].success());
  EXPECT_DOUBLE_EQ(v.runs[1].time_to_train_s, 12);
  EXPECT_FALSE(v.runs[0].execution);
  EXPECT_EQ(v.quality.metric, "AUC");
  EXPECT_EQ(v.environment_text("/cpu_model"), "test cpu");
  EXPECT_EQ(v.environment_text("/cuda/devices/0/name"), "");
  EXPECT_TRUE(v.interrupted.empty());
  EXPECT_EQ(v.path, "/r/result.json");
}

TEST(ResultView, ReadsVersionTwoThroughput) {
  const ResultView v = parse_result(v2_throughput());
  EXPECT_EQ(v.schema_version, 2);
  EXPECT_TRUE(v.throughput());
  EXPECT_EQ(v.spec.batch_param, "batch");
  EXPECT_EQ(v.spec.learning_rate_param, "");
  EXPECT_FALSE(v.plan.train_samples);
  EXPECT_FALSE(v.plan.iterations_per_epoch);
  EXPECT_EQ(v.plan.sample_unit, "sequences");
  EXPECT_FALSE(v.runs[0].epochs);
  ASSERT_TRUE(v.runs[0].execution);
  EXPECT_TRUE(v.runs[0].execution->graphs_used);
  EXPECT_EQ(v.runs[0].execution->graph_replays, 96);
  EXPECT_EQ(v.runs[0].execution->syncs_expected, 0);
  EXPECT_EQ(v.interrupted, "SIGTERM");
  EXPECT_EQ(v.score_value(), 1234.5);
  EXPECT_FALSE(v.score.time_to_train_s);
}

std::string error_of(const json& doc) {
  try {
    parse_result(doc, "/r/x/result.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResultView, MalformedDocumentsGetOneLineNamingTheFile) {
  json future = v2_throughput();
  future["schema_version"] = 3;
  EXPECT_EQ(error_of(future), "/r/x/result.json: not a perflab result: schema_version 3 (this perflab reads 1 to 2)");
  json no_runs = v2_throughput();
  no_runs.erase("runs");
  EXPECT_EQ(error_of(no_runs), "/r/x/result.json: not a perflab result: missing 'runs'");
  json bad_type = v2_throughput();
  bad_type["plan"]["global_batch_size"] = "many";
  EXPECT_EQ(error_of(bad_type), "/r/x/result.json: not a perflab result: plan.global_batch_size has the wrong type (string)");
  json bad_exec = v2_throughput();
  bad_exec["runs"][0]["execution"]["cuda_graphs"]["used"] = "yes";
  EXPECT_EQ(error_of(bad_exec),
            "/r/x/result.json: not a perflab result: execution.cuda_graphs.used has the wrong type (string)");
}

// Numbers a hand-edited or damaged file may hold: each is one line, never a
// cast that is undefined (1e300 to an integer) or wraps (2^32 + 2 read as
// version 2). tests/fuzz/result_fuzz.cc, run on the code before this
// check, hit the summary count (4e+94 cast to size_t) in 156 executions.
TEST(ResultView, NumbersOutOfRangeAreOneLineNotACrash) {
  json wrapped = v2_throughput();
  wrapped["schema_version"] = 4294967298;
  EXPECT_EQ(error_of(wrapped),
            "/r/x/result.json: not a perflab result: schema_version 4294967298 (this perflab reads 1 to 2)");
  json huge = v2_throughput();
  huge["runs"][0]["iterations"] = 1e300;
  EXPECT_EQ(error_of(huge), "/r/x/result.json: not a perflab result: run.iterations is out of range or not an "
                            "integer (1e+300)");
  json negative_n = v2_throughput();
  negative_n["runs"][0]["iteration_ms"]["n"] = -1;
  EXPECT_EQ(error_of(negative_n),
            "/r/x/result.json: not a perflab result: summary.n is out of range or not an integer (-1)");
  json threads = v2_throughput();
  threads["spec"]["threads"] = 1e300;
  EXPECT_EQ(error_of(threads),
            "/r/x/result.json: not a perflab result: spec.threads is 1e+300, not a count");
  json fraction = v2_throughput();
  fraction["plan"]["global_batch_size"] = 2.5;
  EXPECT_EQ(error_of(fraction), "/r/x/result.json: not a perflab result: plan.global_batch_size is out of range "
                                "or not an integer (2.5)");
  json integral = v2_throughput();
  integral["runs"][0]["iterations"] = 5.0;  // an integral float is the integer
  EXPECT_EQ(parse_result(integral).runs[0].iterations, 5);
}

}  // namespace
}  // namespace perflab::reports
