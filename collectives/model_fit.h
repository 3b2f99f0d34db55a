// Calibration of the at-scale model (collectives/model.h) from measured
// runs: per (op, algorithm), the two multipliers of the model's terms,
//   time ~= latency_scale * latency_model + transfer_scale * bytes / (1000 * algbw_model),
// fitted by least squares on relative error, so a fit made at the sizes and
// scales measured carries to the others through the model's own structure.
// Pure: the points are read by whoever has them (`perflab model --calibrate`
// reads them in reports/collectives_measurements.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/model.h"

namespace perflab::collectives {

/// One measured collective: what ran, on how many ranks and nodes, how many
/// bytes, how long one operation took, and which algorithm NCCL used.
struct MeasuredPoint {
  CollOp op = CollOp::kAllReduce;
  int nranks = 0;
  int nnodes = 1;
  uint64_t bytes = 0;
  double time_us = 0;
  NcclAlgo algo = NcclAlgo::kRing;
  std::string where;  ///< "file:line", for messages.
};

/// The fit of one (op, algorithm).
struct TermFit {
  CollOp op = CollOp::kAllReduce;
  NcclAlgo algo = NcclAlgo::kRing;
  int points = 0;
  TermScales scales;
  /// True when both terms were fitted; false when the points could not
  /// separate them (one size, or a negative term) and one common scale was
  /// fitted instead.
  bool separated = true;
  /// Relative time error (predicted / measured - 1) over the points, before
  /// (the model as preset) and after calibration: root mean square and the
  /// largest magnitude.
  double rms_before = 0, max_before = 0, rms_after = 0, max_after = 0;
};

struct CalibrationResult {
  Calibration calibration;
  std::vector<TermFit> fits;  ///< One per (op, algorithm), in key order.
};

/// Fits every (op, algorithm) that has points. UsageError (one line, naming
/// the point's `where`) for a point the model cannot place: ranks not a
/// multiple of nodes, fewer than 2 ranks, time not positive, or an algorithm
/// the preset cannot run there (e.g. CollNet on a preset without SHARP).
CalibrationResult calibrate(const std::vector<MeasuredPoint>& points, const LinkPreset& link);

}  // namespace perflab::collectives
