// Small-sample statistics: mean, sample standard deviation, Student's t and
// the t confidence interval of a mean.
#include "reports/statistics.h"

#include <fmt/format.h>

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <string>

#include "base/error.h"

namespace perflab::reports {
namespace {

boost::math::students_t t_distribution(double degrees_of_freedom) {
  if (!(degrees_of_freedom > 0) || std::isinf(degrees_of_freedom)) {
    throw UsageError(fmt::format(
        "Student t: degrees of freedom must be positive and finite, got {}", degrees_of_freedom));
  }
  return boost::math::students_t(degrees_of_freedom);
}

}  // namespace

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double sample_stddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double m = mean(values);
  double squares = 0;
  for (double v : values) squares += (v - m) * (v - m);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

double student_t_quantile(double p, double degrees_of_freedom) {
  if (!(p > 0 && p < 1)) {
    throw UsageError(fmt::format("Student t quantile: probability must be in (0, 1), got {}", p));
  }
  return boost::math::quantile(t_distribution(degrees_of_freedom), p);
}

double student_t_cdf(double t, double degrees_of_freedom) {
  if (std::isnan(t)) throw UsageError("Student t cdf: argument is NaN");
  const auto dist = t_distribution(degrees_of_freedom);
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  return boost::math::cdf(dist, t);
}

MeanCi mean_confidence_interval(const std::vector<double>& values, double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw UsageError(fmt::format("confidence must be in (0, 1), got {}", confidence));
  }
  MeanCi ci;
  ci.n = values.size();
  ci.mean = mean(values);
  ci.low = ci.high = ci.mean;
  if (ci.n < 2) return ci;
  const double df = static_cast<double>(ci.n - 1);
  const double half_width = student_t_quantile((1 + confidence) / 2, df) * sample_stddev(values) /
                            std::sqrt(static_cast<double>(ci.n));
  ci.low = ci.mean - half_width;
  ci.high = ci.mean + half_width;
  return ci;
}

}  // namespace perflab::reports
