// Pure statistics used by the runner and reports: percentiles, summaries
// and MLPerf's olympic mean. Each has unit tests against hand-worked values.
#pragma once

#include <optional>
#include <string>
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

/// The score of a set of runs, MLPerf style.
struct Score {
  std::optional<double> value;  ///< Empty when there is no score.
  std::string method;           ///< "olympic mean of N" or "mean of N".
  std::string reason;           ///< Why there is no score, when empty.
};

/// MLPerf's olympic mean over per-run times: sort, drop the fastest and the
/// slowest, average the rest. A failed run (nullopt) counts as the slowest;
/// more than one failure gives no score. With fewer than 3 runs nothing can
/// be dropped: the plain mean of all runs, when all succeeded.
Score olympic_mean(const std::vector<std::optional<double>>& times);

}  // namespace perflab
