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

/// The latest value of every series as Prometheus text exposition (also
/// valid OpenMetrics apart from the final "# EOF", which the Prometheus
/// text format reads as a comment): one gauge family per metric, labels
/// point, point_id, machine and revision, no timestamps (the textfile
/// collector refuses them).
std::string render_openmetrics(const std::vector<HistorySeries>& series);

}  // namespace perflab::reports
