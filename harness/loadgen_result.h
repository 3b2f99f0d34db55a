// What an MLPerf Inference test measured, read from MLCommons LoadGen's own
// detail log (mlperf_log_detail.txt). LoadGen writes it as :::MLLOG lines,
// the format of training logs, so harness/mllog_reader.h reads it; its
// mlperf_log_summary.txt is the same facts for people. Read, never
// recomputed: the verdict, the throughput and the latencies are LoadGen's.
//
// Outside input: a missing file or a log of a test that did not finish (no
// verdict, and no power_end, LoadGen's last line) is a UsageError naming
// the file, never a crash. An AccuracyOnly test has no verdict: LoadGen
// logs the responses (mlperf_log_accuracy.json), not a performance result.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perflab {

/// One point of LoadGen's latency distribution.
struct LoadgenPercentile {
  double percentile = 0;  ///< 50, 90, 95, 97, 99, 99.9
  double latency_ns = 0;
};

struct LoadgenOutcome {
  std::string loadgen_version;  ///< "6.0.17 @ d6147c7eb7"
  std::string scenario;         ///< effective_scenario: Offline, Server, SingleStream, MultiStream.
  std::string mode;             ///< effective_test_mode: PerformanceOnly, AccuracyOnly, ...
  std::string verdict;          ///< result_validity: VALID or INVALID; "" for an AccuracyOnly test.
  std::string invalid_reason;   ///< LoadGen's recommendation when invalid ("" when valid).
  std::optional<bool> min_duration_met, min_queries_met, early_stopping_met;
  /// Server: whether the latency bound held at the target percentile.
  std::optional<bool> performance_constraints_met;
  std::string early_stopping_detail;
  int64_t query_count = 0;
  std::optional<int64_t> overlatency_query_count;  ///< Server.
  int64_t errors = 0;                              ///< num_errors: LoadGen's own error count.

  /// The scenario's throughput as LoadGen reports it: Offline's samples per
  /// second, Server's completed samples per second, SingleStream's and
  /// MultiStream's queries per second with LoadGen's overhead.
  std::optional<double> samples_per_second;
  std::optional<double> scheduled_samples_per_second;  ///< Server.
  /// SingleStream and MultiStream: the early-stopping latency estimates
  /// LoadGen reports as the result (90th and 99th percentile), in ns.
  std::optional<double> early_stopping_latency_ss_ns, early_stopping_latency_ms_ns;

  std::optional<double> target_qps, target_latency_ns, target_latency_percentile;
  double min_latency_ns = 0, max_latency_ns = 0, mean_latency_ns = 0;
  std::vector<LoadgenPercentile> percentiles;  ///< In LoadGen's order (ascending).

  /// LoadGen judged the test valid.
  bool valid() const { return verdict == "VALID"; }
  /// The latency at `percentile` (e.g. 99), if LoadGen reported it.
  std::optional<double> latency_at(double percentile) const;
};

/// Reads LoadGen's detail log. UsageError "PATH: ..." when it cannot be read
/// or the test did not finish.
LoadgenOutcome read_loadgen_outcome(const std::filesystem::path& detail_log);

/// One response LoadGen logged in an accuracy test (mlperf_log_accuracy.json):
/// the library sample it answered and the response's bytes.
struct LoadgenResponse {
  size_t sample = 0;
  std::vector<unsigned char> data;
  /// The bytes as one float (what perflab's engines answer), when there are 4.
  std::optional<float> as_float() const;
};

/// Reads LoadGen's accuracy log, in its order. UsageError "PATH: ..." when
/// it cannot be read or an entry is not {qsl_idx, data: hex bytes}.
std::vector<LoadgenResponse> read_loadgen_accuracy_log(const std::filesystem::path& path);

/// The outcome as JSON (every field; absent optionals are omitted).
nlohmann::json loadgen_outcome_to_json(const LoadgenOutcome& outcome);

}  // namespace perflab
