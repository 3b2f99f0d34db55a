// Metric pairs -> rows with verdicts, and the geometric-mean summary.
#include "reports/compare.h"

#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "reports/point_match.h"

namespace perflab::reports {

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFaster: return "faster";
    case Verdict::kSlower: return "slower";
    case Verdict::kNoChange: return "no change";
    case Verdict::kTooFew: return "too few repetitions";
  }
  return "?";
}

bool Comparison::regressed() const {
  for (const CompareRow& r : rows) {
    if (r.verdict == Verdict::kSlower) return true;
  }
  return false;
}

CompareRow compare_metric(const MetricSamples& base, const MetricSamples& candidate, const CompareOptions& options) {
  CompareRow r;
  r.point = base.point;
  r.label = base.label;
  r.metric = base.metric;
  r.unit = base.unit;
  r.lower_is_better = base.lower_is_better;
  r.base_n = base.values.size();
  r.candidate_n = candidate.values.size();
  r.base_failed = base.failed;
  r.candidate_failed = candidate.failed;
  r.base_median = median(base.values);
  r.candidate_median = median(candidate.values);
  r.change = r.base_median != 0 ? r.candidate_median / r.base_median - 1 : 0;
  r.test = mann_whitney_u(candidate.values, base.values);

  const double floor_p = smallest_u_p_value(r.base_n, r.candidate_n);
  if (floor_p >= options.alpha) {
    r.verdict = Verdict::kTooFew;
    r.note = fmt::format("{} vs {} repetitions: the U test cannot reach p < {} (at best p = {:.3g}); "
                         "use at least 4 each",
                         r.base_n, r.candidate_n, options.alpha, floor_p);
  } else if (r.test.p_value < options.alpha && std::abs(r.change) >= options.threshold) {
    const bool worse = r.lower_is_better ? r.change > 0 : r.change < 0;
    r.verdict = worse ? Verdict::kSlower : Verdict::kFaster;
  } else {
    r.verdict = Verdict::kNoChange;
  }
  if (r.base_failed + r.candidate_failed > 0) {
    std::string failed = fmt::format("failed runs left out: {} base, {} candidate", r.base_failed, r.candidate_failed);
    r.note = r.note.empty() ? failed : r.note + "; " + failed;
  }
  return r;
}

Comparison compare_samples(const std::vector<MetricSamples>& base, const std::vector<MetricSamples>& candidate,
                           const CompareOptions& options) {
  if (!(options.threshold >= 0 && options.threshold < 10)) {
    throw UsageError(fmt::format("--threshold: must be a percentage in [0, 1000), got {}", 100 * options.threshold));
  }
  if (!(options.alpha > 0 && options.alpha < 1)) {
    throw UsageError(fmt::format("--alpha: must be in (0, 1), got {}", options.alpha));
  }
  Comparison c;
  c.options = options;
  // Points pair once (point_match.h), then their metrics by name.
  struct Points {
    std::vector<PointIdentity> ids;
    std::vector<std::string> keys;
    std::map<std::string, size_t> index;
  };
  const auto points_of = [](const std::vector<MetricSamples>& samples) {
    Points p;
    for (const MetricSamples& m : samples) {
      if (p.index.count(m.point) != 0) continue;
      p.index[m.point] = p.keys.size();
      p.keys.push_back(m.point);
      p.ids.push_back({parse_point_key(m.point), m.set_params, m.set_params_known});
    }
    return p;
  };
  const Points bp = points_of(base), cp = points_of(candidate);
  const Pairing pairing = pair_points(bp.ids, std::vector<std::string>(bp.ids.size()), cp.ids,
                                      std::vector<std::string>(cp.ids.size()));
  std::map<std::pair<std::string, std::string>, size_t> by_key;
  for (size_t j = 0; j < candidate.size(); ++j) by_key[{candidate[j].point, candidate[j].metric}] = j;
  std::vector<bool> used(candidate.size(), false);
  double log_sum = 0;
  for (const MetricSamples& b : base) {
    const size_t point = bp.index.at(b.point);
    const size_t partner = pairing.partner[point];
    const auto it = partner == Pairing::npos ? by_key.end() : by_key.find({cp.keys[partner], b.metric});
    if (it == by_key.end() || used[it->second]) {
      c.only_base.push_back(b.name());
      continue;
    }
    used[it->second] = true;
    CompareRow row = compare_metric(b, candidate[it->second], options);
    if (!pairing.gaps[point].empty()) {
      const std::string across = pairing.gaps[point].describe("base", "candidate");
      row.note = row.note.empty() ? across : row.note + "; " + across;
    }
    if (row.base_median > 0 && row.candidate_median > 0) {
      const double ratio = row.candidate_median / row.base_median;
      log_sum += std::log(row.lower_is_better ? ratio : 1 / ratio);
      ++c.geomean_rows;
    }
    c.rows.push_back(std::move(row));
  }
  for (size_t j = 0; j < candidate.size(); ++j) {
    if (!used[j]) c.only_candidate.push_back(candidate[j].name());
  }
  if (c.rows.empty()) throw UsageError("no metric of BASE is in CANDIDATE: nothing to compare");
  if (c.geomean_rows > 0) c.geomean_time_ratio = std::exp(log_sum / static_cast<double>(c.geomean_rows));
  return c;
}

}  // namespace perflab::reports
