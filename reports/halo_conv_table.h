// The halo convolution's measurements, per point: the step, its parts timed
// alone (compute, halo transfer, weight-gradient all-reduce), the transfer
// the step left exposed, and, where the sweep has the twin points, the
// overlap efficiency (naive - overlap) / transfer and the cost against the
// unpartitioned convolution (one partition, same shape). Read from results
// only (runs[].facts and the plan), like every report.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/result_model.h"
#include "reports/svg_chart.h"

namespace perflab::reports {

/// Whether `result` is a halo_conv run.
bool is_halo_conv_result(const Result& result);

struct HaloConvRow {
  std::string shape;          ///< "1x3x20x12x14 -> 5, k=3, train"
  std::string backend;
  int partitions = 1;
  int ranks = 1;
  std::string halo;           ///< The variant as it ran.
  std::string overlap;        ///< "in effect", "not requested", "requested, not in effect: ..."
  double step_ms = 0;         ///< Median iteration.
  std::optional<double> compute_ms, transfer_ms, allreduce_ms;
  std::optional<double> exposed_ms;   ///< step - compute (>= 0): what the step spent beyond computing.
  /// (naive step - this step) / transfer, for overlap rows with a naive twin
  /// whose transfer is at least 1% of the step (below that the ratio is noise).
  /// Negative where the overlap made the step slower; its cell then says by
  /// how many milliseconds.
  std::optional<double> efficiency;
  std::optional<double> vs_whole;     ///< step / the one-partition point's step.
  /// scheme=hybrid: each part alone (level 1, level 2, gather, bottleneck,
  /// split), in that order; empty for the single layer.
  std::vector<std::pair<std::string, double>> hybrid_parts;
  double voxels_per_s = 0;
  std::optional<double> tflops;
};

/// One row per halo_conv point (results of other workloads are left out),
/// in shape, backend, partitions, variant order.
std::vector<HaloConvRow> halo_conv_rows(const std::vector<Result>& results);

std::vector<std::string> halo_conv_header();
std::vector<std::vector<std::string>> halo_conv_cells(const std::vector<HaloConvRow>& rows);

/// The console lines after `perflab run halo_conv`: the variant as it ran
/// and the step split into compute and exposed transfer ("" for other results).
std::string render_halo_conv_summary(const Result& result);

/// A stacked bar per point: compute, exposed transfer.
BarChart halo_conv_chart(const std::vector<HaloConvRow>& rows);

}  // namespace perflab::reports
