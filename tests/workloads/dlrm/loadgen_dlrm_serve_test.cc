// DLRM served on the CPU (workloads/dlrm/serve/serve_engine.h): a batch is the
// model's prediction of exactly the rows it names (duplicates and any
// order), data that does not fit the model is refused in one line, and,
// with LoadGen built, an AccuracyOnly test serves every sample of the
// library as the model predicts it (LoadGen's own accuracy log read back)
// and a Server test answers in batches no larger than asked.
//
// Exact comparisons: the reference predicts the same rows in the same batch
// composition, so the arithmetic is the same (batches of one in the
// accuracy run, where LoadGen chooses the order).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>


#include "base/error.h"
#include "harness/inference_run.h"
#include "tests/workloads/dlrm/tiny_dlrm.h"
#include "workloads/dlrm/serve/serve_engine.h"

namespace perflab::dlrm {
namespace {

namespace fs = std::filesystem;

/// An engine serving `data` with its own copy of tiny_shape(4) from seed 9
/// (the tests' `model` is an identical one: initialisation is a function of the seed).
DlrmCpuEngine engine_for(const Dataset& data, int64_t max_batch, const ServeOptions& options = {}) {
  return DlrmCpuEngine(std::make_unique<CpuModel>(tiny_shape(4), 9), data, data, options, max_batch, 9);
}


TEST(DlrmServe, ABatchIsTheModelsPredictionOfExactlyTheRowsItNames) {
  CpuModel model(tiny_shape(4), 9);
  const Dataset data = tiny_data(50, 3);
  DlrmCpuEngine engine = engine_for(data, 8);
  EXPECT_EQ(engine.total_samples(), 50u);
  for (const std::vector<size_t>& batch : {std::vector<size_t>{7, 3, 3, 49, 0}, std::vector<size_t>{12},
                                           std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7}}) {
    std::vector<float> got(batch.size());
    engine.predict(batch, got.data());
    EXPECT_EQ(got, tiny_predictions(model, data, batch));
    for (float p : got) EXPECT_TRUE(p > 0 && p < 1) << p;
  }
}

TEST(DlrmServe, DataThatDoesNotFitTheModelIsRefusedInOneLine) {
  CpuModel model(tiny_shape(4), 9);
  Dataset other = tiny_data(10, 3);
  other.table_sizes = {5, 7, 4};
  const struct {
    const Dataset* data;
    int64_t max_batch;
    const char* expect;
  } cases[] = {{&other, 4, "do not fit the model"}};
  for (const auto& c : cases) {
    try {
      DlrmCpuEngine engine = engine_for(*c.data, c.max_batch);
      FAIL() << "accepted: " << c.expect;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  const Dataset data = tiny_data(10, 3);
  EXPECT_THROW(engine_for(data, 0), UsageError);
  DlrmCpuEngine engine = engine_for(data, 2);
  std::vector<float> out(3);
  EXPECT_THROW(engine.predict({0, 1, 2}, out.data()), Error) << "a batch above max_batch";
  EXPECT_THROW(engine.predict({10}, out.data()), Error) << "a sample outside the library";
}

#if PERFLAB_HAVE_LOADGEN

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("perflab_dlrm_serve_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(DlrmServe, AnAccuracyRunServesEverySampleAsTheModelPredictsIt) {
  constexpr int64_t kSamples = 120;
  CpuModel model(tiny_shape(4), 9);
  const Dataset data = tiny_data(kSamples, 5);
  DlrmCpuEngine engine = engine_for(data, 1);
  InferenceSettings s;
  s.scenario = "offline";
  s.mode = "accuracy";
  s.target_qps = 10000;
  s.min_duration_ms = 0;
  s.min_query_count = 1;
  s.max_batch = 1;
  const fs::path dir = fresh_dir("accuracy");
  const InferenceRunOutcome out = run_inference(engine, s, dir);
  EXPECT_EQ(out.loadgen.mode, "AccuracyOnly");
  std::map<size_t, float> served;
  for (const LoadgenResponse& r : read_loadgen_accuracy_log(dir / "mlperf_log_accuracy.json")) {
    ASSERT_TRUE(r.as_float()) << "sample " << r.sample << ": " << r.data.size() << " bytes, not one float";
    served[r.sample] = *r.as_float();
  }
  ASSERT_EQ(served.size(), static_cast<size_t>(kSamples));
  for (const auto& [index, p] : served) {
    EXPECT_EQ(p, tiny_predictions(model, data, {index})[0]) << "sample " << index;
  }
  fs::remove_all(dir);
}

TEST(DlrmServe, AServerTestAnswersInBatchesNoLargerThanAsked) {
  CpuModel model(tiny_shape(4), 9);
  const Dataset data = tiny_data(256, 6);
  DlrmCpuEngine engine = engine_for(data, 16);
  InferenceSettings s;
  s.scenario = "server";
  s.target_qps = 2000;
  s.latency_bound_ms = 50;
  s.min_duration_ms = 50;
  s.min_query_count = 64;
  s.max_batch = 16;
  s.max_wait_ms = 1;
  const fs::path dir = fresh_dir("server");
  const InferenceRunOutcome out = run_inference(engine, s, dir);
  EXPECT_EQ(out.loadgen.scenario, "Server");
  EXPECT_GE(out.batches.samples, out.loadgen.query_count);
  EXPECT_LE(out.batches.largest, 16);
  EXPECT_TRUE(out.loadgen.latency_at(99));
  fs::remove_all(dir);
}

#endif

}  // namespace
}  // namespace perflab::dlrm
