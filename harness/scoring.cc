// Scores by mode (see scoring.h).
#include "harness/scoring.h"

#include <optional>

#include <fmt/format.h>

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

Score score_runs(const std::vector<RunOutcome>& runs, RunMode mode) {
  if (mode == RunMode::kThroughput) return median_throughput(runs);
  std::vector<std::optional<double>> times;
  for (const auto& r : runs) {
    times.push_back(r.success ? std::optional<double>(r.time_to_train_s) : std::nullopt);
  }
  return olympic_mean(times);
}

}  // namespace perflab
