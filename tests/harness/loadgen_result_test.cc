// LoadGen's detail log read back (harness/loadgen_result.h): the scenario's
// throughput key, the verdict and the constraints behind it, the latency
// distribution; a missing file or an unfinished test in one line. With
// LoadGen built (scripts/setup fetches it), real LoadGen tests of a
// trivial system under test, Offline, Server and SingleStream, are read the
// same way: the reader is checked against the library's own output, not
// only against lines written here.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/loadgen_result.h"
#include "tests/reports/result_builder.h"

#if PERFLAB_HAVE_LOADGEN
#include <loadgen.h>
#include <query_sample_library.h>
#include <system_under_test.h>
#include <test_settings.h>
#endif

namespace perflab {
namespace {

namespace fs = std::filesystem;

/// A fresh folder under the temporary directory, removed with everything
/// in it when the test program ends (the real LoadGen tests write their
/// logs there).
fs::path fresh_dir(const std::string& name) {
  static std::vector<std::unique_ptr<testing::TempDir>> made;
  made.push_back(std::make_unique<testing::TempDir>("loadgen_" + name));
  return made.back()->path();
}

/// One LoadGen-style line (its fields: key, value, time_ms, namespace,
/// event_type, metadata).
std::string line(const std::string& key, const std::string& value_json) {
  return ":::MLLOG {\"key\": \"" + key + "\", \"value\": " + value_json +
         ", \"time_ms\": 1.5, \"namespace\": \"mlperf::logging\", \"event_type\": \"POINT_IN_TIME\", "
         "\"metadata\": {\"is_error\": false, \"is_warning\": false, \"file\": \"loadgen.cc\", \"line_no\": 1}}\n";
}

fs::path write_log(const std::string& name, const std::string& text) {
  const fs::path path = fresh_dir(name) / "mlperf_log_detail.txt";
  std::ofstream(path) << text;
  return path;
}

std::string percentiles(int first) {
  std::string s;
  const char* names[] = {"50.00", "90.00", "95.00", "97.00", "99.00", "99.90"};
  for (int i = 0; i < 6; ++i) {
    s += line(std::string("result_") + names[i] + "_percentile_latency_ns", std::to_string(first + 10 * i));
  }
  return s;
}

TEST(LoadgenResult, ServerLogGivesCompletedRateVerdictConstraintsAndPercentiles) {
  const fs::path path = write_log(
      "server", line("loadgen_version", "\"6.0.17 @ d6147c7eb7\"") + line("effective_scenario", "\"Server\"") +
                    line("effective_test_mode", "\"PerformanceOnly\"") + line("effective_target_qps", "2000") +
                    line("effective_target_latency_ns", "10000000") +
                    line("effective_target_latency_percentile", "0.99") + line("result_validity", "\"INVALID\"") +
                    line("result_perf_constraints_met", "true") + line("result_min_duration_met", "true") +
                    line("result_min_queries_met", "true") + line("early_stopping_met", "false") +
                    line("result_invalid_reason", "\"\"") +
                    line("early_stopping_result", "\" * Run unsuccessful.  * Processed 392 queries. \"") +
                    line("result_query_count", "392") + line("result_overlatency_query_count", "0") +
                    line("result_scheduled_samples_per_sec", "1946.97") +
                    line("result_completed_samples_per_sec", "1945.99") + line("result_min_latency_ns", "891") +
                    line("result_max_latency_ns", "153925") + line("result_mean_latency_ns", "72820") +
                    percentiles(100) + line("num_errors", "0"));
  const LoadgenOutcome o = read_loadgen_outcome(path);
  EXPECT_EQ(o.loadgen_version, "6.0.17 @ d6147c7eb7");
  EXPECT_EQ(o.scenario, "Server");
  EXPECT_EQ(o.mode, "PerformanceOnly");
  EXPECT_FALSE(o.valid());
  EXPECT_EQ(o.verdict, "INVALID");
  EXPECT_EQ(o.performance_constraints_met, true);
  EXPECT_EQ(o.early_stopping_met, false);
  EXPECT_EQ(o.early_stopping_detail, "* Run unsuccessful.  * Processed 392 queries.");
  ASSERT_TRUE(o.samples_per_second);
  EXPECT_DOUBLE_EQ(*o.samples_per_second, 1945.99);
  EXPECT_DOUBLE_EQ(o.scheduled_samples_per_second.value_or(0), 1946.97);
  EXPECT_EQ(o.query_count, 392);
  EXPECT_EQ(o.overlatency_query_count, 0);
  EXPECT_DOUBLE_EQ(o.target_latency_ns.value_or(0), 1e7);
  ASSERT_EQ(o.percentiles.size(), 6u);
  EXPECT_DOUBLE_EQ(o.percentiles.back().percentile, 99.9);
  EXPECT_DOUBLE_EQ(o.latency_at(99).value_or(0), 140);
  EXPECT_DOUBLE_EQ(o.latency_at(50).value_or(0), 100);
  EXPECT_FALSE(o.latency_at(42));
  const nlohmann::json j = loadgen_outcome_to_json(o);
  EXPECT_EQ(j["scenario"], "Server");
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["percentiles"].size(), 6u);
  EXPECT_FALSE(j.contains("early_stopping_latency_ss_ns"));
}

TEST(LoadgenResult, OfflineAndSingleStreamTakeTheirOwnThroughputKeys) {
  const fs::path offline = write_log(
      "offline", line("effective_scenario", "\"Offline\"") + line("result_validity", "\"VALID\"") +
                     line("result_invalid_reason", "\"ignored when valid\"") +
                     line("result_samples_per_second", "21020500") + line("result_query_count", "1") +
                     percentiles(7));
  const LoadgenOutcome o = read_loadgen_outcome(offline);
  EXPECT_TRUE(o.valid());
  EXPECT_EQ(o.invalid_reason, "");
  EXPECT_DOUBLE_EQ(o.samples_per_second.value_or(0), 21020500);
  EXPECT_FALSE(o.performance_constraints_met);

  const fs::path single = write_log(
      "single", line("effective_scenario", "\"SingleStream\"") + line("result_validity", "\"INVALID\"") +
                    line("result_invalid_reason", "\"Decrease the expected latency. \"") +
                    line("result_qps_with_loadgen_overhead", "1.1329e+06") +
                    line("result_qps_without_loadgen_overhead", "5e+06") + line("early_stopping_latency_ss", "110") +
                    line("early_stopping_latency_ms", "2073"));
  const LoadgenOutcome s = read_loadgen_outcome(single);
  EXPECT_EQ(s.invalid_reason, "Decrease the expected latency.");
  EXPECT_DOUBLE_EQ(s.samples_per_second.value_or(0), 1.1329e6);
  EXPECT_DOUBLE_EQ(s.early_stopping_latency_ss_ns.value_or(0), 110);
  EXPECT_DOUBLE_EQ(s.early_stopping_latency_ms_ns.value_or(0), 2073);
}

TEST(LoadgenResult, AMissingFileOrAnUnfinishedTestIsOneLineNamingTheFile) {
  const fs::path missing = fresh_dir("missing") / "mlperf_log_detail.txt";
  try {
    read_loadgen_outcome(missing);
    FAIL() << "a missing log was read";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
  const fs::path unfinished = write_log("unfinished", line("effective_scenario", "\"Offline\"") +
                                                          ":::MLLOG {\"key\": \"result_validi");
  try {
    read_loadgen_outcome(unfinished);
    FAIL() << "a log without a verdict was read";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("did not finish"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(LoadgenResult, AnAccuracyLogGivesEachResponsesSampleAndBytesOrOneLine) {
  const fs::path dir = fresh_dir("accuracy_log");
  std::ofstream(dir / "ok.json") << R"([{ "seq_id" : 0, "qsl_idx" : 229, "data" : "0080E542" },
{ "seq_id" : 1, "qsl_idx" : 3, "data" : "" }])";
  const std::vector<LoadgenResponse> r = read_loadgen_accuracy_log(dir / "ok.json");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].sample, 229u);
  EXPECT_EQ(r[0].data, (std::vector<unsigned char>{0x00, 0x80, 0xE5, 0x42}));
  EXPECT_EQ(r[0].as_float(), 114.75f);
  EXPECT_FALSE(r[1].as_float());
  for (const char* bad : {"{}", R"([{"qsl_idx": 1, "data": "0G"}])", R"([{"qsl_idx": -1, "data": "00"}])", "[1"}) {
    std::ofstream(dir / "bad.json") << bad;
    try {
      read_loadgen_accuracy_log(dir / "bad.json");
      FAIL() << "read: " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

#if PERFLAB_HAVE_LOADGEN

/// Answers every sample at once, on LoadGen's own thread.
class InstantSut : public mlperf::SystemUnderTest {
 public:
  const std::string& Name() override { return name_; }
  void IssueQuery(const std::vector<mlperf::QuerySample>& samples) override {
    std::vector<mlperf::QuerySampleResponse> responses;
    for (const mlperf::QuerySample& s : samples) responses.push_back({s.id, 0, 0});
    issued += static_cast<int64_t>(samples.size());
    mlperf::QuerySamplesComplete(responses.data(), responses.size());
  }
  void FlushQueries() override {}
  std::atomic<int64_t> issued{0};

 private:
  std::string name_ = "perflab-instant";
};

class SmallLibrary : public mlperf::QuerySampleLibrary {
 public:
  const std::string& Name() override { return name_; }
  size_t TotalSampleCount() override { return 256; }
  size_t PerformanceSampleCount() override { return 256; }
  void LoadSamplesToRam(const std::vector<mlperf::QuerySampleIndex>&) override {}
  void UnloadSamplesFromRam(const std::vector<mlperf::QuerySampleIndex>&) override {}

 private:
  std::string name_ = "perflab-small";
};

/// A short LoadGen test in `dir`; its detail log read back.
LoadgenOutcome run_loadgen(mlperf::TestScenario scenario, const fs::path& dir, int64_t* issued) {
  InstantSut sut;
  SmallLibrary qsl;
  mlperf::TestSettings settings;
  settings.scenario = scenario;
  settings.mode = mlperf::TestMode::PerformanceOnly;
  settings.min_duration_ms = 50;
  settings.max_duration_ms = 5000;
  settings.min_query_count = 64;
  settings.offline_expected_qps = 1000;
  settings.server_target_qps = 2000;
  settings.server_target_latency_ns = 50'000'000;
  settings.single_stream_expected_latency_ns = 100'000;
  mlperf::LogSettings log;
  log.log_output.outdir = dir.string();
  log.log_output.copy_summary_to_stdout = false;
  mlperf::StartTest(&sut, &qsl, settings, log);
  *issued = sut.issued;
  return read_loadgen_outcome(dir / "mlperf_log_detail.txt");
}

// What LoadGen measured is timing (a loaded machine may make a run
// INVALID), so the verdict is not asserted: that the reader gives back the
// scenario, LoadGen's version, the queries it counted, a throughput and an
// ascending latency distribution is, and that a VALID verdict comes with
// every constraint met.
TEST(LoadgenResult, ReadsWhatLoadGenItselfWroteInEachScenario) {
  const struct {
    mlperf::TestScenario scenario;
    const char* name;
  } cases[] = {{mlperf::TestScenario::Offline, "Offline"},
               {mlperf::TestScenario::Server, "Server"},
               {mlperf::TestScenario::SingleStream, "SingleStream"}};
  for (const auto& c : cases) {
    const fs::path dir = fresh_dir(std::string("real_") + c.name);
    int64_t issued = 0;
    const LoadgenOutcome o = run_loadgen(c.scenario, dir, &issued);
    EXPECT_EQ(o.scenario, c.name);
    EXPECT_EQ(o.mode, "PerformanceOnly");
    EXPECT_EQ(o.loadgen_version.rfind("6.0.17", 0), 0u) << o.loadgen_version;
    EXPECT_GE(o.query_count, 1) << c.name;
    EXPECT_GE(issued, o.query_count) << c.name;
    ASSERT_TRUE(o.samples_per_second) << c.name;
    EXPECT_GT(*o.samples_per_second, 0) << c.name;
    ASSERT_EQ(o.percentiles.size(), 6u) << c.name;
    for (size_t i = 1; i < o.percentiles.size(); ++i) {
      EXPECT_GT(o.percentiles[i].percentile, o.percentiles[i - 1].percentile) << c.name;
      EXPECT_GE(o.percentiles[i].latency_ns, o.percentiles[i - 1].latency_ns) << c.name;
    }
    EXPECT_LE(o.min_latency_ns, o.max_latency_ns) << c.name;
    if (o.valid()) {
      EXPECT_NE(o.min_duration_met, false) << c.name;
      EXPECT_NE(o.min_queries_met, false) << c.name;
      EXPECT_NE(o.early_stopping_met, false) << c.name;
      EXPECT_NE(o.performance_constraints_met, false) << c.name;
    }
    EXPECT_TRUE(fs::exists(dir / "mlperf_log_summary.txt")) << c.name;
    fs::remove_all(dir);
  }
}

#else

TEST(LoadgenResult, ReadsWhatLoadGenItselfWroteInEachScenario) {
  GTEST_SKIP() << "built without MLCommons LoadGen (scripts/setup fetches it into .deps/)";
}

#endif

}  // namespace
}  // namespace perflab
