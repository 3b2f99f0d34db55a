// The nightly dashboard: one self-contained HTML file (inline SVG, no
// scripts, nothing fetched) with the latest run's verdicts against its
// rolling baseline on top, then the change points, then a trend chart per
// series with its change points marked by revision.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/history_report.h"

namespace perflab::reports {

struct Dashboard {
  std::string title = "perflab nightly";
  std::string database;                // Shown in the header.
  std::optional<HistoryRun> latest;    // Empty when nothing is recorded.
  std::optional<HistoryCheck> check;   // The latest run's check.
  std::vector<SeriesChanges> series;   // Every series, with its change points.
};

std::string render_dashboard(const Dashboard& d);

}  // namespace perflab::reports
