// Change points in a metric's history: an e-divisive style detector
// (Matteson and James 2014: the energy distance between the values before
// and after a split, maximised over the split) with a permutation test of
// significance and a minimum magnitude. It runs as if runs were appended
// one at a time: at each new length it looks only at the values since the
// last change point, at most `window` of them, so a cached state extends to
// a longer history without recomputing the old part, and a state built in
// one go equals one built append by append. Deterministic: the permutations
// are drawn from a generator seeded by the values analysed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perflab::reports {

struct ChangePointOptions {
  size_t window = 100;          ///< Values looked at, at most (since the last change point).
  double p_value = 0.001;       ///< Significance level of the permutation test.
  double min_magnitude = 0.02;  ///< Smallest relative change of the medians (after / before - 1).
  size_t min_segment = 6;       ///< Values needed on each side of a change point.
  /// Values after a candidate beyond min_segment before it is confirmed: a
  /// split at the edge of what min_segment allows may be a later change.
  size_t settle = 3;
  int permutations = 999;       ///< Permutations drawn (at most; stops once p cannot pass).

  /// Identifies the options in caches.
  std::string key() const;
  /// Throws UsageError when an option is out of range.
  void validate() const;
};

/// One change point: values from `index` on differ from those before.
struct ChangePoint {
  size_t index = 0;       ///< First value after the change.
  double p_value = 1;     ///< Of the permutation test.
  double before = 0;      ///< Median of the segment before (within the analysed window).
  double after = 0;       ///< Median of the segment after.
  double change = 0;      ///< after / before - 1.
};

/// What the detector knows after `analyzed` values.
struct ChangePointState {
  size_t analyzed = 0;
  std::string digest;  ///< Of the analysed values, to notice a different history.
  std::vector<ChangePoint> found;

  nlohmann::json to_json() const;
  /// Nullopt when `j` is not a state this code wrote.
  static std::optional<ChangePointState> from_json(const nlohmann::json& j);
};

/// Extends `state` (from a prefix of `values`; a state whose digest does
/// not match the prefix is discarded) to all of `values`.
ChangePointState update_change_points(const std::vector<double>& values, ChangePointState state,
                                      const ChangePointOptions& options = {});

/// The change points of a whole series (update from an empty state).
std::vector<ChangePoint> detect_change_points(const std::vector<double>& values, const ChangePointOptions& options = {});

/// The best split of `x` by the energy statistic, as (index, Q); index 0
/// when no split leaves `min_segment` values on each side. Exposed for tests.
std::pair<size_t, double> best_energy_split(const std::vector<double>& x, size_t min_segment);

}  // namespace perflab::reports
