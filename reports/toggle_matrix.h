// The toggle matrix: for points that differ only in the optimization toggles
// requested, one row per toggle combination with its score, the 95% t
// confidence interval of the mean, and its speedup over the all-off row.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/result_set.h"
#include "reports/statistics.h"

namespace perflab::reports {

/// One toggle combination.
struct ToggleMatrixRow {
  std::string combination;            ///< Toggles requested on, "+"-joined; "all off" for none.
  std::string point_label;            ///< The point's label in its set.
  bool baseline = false;              ///< No toggle requested.
  std::vector<ToggleStatus> toggles;  ///< Requested / in effect / reason, every toggle.
  size_t runs = 0;
  size_t succeeded = 0;
  /// Time to train (olympic mean, s) or median throughput (samples/s); empty
  /// when there is no score (then `no_value_reason` says why).
  std::optional<double> value;
  std::string no_value_reason;
  /// Mean and 95% interval of the successful runs' times (or of all runs'
  /// throughputs), Student-t.
  MeanCi ci;
  /// Baseline time / this time (or this throughput / baseline throughput);
  /// empty without an all-off row or without both values.
  std::optional<double> speedup;
};

/// The matrix of one group of points that share everything but toggles.
struct ToggleMatrix {
  std::string title;  ///< What the rows share, e.g. "dlrm preset=tiny batch_size=512".
  /// True: values are times to train (s), lower is better. False: the runs
  /// have no quality target and values are median throughputs (samples/s).
  bool time_to_train = true;
  bool has_baseline = false;
  std::vector<ToggleMatrixRow> rows;  ///< All off first, then as the points are sorted.

  /// "time to train (s)" or "throughput (samples/s)".
  std::string value_name() const;
};

/// One matrix per group of at least two points that differ only in the toggles
/// requested; `points` as group_points returns them.
std::vector<ToggleMatrix> toggle_matrices(const std::vector<Point>& points);

/// Toggle names joined with ", " for those that are in effect; "none" if none.
std::string toggles_in_effect(const std::vector<ToggleStatus>& toggles);
/// "name (reason)" for toggles requested but not in effect, "; "-joined; "" if none.
std::string toggles_not_in_effect(const std::vector<ToggleStatus>& toggles);

}  // namespace perflab::reports
