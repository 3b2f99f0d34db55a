// What `perflab history` shows from the database's series: the latest run
// checked against a rolling baseline, trends with their change points, and
// the latest values as Prometheus / OpenMetrics text exposition. Pure
// functions of the series (reports/history_db.h reads them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/change_points.h"
#include "reports/compare.h"
#include "reports/history_db.h"

namespace perflab::reports {

/// `history check`: the latest run against the runs before it on its machine.
struct HistoryCheck {
  int64_t latest_run = 0;
  std::string machine;
  std::vector<int64_t> baseline_runs;  ///< Ascending.
  std::optional<Comparison> comparison;  ///< Empty when no metric has a baseline.
};

/// Compares each series' value at `latest_run` (its repetitions) with the
/// pooled repetitions of up to `baseline_runs` earlier runs of the same
/// series; `series` should hold one machine's series only.
HistoryCheck check_history(const std::vector<HistorySeries>& series, int64_t latest_run, size_t baseline_runs,
                           const CompareOptions& options);

/// A series with its change points (indices into `series.values`).
struct SeriesChanges {
  HistorySeries series;
  std::vector<ChangePoint> changes;
};

/// Change points of each series, extended from the database's cache and
/// stored back, so an appended run costs only its own analysis.
std::vector<SeriesChanges> series_changes(HistoryDb& db, std::vector<HistorySeries> series,
                                          const ChangePointOptions& options);

/// `history trend`: per series, one line per run (from `since`), the change
/// points marked with the revision where the metric stepped.
std::string render_trend(const std::vector<SeriesChanges>& series, const std::string& since);

/// How a metric is exposed, following Prometheus' naming guide: base units
/// in the name (seconds), no abbreviated units, percentiles as a summary's
/// quantile label.
struct OpenMetricsName {
  std::string family;  ///< "perflab_iteration_seconds"
  std::string type;    ///< "gauge" or "summary"
  double scale = 1;    ///< Multiplies the stored value into the base unit (ms -> s: 1e-3).
  std::string quantile;  ///< "0.5" for a summary's quantile; empty otherwise.
  std::string help;
};

/// The exposition of `metric` (stored in `unit`): time_to_train_s and
/// time_to_train_min -> perflab_time_to_train_seconds; score_min ->
/// perflab_mlperf_score_seconds; normalized_score_min ->
/// perflab_mlperf_normalized_score_seconds; throughput ->
/// perflab_throughput_per_second (label unit: what a sample is);
/// iteration_ms_pNN -> perflab_iteration_seconds{quantile="0.NN"} (a
/// summary); anything else perflab_<metric> as a gauge.
OpenMetricsName openmetrics_name(const std::string& metric, const std::string& unit);

/// The latest value of every series as OpenMetrics text (also read by
/// Prometheus' text format, for which "# EOF" is a comment): one family per
/// openmetrics_name, labels point, point_id, machine and revision (and unit
/// or quantile), no timestamps (the textfile collector refuses them).
std::string render_openmetrics(const std::vector<HistorySeries>& series);

}  // namespace perflab::reports
