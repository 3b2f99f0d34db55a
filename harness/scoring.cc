// Scores (see scoring.h).
#include "harness/scoring.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "harness/stats.h"

namespace perflab {
namespace {

Score median_throughput(const std::vector<RunOutcome>& runs) {
  Score s;
  std::vector<double> rates;
  for (const auto& r : runs) {
    if (!r.success) {
      s.reason = fmt::format("seed {}: {}", r.seed, r.reason);
      return s;
    }
    rates.push_back(r.throughput);
  }
  if (rates.empty()) {
    s.reason = "no runs";
    return s;
  }
  s.value = percentile(rates, 50);
  s.method = fmt::format("median of {}", rates.size());
  return s;
}

}  // namespace

std::optional<double> mlperf_olympic_average(std::vector<double> values, size_t failed,
                                             size_t dropped_each_end) {
  if (failed > dropped_each_end) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t slow_end = dropped_each_end - failed;  // Failures already are the slowest.
  if (values.size() <= dropped_each_end + slow_end) return std::nullopt;
  const auto first = values.begin() + static_cast<std::ptrdiff_t>(dropped_each_end);
  const auto last = values.end() - static_cast<std::ptrdiff_t>(slow_end);
  return std::accumulate(first, last, 0.0) / static_cast<double>(last - first);
}

Score olympic_mean(const std::vector<std::optional<double>>& times) {
  Score score;
  std::vector<double> ok;
  for (const auto& t : times) {
    if (t) ok.push_back(*t);
  }
  const size_t failures = times.size() - ok.size();
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
  // Drop the fastest; drop the slowest, which is the failed run when there is one.
  score.value = mlperf_olympic_average(std::move(ok), failures, 1);
  score.method = fmt::format("olympic mean of {}", times.size());
  return score;
}

Score score_runs(const std::vector<RunOutcome>& runs, RunMode mode) {
  // Inference: LoadGen's samples per second, per seed, scored as throughput.
  if (mode == RunMode::kThroughput || mode == RunMode::kInference) return median_throughput(runs);
  std::vector<std::optional<double>> times;
  for (const auto& r : runs) {
    times.push_back(r.success ? std::optional<double>(r.time_to_train_s) : std::nullopt);
  }
  return olympic_mean(times);
}

std::optional<double> median_passing_throughput(const std::vector<RunOutcome>& runs) {
  std::vector<double> rates;
  for (const auto& r : runs) {
    if (r.success) rates.push_back(r.throughput);
  }
  if (rates.empty()) return std::nullopt;
  return percentile(rates, 50);
}

double rcp_normalization_factor(double rcp_mean, double submission_mean) {
  return std::max(1.0, rcp_mean / submission_mean);
}

std::optional<double> normalized_score(const std::optional<double>& raw, double factor) {
  if (!raw) return std::nullopt;
  return *raw * factor;
}

}  // namespace perflab
