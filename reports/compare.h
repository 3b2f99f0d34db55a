// `perflab compare`: each metric of each point in a base and a candidate
// set, medians, relative change, a two-sided Mann-Whitney U test on the
// repetitions and a verdict that needs both significance and a threshold,
// in the spirit of Google Benchmark's compare.py. Pure functions; rendering
// (console, Markdown, JSON) is in render_compare.cc.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/mann_whitney.h"
#include "reports/metric_samples.h"

namespace perflab::reports {

struct CompareOptions {
  double threshold = 0.05;  ///< Smallest relative change of the medians that counts.
  double alpha = 0.05;      ///< Significance level of the U test.
};

enum class Verdict {
  kFaster,    ///< Significant and at least the threshold better.
  kSlower,    ///< Significant and at least the threshold worse: a regression.
  kNoChange,  ///< Not significant, or smaller than the threshold.
  kTooFew     ///< Too few repetitions for the test to reach the significance level.
};

/// "faster", "slower", "no change", "too few repetitions".
std::string verdict_name(Verdict v);

/// One metric of one point in both sets.
struct CompareRow {
  std::string point, label, metric, unit;
  bool lower_is_better = true;
  size_t base_n = 0, candidate_n = 0;
  size_t base_failed = 0, candidate_failed = 0;
  double base_median = 0, candidate_median = 0;
  double change = 0;  ///< candidate_median / base_median - 1.
  UTest test;
  Verdict verdict = Verdict::kNoChange;
  std::string note;  ///< Why the verdict is what it is, when not plain (too few runs, failures).
};

/// All rows and the summary.
struct Comparison {
  CompareOptions options;
  std::vector<CompareRow> rows;
  /// Geometric mean over rows of the time ratio (candidate / base for
  /// lower-is-better metrics, base / candidate otherwise): > 1 is slower.
  double geomean_time_ratio = 1;
  size_t geomean_rows = 0;
  std::vector<std::string> only_base, only_candidate;  ///< "label metric" present on one side.

  bool regressed() const;
};

/// Compares one metric's repetitions (base and candidate share point and metric).
CompareRow compare_metric(const MetricSamples& base, const MetricSamples& candidate,
                          const CompareOptions& options = {});

/// Pairs metrics by (point, metric) and compares each pair; rows in the
/// base's order. Throws UsageError when no metric is in both sets or an
/// option is out of range.
Comparison compare_samples(const std::vector<MetricSamples>& base, const std::vector<MetricSamples>& candidate,
                           const CompareOptions& options = {});

/// Renderers: an aligned console table, a Markdown table, and JSON.
std::string render_compare_console(const Comparison& c);
std::string render_compare_markdown(const Comparison& c);
nlohmann::json compare_to_json(const Comparison& c);

}  // namespace perflab::reports
