// `perflab compare`'s per-kernel section: where both sets profiled a point
// (--profile), each kernel's device time per iteration on either side, its
// change, and the kernels that appeared or went away, most changed first,
// so a regression names the kernel that got slower. The verdicts and the
// exit status stay compare's (reports/compare.h): this section explains.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reports/metric_samples.h"

namespace perflab::reports {

/// One kernel (or copy or memset row) of one point on both sides: the
/// median over each side's profiled runs, empty on a side that never ran it.
struct KernelChange {
  std::string kernel;
  std::string kind;                                         ///< "kernel", "memcpy", "memset".
  std::optional<double> base_us, candidate_us;              ///< Per iteration.
  std::optional<double> base_launches, candidate_launches;  ///< Per iteration.
  std::optional<double> base_share, candidate_share;

  /// candidate - base in us per iteration (a missing side counts 0).
  double delta_us() const { return candidate_us.value_or(0) - base_us.value_or(0); }
  /// candidate / base - 1; empty when either side is missing.
  std::optional<double> change() const;
};

/// A point profiled on both sides.
struct PointKernelComparison {
  std::string point, label;
  size_t base_runs = 0, candidate_runs = 0;
  double base_iteration_us = 0, candidate_iteration_us = 0;  ///< Medians.
  double base_kernels = 0, candidate_kernels = 0;            ///< Per iteration, medians.
  std::vector<KernelChange> kernels;                         ///< Largest |delta_us| first.
  std::string across_versions;  ///< How the keys differ when paired across versions (point_match.h), else "".
};

struct KernelComparison {
  std::vector<PointKernelComparison> points;
  /// Labels of points profiled on one side only.
  std::vector<std::string> only_base, only_candidate;
};

/// Pairs points by identity and compares their kernels.
KernelComparison compare_kernels(const std::vector<PointProfiles>& base,
                                 const std::vector<PointProfiles>& candidate);

/// Console and Markdown sections (the `top` most changed kernels per point);
/// "" when no point was profiled on either side.
std::string render_kernel_compare_console(const KernelComparison& c, size_t top = 10);
std::string render_kernel_compare_markdown(const KernelComparison& c, size_t top = 10);
nlohmann::json kernel_compare_to_json(const KernelComparison& c);

}  // namespace perflab::reports
