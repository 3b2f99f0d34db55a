// MLPerf Inference scenarios driven by MLCommons LoadGen (issue 28): the
// harness side. A workload gives an InferenceEngine (its samples and a
// batched predict); run_inference makes it LoadGen's system under test and
// query sample library, runs one LoadGen test into a folder (LoadGen's own
// mlperf_log_summary.txt, mlperf_log_detail.txt, mlperf_log_accuracy.json
// land there) and returns LoadGen's outcome (harness/loadgen_result.h) with
// the batches the engine saw. LoadGen owns the clock and the scenario:
// nothing here times or schedules queries.
//
// Batching: every sample LoadGen issues goes into one queue; one worker
// thread takes batches of at most max_batch samples, and waits for a
// fuller batch only while the oldest queued sample has waited less than
// max_wait_ms (Server's dynamic batcher; 0: never wait, as Offline and
// SingleStream want). Each answered sample carries its prediction (a float)
// as LoadGen's response data, so AccuracyOnly runs log them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/loadgen_result.h"

namespace perflab {

/// What LoadGen's system under test computes, per sample of a fixed library.
class InferenceEngine {
 public:
  virtual ~InferenceEngine() = default;
  /// For LoadGen's logs.
  virtual std::string name() const = 0;
  /// Samples in the library (indices 0 .. total_samples() - 1).
  virtual size_t total_samples() const = 0;
  /// Samples LoadGen may hold loaded at once (performance runs draw from these).
  virtual size_t performance_samples() const = 0;
  /// LoadGen's load and unload of library samples (untimed).
  virtual void load(const std::vector<size_t>& /*indices*/) {}
  virtual void unload(const std::vector<size_t>& /*indices*/) {}
  /// One prediction per sample of `indices` into `out` (same order). Called
  /// from one worker thread only; `indices` holds at most max_batch samples.
  virtual void predict(const std::vector<size_t>& indices, float* out) = 0;
  /// Around the LoadGen test (begin_test: as the first query arrives, once
  /// LoadGen has loaded the library; end_test: after the last answer):
  /// work the engine runs beside serving, such as a stream of model
  /// updates, starts and stops here.
  virtual void begin_test() {}
  virtual void end_test() {}
  /// What the engine measured over the test (placement, cache hit rates,
  /// bytes, time per part), recorded in the run's result as `engine`;
  /// null when it has nothing to say.
  virtual nlohmann::json report() const { return nullptr; }
};

/// One LoadGen test's settings (LoadGen's TestSettings, the ones perflab sets).
struct InferenceSettings {
  std::string scenario = "offline";  ///< offline, server or singlestream.
  std::string mode = "performance";  ///< performance or accuracy.
  /// Offline: the expected samples per second; Server: the target queries
  /// per second (one sample per query).
  double target_qps = 1000;
  /// Server: the latency bound at the 99th percentile; SingleStream: the
  /// expected latency. Milliseconds, > 0.
  double latency_bound_ms = 10;
  int64_t min_duration_ms = 60000;  ///< LoadGen's minimum test duration.
  int64_t min_query_count = 100;    ///< And its minimum number of queries.
  int max_batch = 256;              ///< The batcher's largest batch (>= 1).
  double max_wait_ms = 0;           ///< Server: how long the oldest sample may wait for a fuller batch.
  uint64_t seed = 0;                ///< LoadGen's sample-index and schedule seeds.
  /// LoadGen's per-sample trace, mlperf_log_trace.json (Chrome trace JSON,
  /// for a timeline: about 300 bytes a sample). Off by default.
  bool trace = false;
};

/// "" when `s` is one LoadGen can run, else one line saying what is wrong.
std::string check_inference_settings(const InferenceSettings& s);

/// The settings as results record them (every field but the seed, which is
/// the run's), and back; UsageError naming the key for a malformed value.
nlohmann::json inference_settings_to_json(const InferenceSettings& s);
InferenceSettings inference_settings_from_json(const nlohmann::json& j);

/// What the batcher did over the test.
struct InferenceBatches {
  int64_t batches = 0;
  int64_t samples = 0;
  int largest = 0;
};

struct InferenceRunOutcome {
  LoadgenOutcome loadgen;
  InferenceBatches batches;
  nlohmann::json engine;  ///< InferenceEngine::report() after the test.
};

/// Rewrites LoadGen's trace (mlperf_log_trace.json) in place so JSON readers
/// take it: LoadGen 6.0.17 writes its LogDetail events' keys quoted twice
/// ("key":""name""). Error naming the file when it cannot be read or written.
void repair_loadgen_trace(const std::filesystem::path& path);

/// Whether this build has LoadGen (scripts/setup fetches it).
bool loadgen_available();

/// Runs one LoadGen test of `engine` into `out_dir` (created). Throws
/// UsageError for invalid settings (check_inference_settings) or when built
/// without LoadGen, Error when LoadGen wrote no verdict.
InferenceRunOutcome run_inference(InferenceEngine& engine, const InferenceSettings& settings,
                                  const std::filesystem::path& out_dir);

}  // namespace perflab
