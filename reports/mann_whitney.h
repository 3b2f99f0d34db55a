// The two-sided Mann-Whitney U test (Wilcoxon rank-sum) on two independent
// samples: does one tend to give larger values than the other? Used by
// `perflab compare` and `perflab history check` on repetitions of a metric.
// A pure function; the normal distribution comes from Boost.Math.
#pragma once

#include <cstddef>
#include <vector>

namespace perflab::reports {

/// How a p-value was obtained.
enum class UTestMethod {
  kExact,   ///< The exact null distribution of U (no ties, both samples <= kExactLimit).
  kNormal,  ///< Normal approximation with tie and continuity correction.
  kNone     ///< A sample was empty: no test.
};

/// The outcome of a U test.
struct UTest {
  double u = 0;        ///< U of the first sample: pairs (x, y) with x > y, ties counting 1/2.
  double p_value = 1;  ///< Two-sided.
  UTestMethod method = UTestMethod::kNone;
  size_t n1 = 0, n2 = 0;
};

/// Samples up to this size (each) without ties use the exact distribution.
inline constexpr size_t kExactLimit = 20;

/// Two-sided Mann-Whitney U test of `x` against `y`. Exact for small samples
/// without ties (p = 2 min(P(U <= u), P(U >= u)), capped at 1); otherwise the
/// normal approximation with the tie-corrected variance and a continuity
/// correction of 1/2, as scipy.stats.mannwhitneyu computes them.
UTest mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

/// The smallest two-sided p-value any data can give with samples of n1 and
/// n2 values (all of one sample above the other, no ties): 2 / C(n1 + n2, n1).
/// When it exceeds the significance level the test cannot detect anything.
double smallest_u_p_value(size_t n1, size_t n2);

}  // namespace perflab::reports
