#include "harness/inference_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>

#include "base/error.h"

#if PERFLAB_HAVE_LOADGEN
#include <loadgen.h>
#include <query_sample_library.h>
#include <system_under_test.h>
#include <test_settings.h>
#endif

namespace perflab {

std::string check_inference_settings(const InferenceSettings& s) {
  if (s.scenario != "offline" && s.scenario != "server" && s.scenario != "singlestream") {
    return fmt::format("--scenario: '{}' is not a valid value; valid values: offline, server, singlestream", s.scenario);
  }
  if (s.mode != "performance" && s.mode != "accuracy") {
    return fmt::format("--loadgen-mode: '{}' is not a valid value; valid values: performance, accuracy", s.mode);
  }
  if (!(s.target_qps > 0) || !std::isfinite(s.target_qps)) {
    return fmt::format("--target-qps must be a positive number, got {}", s.target_qps);
  }
  if (!(s.latency_bound_ms > 0) || !std::isfinite(s.latency_bound_ms)) {
    return fmt::format("--latency-bound-ms must be a positive number, got {}", s.latency_bound_ms);
  }
  if (s.min_duration_ms < 0) {
    return fmt::format("--min-duration-ms must be at least 0, got {}", s.min_duration_ms);
  }
  if (s.min_query_count < 1) {
    return fmt::format("--min-queries must be at least 1, got {}", s.min_query_count);
  }
  if (s.max_batch < 1) return fmt::format("--max-batch must be at least 1, got {}", s.max_batch);
  if (!(s.max_wait_ms >= 0) || !std::isfinite(s.max_wait_ms)) {
    return fmt::format("--max-wait-ms must be at least 0, got {}", s.max_wait_ms);
  }
  return "";
}

nlohmann::json inference_settings_to_json(const InferenceSettings& s) {
  return {{"scenario", s.scenario},         {"mode", s.mode},
          {"target_qps", s.target_qps},     {"latency_bound_ms", s.latency_bound_ms},
          {"min_duration_ms", s.min_duration_ms}, {"min_query_count", s.min_query_count},
          {"max_batch", s.max_batch},       {"max_wait_ms", s.max_wait_ms},
          {"loadgen_trace", s.trace}};
}

InferenceSettings inference_settings_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw UsageError("inference settings are " + std::string(j.type_name()) + ", not an object");
  InferenceSettings s;
  auto take = [&](const char* key, auto& into) {
    if (!j.contains(key)) return;
    try {
      into = j.at(key).get<std::remove_reference_t<decltype(into)>>();
    } catch (const nlohmann::json::exception&) {
      throw UsageError(fmt::format("inference settings: {} is {}, not a {}", key, j.at(key).dump(),
                                   std::is_same_v<std::remove_reference_t<decltype(into)>, std::string> ? "text"
                                                                                                       : "number"));
    }
  };
  take("scenario", s.scenario);
  take("mode", s.mode);
  take("target_qps", s.target_qps);
  take("latency_bound_ms", s.latency_bound_ms);
  take("min_duration_ms", s.min_duration_ms);
  take("min_query_count", s.min_query_count);
  take("max_batch", s.max_batch);
  take("max_wait_ms", s.max_wait_ms);
  if (j.contains("loadgen_trace")) {
    if (!j.at("loadgen_trace").is_boolean()) {
      throw UsageError(fmt::format("inference settings: loadgen_trace is {}, not true or false", j.at("loadgen_trace").dump()));
    }
    s.trace = j.at("loadgen_trace").get<bool>();
  }
  return s;
}

namespace {

/// One trace line with every value LoadGen quoted twice ("key":""name"",
/// "message":""text"") quoted once, its inside escaped for JSON.
std::string unquote_twice(const std::string& line) {
  std::string out;
  size_t at = 0;
  for (size_t open = line.find("\":\"\""); open != std::string::npos; open = line.find("\":\"\"", at)) {
    // The value runs to the first "" followed by } or , after it.
    size_t close = line.find("\"\"", open + 4);
    while (close != std::string::npos && close + 2 < line.size() && line[close + 2] != '}' && line[close + 2] != ',') {
      close = line.find("\"\"", close + 1);
    }
    if (close == std::string::npos) break;
    out.append(line, at, open + 3 - at);  // up to and including the opening quote
    for (size_t i = open + 4; i < close; ++i) {
      if (line[i] == '"' || line[i] == '\\') out.push_back('\\');
      out.push_back(line[i]);
    }
    out.push_back('"');
    at = close + 2;
  }
  out.append(line, at, std::string::npos);
  return out;
}

}  // namespace

void repair_loadgen_trace(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot be read", path.string()));
  const std::filesystem::path fixed = path.string() + ".repairing";
  {
    std::ofstream out(fixed);
    std::string line;
    while (std::getline(in, line)) out << unquote_twice(line) << '\n';
    if (!out) throw Error(fmt::format("{}: cannot be written", fixed.string()));
  }
  std::filesystem::rename(fixed, path);
}

#if PERFLAB_HAVE_LOADGEN

bool loadgen_available() { return true; }

namespace {

using Clock = std::chrono::steady_clock;

/// LoadGen's system under test and sample library over one engine, with
/// the batcher (see the header).
class Adapter final : public mlperf::SystemUnderTest, public mlperf::QuerySampleLibrary {
 public:
  Adapter(InferenceEngine& engine, const InferenceSettings& settings)
      : engine_(engine),
        name_(engine.name()),
        max_batch_(static_cast<size_t>(settings.max_batch)),
        max_wait_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(
            settings.max_wait_ms))) {
    worker_ = std::thread([this] { work(); });
  }
  ~Adapter() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }
  Adapter(const Adapter&) = delete;
  Adapter& operator=(const Adapter&) = delete;

  const std::string& Name() override { return name_; }

  // The system under test: queue every sample; the worker answers.
  void IssueQuery(const std::vector<mlperf::QuerySample>& samples) override {
    // The test starts with its first query (LoadGen has loaded the library
    // and set up by then): the engine's side work starts here, once.
    std::call_once(began_, [this] { engine_.begin_test(); });
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const Clock::time_point now = Clock::now();
      for (const mlperf::QuerySample& s : samples) queue_.push_back({s, now});
    }
    wake_.notify_one();
  }
  void FlushQueries() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      flushing_ = true;
    }
    wake_.notify_one();
  }

  // The sample library.
  size_t TotalSampleCount() override { return engine_.total_samples(); }
  size_t PerformanceSampleCount() override { return engine_.performance_samples(); }
  void LoadSamplesToRam(const std::vector<mlperf::QuerySampleIndex>& samples) override {
    engine_.load(std::vector<size_t>(samples.begin(), samples.end()));
  }
  void UnloadSamplesFromRam(const std::vector<mlperf::QuerySampleIndex>& samples) override {
    engine_.unload(std::vector<size_t>(samples.begin(), samples.end()));
  }

  /// The batches so far; call after StartTest returned.
  InferenceBatches batches() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return batches_;
  }
  /// An engine failure on the worker, rethrown here after the test.
  void rethrow() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  struct Queued {
    mlperf::QuerySample sample;
    Clock::time_point arrived;
  };

  void work() {
    std::vector<mlperf::QuerySample> batch;
    std::vector<size_t> indices;
    std::vector<float> predictions;
    std::vector<mlperf::QuerySampleResponse> responses;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
          if (stopping_ && queue_.empty()) return;
          if (!queue_.empty()) {
            const bool full = queue_.size() >= max_batch_;
            const Clock::time_point deadline = queue_.front().arrived + max_wait_;
            if (full || flushing_ || stopping_ || max_wait_ == Clock::duration::zero() || Clock::now() >= deadline) {
              break;
            }
            wake_.wait_until(lock, deadline);
          } else {
            flushing_ = false;  // everything issued before the flush is answered
            wake_.wait(lock);
          }
        }
        const size_t n = std::min(max_batch_, queue_.size());
        batch.clear();
        for (size_t i = 0; i < n; ++i) {
          batch.push_back(queue_.front().sample);
          queue_.pop_front();
        }
        ++batches_.batches;
        batches_.samples += static_cast<int64_t>(n);
        batches_.largest = std::max(batches_.largest, static_cast<int>(n));
      }
      indices.clear();
      for (const mlperf::QuerySample& s : batch) indices.push_back(s.index);
      predictions.assign(batch.size(), 0.0f);
      try {
        engine_.predict(indices, predictions.data());
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!failure_) failure_ = std::current_exception();
      }
      // Every issued sample is answered, failed or not, so LoadGen finishes;
      // a failure is rethrown after the test and the run reports it.
      responses.clear();
      for (size_t i = 0; i < batch.size(); ++i) {
        responses.emplace_back(batch[i].id, reinterpret_cast<uintptr_t>(&predictions[i]), sizeof(float));
      }
      mlperf::QuerySamplesComplete(responses.data(), responses.size());
    }
  }

  InferenceEngine& engine_;
  std::string name_;
  const size_t max_batch_;
  const Clock::duration max_wait_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;
  bool flushing_ = false, stopping_ = false;
  InferenceBatches batches_;
  std::exception_ptr failure_;
  std::once_flag began_;
  std::thread worker_;
};

mlperf::TestSettings loadgen_settings(const InferenceSettings& s) {
  mlperf::TestSettings t;
  const auto latency_ns = static_cast<uint64_t>(std::llround(s.latency_bound_ms * 1e6));
  if (s.scenario == "offline") {
    t.scenario = mlperf::TestScenario::Offline;
    t.offline_expected_qps = s.target_qps;
  } else if (s.scenario == "server") {
    t.scenario = mlperf::TestScenario::Server;
    t.server_target_qps = s.target_qps;
    t.server_target_latency_ns = latency_ns;
  } else {
    t.scenario = mlperf::TestScenario::SingleStream;
    t.single_stream_expected_latency_ns = s.latency_bound_ms * 1e6;
  }
  t.mode = s.mode == "accuracy" ? mlperf::TestMode::AccuracyOnly : mlperf::TestMode::PerformanceOnly;
  t.min_duration_ms = static_cast<uint64_t>(s.min_duration_ms);
  t.min_query_count = static_cast<uint64_t>(s.min_query_count);
  t.qsl_rng_seed = s.seed;
  t.sample_index_rng_seed = s.seed;
  t.schedule_rng_seed = s.seed;
  return t;
}

}  // namespace

InferenceRunOutcome run_inference(InferenceEngine& engine, const InferenceSettings& settings,
                                  const std::filesystem::path& out_dir) {
  if (const std::string problem = check_inference_settings(settings); !problem.empty()) throw UsageError(problem);
  std::filesystem::create_directories(out_dir);
  mlperf::LogSettings log;
  log.log_output.outdir = out_dir.string();
  log.log_output.copy_summary_to_stdout = false;
  // LoadGen's per-sample trace (mlperf_log_trace.json) takes ~300 bytes a
  // sample: 228 MB for one 5 s Offline run at 100k samples/s. Submissions do
  // not need it; it is written only when asked for (--loadgen-trace).
  log.enable_trace = settings.trace;
  InferenceBatches batches;
  {
    Adapter adapter(engine, settings);  // calls engine.begin_test() with the first query
    try {
      mlperf::StartTest(&adapter, &adapter, loadgen_settings(settings), log);
    } catch (...) {
      try {
        engine.end_test();
      } catch (...) {  // the test's own failure is the one to report
      }
      throw;
    }
    engine.end_test();
    adapter.rethrow();
    batches = adapter.batches();
  }
  // LoadGen opens its trace file even with the trace off: an empty file is
  // not JSON, so it goes. With the trace on, its quoting is repaired.
  const std::filesystem::path trace = out_dir / "mlperf_log_trace.json";
  std::error_code ignored;
  if (std::filesystem::exists(trace, ignored) && std::filesystem::file_size(trace, ignored) == 0) {
    std::filesystem::remove(trace, ignored);
  } else if (settings.trace) {
    repair_loadgen_trace(trace);
  }
  InferenceRunOutcome out;
  out.loadgen = read_loadgen_outcome(out_dir / "mlperf_log_detail.txt");
  out.batches = batches;
  out.engine = engine.report();
  return out;
}

#else

bool loadgen_available() { return false; }

InferenceRunOutcome run_inference(InferenceEngine&, const InferenceSettings& settings, const std::filesystem::path&) {
  if (const std::string problem = check_inference_settings(settings); !problem.empty()) throw UsageError(problem);
  throw UsageError("inference: this perflab was built without MLCommons LoadGen (run scripts/setup, then rebuild)");
}

#endif

}  // namespace perflab
