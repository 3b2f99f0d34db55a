// Mann-Whitney U: ranks with ties averaged, U from the first sample's rank
// sum; exact null distribution by the recursion on arrangement counts
// (Mann and Whitney 1947), else the normal approximation.
#include "reports/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <boost/math/distributions/normal.hpp>

namespace perflab::reports {
namespace {

/// counts[k]: arrangements of n1 x's and n2 y's with U = k (pairs x > y).
/// c(n1, n2, k) = c(n1 - 1, n2, k - n2) + c(n1, n2 - 1, k): the largest value
/// is either an x (above all n2 y's) or a y.
std::vector<double> u_counts(size_t n1, size_t n2) {
  // table[j] holds c(i, j, .) for the current i.
  std::vector<std::vector<double>> table(n2 + 1);
  for (size_t j = 0; j <= n2; ++j) table[j] = {1.0};  // i = 0: U is 0, one arrangement.
  for (size_t i = 1; i <= n1; ++i) {
    std::vector<std::vector<double>> next(n2 + 1);
    next[0] = {1.0};  // j = 0: one arrangement, U = 0.
    for (size_t j = 1; j <= n2; ++j) {
      std::vector<double> c(i * j + 1, 0.0);
      const std::vector<double>& x_top = table[j];     // c(i - 1, j, .), shifted by j
      const std::vector<double>& y_top = next[j - 1];  // c(i, j - 1, .)
      for (size_t k = 0; k < x_top.size(); ++k) c[k + j] += x_top[k];
      for (size_t k = 0; k < y_top.size(); ++k) c[k] += y_top[k];
      next[j] = std::move(c);
    }
    table = std::move(next);
  }
  return table[n2];
}

}  // namespace

UTest mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  UTest t;
  t.n1 = x.size();
  t.n2 = y.size();
  if (x.empty() || y.empty()) return t;

  // Rank the pooled sample, ties getting their average rank.
  const size_t n = t.n1 + t.n2;
  std::vector<std::pair<double, bool>> pooled;  // (value, from x)
  pooled.reserve(n);
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double group = static_cast<double>(j - i);
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_x += rank;
    }
    if (j - i > 1) ties = true;
    tie_term += group * group * group - group;
    i = j;
  }
  const double n1 = static_cast<double>(t.n1), n2 = static_cast<double>(t.n2);
  t.u = rank_sum_x - n1 * (n1 + 1) / 2;

  if (!ties && t.n1 <= kExactLimit && t.n2 <= kExactLimit) {
    const std::vector<double> counts = u_counts(t.n1, t.n2);
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    const auto u = static_cast<size_t>(std::llround(t.u));
    double at_most = 0, at_least = 0;
    for (size_t k = 0; k < counts.size(); ++k) {
      if (k <= u) at_most += counts[k];
      if (k >= u) at_least += counts[k];
    }
    t.p_value = std::min(1.0, 2 * std::min(at_most, at_least) / total);
    t.method = UTestMethod::kExact;
    return t;
  }

  const double nn = static_cast<double>(n);
  const double mu = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((nn + 1) - tie_term / (nn * (nn - 1)));
  t.method = UTestMethod::kNormal;
  if (variance <= 0) {  // Every value tied: no evidence either way.
    t.p_value = 1;
    return t;
  }
  const double z = (std::abs(t.u - mu) - 0.5) / std::sqrt(variance);
  if (z <= 0) {
    t.p_value = 1;
    return t;
  }
  const boost::math::normal standard;
  t.p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(standard, z)));
  return t;
}

double smallest_u_p_value(size_t n1, size_t n2) {
  if (n1 == 0 || n2 == 0) return 1;
  const double log_choose = std::lgamma(static_cast<double>(n1 + n2 + 1)) -
                            std::lgamma(static_cast<double>(n1 + 1)) - std::lgamma(static_cast<double>(n2 + 1));
  return std::min(1.0, 2 * std::exp(-log_choose));
}

}  // namespace perflab::reports
