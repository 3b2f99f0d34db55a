// Pure statistics used by the runner and reports: percentiles and
// summaries. Each has unit tests against hand-worked values. Scores (the
// olympic mean, gated medians, RCP normalisation) are harness/scoring.h's.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

namespace perflab {

/// Percentile `p` in [0, 100] by linear interpolation between order
/// statistics (the convention of numpy's default). NaN for an empty input.
double percentile(std::vector<double> values, double p);

/// n, mean, min, p50, p90, p99, max of a sample.
struct Summary {
  size_t n = 0;
  double mean = 0, min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  nlohmann::json to_json() const;
};
Summary summarize(const std::vector<double>& values);

}  // namespace perflab
