// Statistics: percentiles, summaries, olympic mean.
#include "harness/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

namespace perflab {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  auto lo = static_cast<size_t>(std::floor(rank));
  size_t hi = std::min(lo + 1, values.size() - 1);
  double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

nlohmann::json Summary::to_json() const {
  return {{"n", n}, {"mean", mean}, {"min", min}, {"p50", p50},
          {"p90", p90}, {"p99", p99}, {"max", max}};
}

Summary summarize(const std::vector<double>& values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) return s;
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.n);
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  s.min = *mn;
  s.max = *mx;
  s.p50 = percentile(values, 50);
  s.p90 = percentile(values, 90);
  s.p99 = percentile(values, 99);
  return s;
}

Score olympic_mean(const std::vector<std::optional<double>>& times) {
  Score score;
  size_t failures = 0;
  std::vector<double> ok;
  for (const auto& t : times) {
    if (t) {
      ok.push_back(*t);
    } else {
      ++failures;
    }
  }
  if (times.empty()) {
    score.reason = "no runs";
    return score;
  }
  if (times.size() < 3) {
    if (failures > 0) {
      score.reason = fmt::format("{} of {} runs failed", failures, times.size());
      return score;
    }
    score.value = std::accumulate(ok.begin(), ok.end(), 0.0) / static_cast<double>(ok.size());
    score.method = fmt::format("mean of {} (olympic mean needs 3 or more runs)", ok.size());
    return score;
  }
  if (failures > 1) {
    score.reason = fmt::format("{} of {} runs failed (more than one failure gives no score)",
                               failures, times.size());
    return score;
  }
  std::sort(ok.begin(), ok.end());
  // Drop the fastest; drop the slowest, which is the failed run when there is one.
  size_t first = 1;
  size_t last = failures == 1 ? ok.size() : ok.size() - 1;
  double sum = 0;
  for (size_t i = first; i < last; ++i) sum += ok[i];
  score.value = sum / static_cast<double>(last - first);
  score.method = fmt::format("olympic mean of {}", times.size());
  return score;
}

}  // namespace perflab
