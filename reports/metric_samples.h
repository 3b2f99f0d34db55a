// The repetitions of each metric of each point, the common input of
// `perflab compare` and `perflab history`: per point (one spec, all its
// seeds), time to train, throughput and the iteration-time percentiles, one
// value per run. Built from perflab results here and from MLPerf result
// folders by reports/mlperf_results.h.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/result_set.h"

namespace perflab::reports {

/// One metric of one point: a value per repetition.
struct MetricSamples {
  std::string point;  ///< Identity, stable across result sets (the point's spec as compact JSON).
  std::string label;  ///< What a person reads, e.g. "dlrm tiny batch_size=512".
  std::string metric;  ///< "time_to_train_s", "throughput", "iteration_ms_p50", ...
  std::string unit;    ///< "s", "samples/s", "ms", "min".
  bool lower_is_better = true;
  std::vector<double> values;  ///< One per repetition that has the metric.
  size_t failed = 0;           ///< Repetitions left out: did not reach the target or failed the gate.
  /// The point's parameters given with --set (the others are its preset's
  /// or its workload's defaults): what may be dropped to pair it across
  /// versions (reports/point_match.h).
  std::vector<std::string> set_params;
  /// False where what the point set is not known (a history row keeps
  /// none): then none of its parameters is dropped.
  bool set_params_known = true;

  /// "label metric": how reports name the series.
  std::string name() const { return label + " " + metric; }
};

/// The metrics of every point, in point order, then time to train (when the
/// point trains to a target: successful runs only, the others counted as
/// failed), throughput (runs that succeeded), then iteration time p50, p90
/// and p99 (runs that timed iterations). Metrics without any value are left out.
std::vector<MetricSamples> metric_samples(const std::vector<Point>& points);

/// The kernel tables of one point's profiled runs.
struct PointProfiles {
  std::string point;  ///< As MetricSamples::point.
  std::string label;
  std::vector<KernelProfile> runs;
  std::vector<std::string> set_params;  ///< As MetricSamples::set_params.
};

/// The parameters a point set with --set.
std::vector<std::string> set_params_of(const Point& point);

/// What a set of inputs holds: the metrics, and facts of the newest result.
struct MetricInput {
  std::vector<MetricSamples> samples;
  std::vector<std::string> skipped;  ///< One "path: reason" line per unusable file.
  nlohmann::json environment = nlohmann::json::object();  ///< Of the newest result.
  std::string created;  ///< The newest result's creation time (UTC, ISO 8601).
  std::vector<std::string> scores;  ///< MLPerf inputs: one score line per system and benchmark.
  /// Profiled points: identity (MetricSamples::point), label and every
  /// profiled run's kernel table (reports/kernel_compare.h).
  std::vector<PointProfiles> profiles;
};

/// Reads result files and folders (as load_result_set) and MLPerf result
/// folders or MLLOG files (reports/mlperf_results.h, normalised with the
/// RCPs at `rcps` when given) and returns their metrics. Throws UsageError
/// for a path that does not exist or when nothing usable was found (`what`
/// names the input in the message, e.g. "BASE").
MetricInput load_metric_input(const std::vector<std::filesystem::path>& paths, const std::string& what,
                              const std::filesystem::path& rcps = {});

/// The median of a sample (NaN when empty).
double median(const std::vector<double>& values);

}  // namespace perflab::reports
