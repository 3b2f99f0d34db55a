// Small-sample statistics for sweeps and reference convergence points: the
// mean, the sample standard deviation, Student's t distribution and the
// two-sided t confidence interval of a mean. Pure functions; the t
// distribution comes from Boost.Math.
#pragma once

#include <cstddef>
#include <vector>

namespace perflab::reports {

/// The mean of a sample and a two-sided confidence interval around it.
struct MeanCi {
  double mean = 0;  ///< Arithmetic mean; 0 for an empty sample.
  double low = 0;   ///< Lower end of the interval.
  double high = 0;  ///< Upper end of the interval.
  size_t n = 0;     ///< Sample size.
};

/// Arithmetic mean; 0 for an empty sample.
double mean(const std::vector<double>& values);

/// Sample standard deviation (divisor n - 1, numpy's ddof=1); 0 for n < 2.
double sample_stddev(const std::vector<double>& values);

/// Quantile of Student's t distribution: the t with P(T <= t) = p, for p in
/// (0, 1) and degrees_of_freedom > 0. Throws UsageError outside that domain.
double student_t_quantile(double p, double degrees_of_freedom);

/// Cumulative distribution of Student's t: P(T <= t). Throws UsageError for
/// degrees_of_freedom <= 0 or a NaN argument.
double student_t_cdf(double t, double degrees_of_freedom);

/// Two-sided Student-t interval of the mean at `confidence` (in (0, 1)):
/// mean -+ t_{(1+confidence)/2, n-1} * s / sqrt(n). With n < 2 there is no
/// spread to estimate: low == high == mean.
MeanCi mean_confidence_interval(const std::vector<double>& values, double confidence = 0.95);

}  // namespace perflab::reports
