// Sweep reports: a set of results (many points, many seeds) summarised as
// time-to-train per point, the toggle matrix and the batch-size sweep, and
// rendered as Markdown, CSV, JSON or one self-contained HTML page with
// inline SVG charts. Pure functions of result documents: nothing is run.
#pragma once

#include <string>
#include <vector>

#include "reports/batch_sweep.h"
#include "reports/result_set.h"
#include "reports/toggle_matrix.h"

namespace perflab::reports {

/// Version of render_sweep_json's document; bumped when a field changes
/// meaning or is removed.
inline constexpr int kSweepReportSchemaVersion = 1;

/// Everything a sweep report shows, computed once from a result set.
struct SweepReport {
  std::string title;
  size_t results = 0;                         ///< Valid result files.
  size_t runs = 0;                            ///< Runs (seeds) across them.
  std::vector<Point> points;                  ///< As group_points orders them.
  std::vector<ToggleMatrix> toggle_matrices;  ///< Empty without toggle variation.
  std::vector<BatchSweep> batch_sweeps;       ///< Empty without batch_size variation.
  std::vector<std::string> skipped;           ///< "path: reason" per unusable file.
  std::vector<Result> read;                   ///< The results, for the workloads' own sections.
};

/// Groups, scores and tabulates a result set.
SweepReport make_sweep_report(const ResultSet& set, std::string title = "perflab sweep report");

/// GitHub-flavoured Markdown: summary, time to train per point, toggle
/// matrices, batch-size sweeps, skipped files.
std::string render_sweep_markdown(const SweepReport& report);

/// One long-format CSV, `table,point,run,field,value`, one value per line:
/// - table `point`: per point (run empty): workload, preset, backend, metric,
///   target, runs, converged, time_to_train_s, score_method, score_reason,
///   median_throughput;
/// - table `run`: per run (run = its index within the point): result, seed,
///   status, reason, time_to_train_s, epochs, iterations,
///   throughput_samples_per_s, iteration_ms_mean, last_quality;
/// - table `toggle_matrix`: per row (point = the row's point): group,
///   combination, baseline, value_name, value, ci_mean, ci_low, ci_high, ci_n,
///   speedup, runs, converged, in_effect, not_in_effect;
/// - table `batch_sweep`: per row: group, batch_size, learning_rate,
///   iterations_per_epoch, epochs_mean, epochs_stddev, iterations_mean,
///   iteration_ms, time_to_train_s, converged, runs, best;
/// - table `skipped`: point and run empty, field `file`, value "path: reason".
/// Numbers are written shortest-round-trip; a missing value is empty;
/// booleans are true/false. Fields are quoted as RFC 4180 asks.
std::string render_sweep_csv(const SweepReport& report);

/// The same content as JSON, with "schema_version" (kSweepReportSchemaVersion)
/// and "kind": "sweep_report"; missing values are null.
std::string render_sweep_json(const SweepReport& report);

/// One self-contained HTML page (inline CSS and SVG, no scripts, no network):
/// the tables of the Markdown report plus a quality-curve chart per point, a
/// bar chart per toggle matrix and an epochs/time-to-train chart per
/// batch-size sweep.
std::string render_sweep_html(const SweepReport& report);

}  // namespace perflab::reports
