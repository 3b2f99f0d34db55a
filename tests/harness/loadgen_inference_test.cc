// LoadGen driving an engine through the harness (harness/inference_run.h):
// settings checked in one line before anything runs; with LoadGen built,
// Offline, Server (dynamic batches) and SingleStream tests of a toy engine
// answer every sample exactly once in batches no larger than asked, an
// AccuracyOnly run logs every sample's prediction (read back from LoadGen's
// mlperf_log_accuracy.json and compared), and an engine failure comes back
// after LoadGen finished. Nothing here asserts a time or a verdict: LoadGen
// measures, and a loaded machine only changes its numbers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>


#include <nlohmann/json.hpp>

#include "base/error.h"
#include "harness/inference_run.h"

namespace perflab {
namespace {

namespace fs = std::filesystem;

TEST(InferenceSettings, EachBadSettingIsOneLineNamingIt) {
  EXPECT_EQ(check_inference_settings(InferenceSettings{}), "");
  const struct {
    void (*edit)(InferenceSettings&);
    const char* expect;
  } cases[] = {
      {[](InferenceSettings& s) { s.scenario = "multi"; }, "--scenario: 'multi' is not a valid value"},
      {[](InferenceSettings& s) { s.mode = "both"; }, "--loadgen-mode: 'both' is not a valid value"},
      {[](InferenceSettings& s) { s.target_qps = 0; }, "--target-qps must be a positive number"},
      {[](InferenceSettings& s) { s.latency_bound_ms = 0; }, "--latency-bound-ms must be a positive number"},
      {[](InferenceSettings& s) { s.latency_bound_ms = -1; }, "--latency-bound-ms must be a positive number"},
      {[](InferenceSettings& s) { s.min_duration_ms = -1; }, "--min-duration-ms must be at least 0"},
      {[](InferenceSettings& s) { s.min_query_count = 0; }, "--min-queries must be at least 1"},
      {[](InferenceSettings& s) { s.max_batch = 0; }, "--max-batch must be at least 1"},
      {[](InferenceSettings& s) { s.max_wait_ms = -0.5; }, "--max-wait-ms must be at least 0"},
  };
  for (const auto& c : cases) {
    InferenceSettings s;
    c.edit(s);
    const std::string why = check_inference_settings(s);
    EXPECT_NE(why.find(c.expect), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

/// prediction(i) = 0.5 i + 0.25; counts what it was asked.
class ToyEngine final : public InferenceEngine {
 public:
  explicit ToyEngine(size_t samples, bool fail = false) : samples_(samples), fail_(fail) {}
  std::string name() const override { return "perflab-toy"; }
  size_t total_samples() const override { return samples_; }
  size_t performance_samples() const override { return samples_; }
  void load(const std::vector<size_t>& indices) override { loaded += static_cast<int64_t>(indices.size()); }
  void predict(const std::vector<size_t>& indices, float* out) override {
    if (fail_) throw Error("toy engine: failing as asked");
    for (size_t i = 0; i < indices.size(); ++i) out[i] = 0.5f * static_cast<float>(indices[i]) + 0.25f;
    predicted += static_cast<int64_t>(indices.size());
    largest = std::max(largest, indices.size());
  }
  static float expected(size_t index) { return 0.5f * static_cast<float>(index) + 0.25f; }

  int64_t predicted = 0;
  int64_t loaded = 0;
  size_t largest = 0;

 private:
  size_t samples_;
  bool fail_;
};

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("perflab_inference_test_" + name + "_" +
                                                    std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

InferenceSettings quick(const std::string& scenario) {
  InferenceSettings s;
  s.scenario = scenario;
  s.target_qps = scenario == "server" ? 2000 : 20000;
  s.latency_bound_ms = scenario == "singlestream" ? 0.1 : 50;
  s.min_duration_ms = 50;
  s.min_query_count = 64;
  s.max_batch = 8;
  s.max_wait_ms = scenario == "server" ? 1 : 0;
  return s;
}

// LoadGen 6.0.17 quotes some trace values twice ("key":""name""): the repair
// quotes them once, escaping what is inside, and leaves every other line
// alone; the result is JSON.
TEST(LoadgenTrace, ARepairedTraceIsJson) {
  const fs::path dir = fresh_dir("trace");
  fs::create_directories(dir);
  const fs::path file = dir / "mlperf_log_trace.json";
  std::ofstream(file) << "{\"traceEvents\":[\n"
                         "{\"name\":\"IssueQuery\",\"ph\":\"X\",\"ts\":1.5,\"args\":{}},\n"
                         "{\"name\":\"LogDetail\",\"args\":{\"key\":\"\"loadgen_version\"\"}},\n"
                         "{\"name\":\"LogSummary\",\"args\":{\"message\":\"\"SUT \"name\" : a\\b, c\"\"}},\n"
                         "{\"name\":\"LastTrace\"}\n"
                         "]}\n";
  repair_loadgen_trace(file);
  std::ifstream in(file);
  const nlohmann::json doc = nlohmann::json::parse(in);  // throws when it is not JSON
  const nlohmann::json& ev = doc.at("traceEvents");
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].at("ts"), 1.5);
  EXPECT_EQ(ev[1].at("args").at("key"), "loadgen_version");
  EXPECT_EQ(ev[2].at("args").at("message"), "SUT \"name\" : a\\b, c");
  EXPECT_THROW(repair_loadgen_trace(dir / "missing.json"), Error);
  fs::remove_all(dir);
}

#if PERFLAB_HAVE_LOADGEN

TEST(LoadgenInference, EveryScenarioAnswersEachIssuedSampleOnceInBatchesNoLargerThanAsked) {
  EXPECT_TRUE(loadgen_available());
  for (const char* scenario : {"offline", "server", "singlestream"}) {
    ToyEngine engine(512);
    const fs::path dir = fresh_dir(scenario);
    const InferenceRunOutcome out = run_inference(engine, quick(scenario), dir);
    EXPECT_EQ(out.batches.samples, engine.predicted) << scenario;
    EXPECT_GE(out.batches.samples, out.loadgen.query_count) << scenario;
    EXPECT_GE(out.batches.batches, 1) << scenario;
    EXPECT_LE(out.batches.largest, 8) << scenario;
    EXPECT_LE(engine.largest, 8u) << scenario;
    if (std::string(scenario) == "singlestream") {
      EXPECT_EQ(out.batches.largest, 1) << "one sample per query, never waited for";
    }
    EXPECT_GT(engine.loaded, 0) << scenario << ": LoadGen loads the samples it will issue";
    EXPECT_EQ(out.loadgen.mode, "PerformanceOnly");
    EXPECT_TRUE(out.loadgen.samples_per_second) << scenario;
    EXPECT_TRUE(fs::exists(dir / "mlperf_log_summary.txt")) << scenario;
    fs::remove_all(dir);
  }
}

/// LoadGen's accuracy log: sample -> the responses logged for it, as floats.
std::map<size_t, std::vector<float>> accuracy_log(const fs::path& path) {
  std::map<size_t, std::vector<float>> out;
  for (const LoadgenResponse& r : read_loadgen_accuracy_log(path)) {
    EXPECT_TRUE(r.as_float()) << "sample " << r.sample << ": " << r.data.size() << " bytes, not one float";
    out[r.sample].push_back(r.as_float().value_or(0.0f));
  }
  return out;
}

TEST(LoadgenInference, AnAccuracyRunLogsEverySamplesPrediction) {
  constexpr size_t kSamples = 300;
  ToyEngine engine(kSamples);
  InferenceSettings s = quick("offline");
  s.mode = "accuracy";
  const fs::path dir = fresh_dir("accuracy");
  const InferenceRunOutcome out = run_inference(engine, s, dir);
  EXPECT_EQ(out.loadgen.mode, "AccuracyOnly");
  EXPECT_EQ(out.loadgen.verdict, "") << "an accuracy run has no performance verdict";
  const auto logged = accuracy_log(dir / "mlperf_log_accuracy.json");
  ASSERT_EQ(logged.size(), kSamples) << "every sample of the library, once";
  for (const auto& [index, values] : logged) {
    ASSERT_EQ(values.size(), 1u) << "sample " << index;
    EXPECT_EQ(values[0], ToyEngine::expected(index)) << "sample " << index;
  }
  fs::remove_all(dir);
}

TEST(LoadgenInference, AnEngineFailureComesBackAfterLoadGenFinished) {
  ToyEngine engine(64, /*fail=*/true);
  const fs::path dir = fresh_dir("failure");
  try {
    run_inference(engine, quick("offline"), dir);
    FAIL() << "the engine's failure was lost";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("failing as asked"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(dir / "mlperf_log_detail.txt")) << "LoadGen finished its test";
  fs::remove_all(dir);
}

#else

TEST(LoadgenInference, WithoutLoadGenARunIsRefusedInOneLine) {
  EXPECT_FALSE(loadgen_available());
  ToyEngine engine(8);
  try {
    run_inference(engine, quick("offline"), fresh_dir("none"));
    FAIL() << "ran without LoadGen";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("built without MLCommons LoadGen"), std::string::npos) << e.what();
  }
}

#endif

TEST(LoadgenInference, BadSettingsAreRefusedBeforeAnythingRuns) {
  ToyEngine engine(8);
  InferenceSettings s = quick("server");
  s.latency_bound_ms = 0;
  const fs::path dir = fresh_dir("refused");
  try {
    run_inference(engine, s, dir);
    FAIL() << "a latency bound of 0 was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--latency-bound-ms"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir)) << "nothing written";
  EXPECT_EQ(engine.predicted, 0);
}

}  // namespace
}  // namespace perflab
