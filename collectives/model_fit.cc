// Least-squares calibration of the model's two terms (collectives/model_fit.h).
#include "collectives/model_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "base/error.h"

namespace perflab::collectives {
namespace {

/// The model's two terms at one point: latency L and transfer time T (us).
struct Row {
  double latency = 0, transfer = 0, measured = 0;
};

Row model_row(const MeasuredPoint& p, const LinkPreset& link) {
  if (p.nnodes <= 0 || p.nranks < 2 || p.nranks % p.nnodes != 0) {
    throw UsageError(fmt::format("{}: {} ranks on {} nodes: the model needs at least 2 ranks, the same "
                                 "number on every node",
                                 p.where, p.nranks, p.nnodes));
  }
  if (!(p.time_us > 0) || !std::isfinite(p.time_us) || p.bytes == 0) {
    throw UsageError(fmt::format("{}: time_us and bytes must be positive", p.where));
  }
  const Topology topo{p.nnodes, p.nranks / p.nnodes};
  try {
    validate_topology(topo, link);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", p.where, e.what()));
  }
  auto pr = predict_best_protocol(p.op, p.algo, p.bytes, topo, link);
  if (!pr) {
    throw UsageError(fmt::format("{}: {} {} on {} nodes x {} GPUs with preset '{}': {}", p.where,
                                 coll_op_name(p.op), nccl_algo_name(p.algo), topo.nodes, topo.gpus_per_node,
                                 link.name,
                                 unavailable_reason(p.op, p.algo, NcclProto::kSimple, topo, link)));
  }
  return {pr->terms.latency_us, static_cast<double>(p.bytes) / (1000.0 * pr->terms.algbw_gbs), p.time_us};
}

/// Relative errors of a*L + b*T against the measurements: (rms, max |e|).
std::pair<double, double> errors(const std::vector<Row>& rows, double a, double b) {
  double sum = 0, worst = 0;
  for (const Row& r : rows) {
    const double e = (a * r.latency + b * r.transfer) / r.measured - 1.0;
    sum += e * e;
    worst = std::max(worst, std::abs(e));
  }
  return {std::sqrt(sum / static_cast<double>(rows.size())), worst};
}

/// Minimises sum(((a L + b T) / y - 1)^2). Falls back to one common scale
/// when the 2x2 system is singular or gives a term <= 0.
TermFit fit_rows(const std::vector<Row>& rows) {
  double sll = 0, slt = 0, stt = 0, sl = 0, st = 0;
  std::set<double> distinct;
  for (const Row& r : rows) {
    const double l = r.latency / r.measured, t = r.transfer / r.measured;
    sll += l * l;
    slt += l * t;
    stt += t * t;
    sl += l;
    st += t;
    distinct.insert(r.transfer / (r.latency + r.transfer));
  }
  TermFit fit;
  const double det = sll * stt - slt * slt;
  double a = 0, b = 0;
  if (distinct.size() >= 2 && std::abs(det) > 1e-12 * sll * stt) {
    a = (sl * stt - st * slt) / det;
    b = (st * sll - sl * slt) / det;
  }
  if (!(a > 0) || !(b > 0)) {
    // One scale s on both terms: minimise sum((s x - 1)^2), x = (L + T) / y.
    double sxx = 0, sx = 0;
    for (const Row& r : rows) {
      const double x = (r.latency + r.transfer) / r.measured;
      sxx += x * x;
      sx += x;
    }
    a = b = sx / sxx;
    fit.separated = false;
  }
  fit.scales = {a, b};
  std::tie(fit.rms_before, fit.max_before) = errors(rows, 1.0, 1.0);
  std::tie(fit.rms_after, fit.max_after) = errors(rows, a, b);
  fit.points = static_cast<int>(rows.size());
  return fit;
}

}  // namespace

CalibrationResult calibrate(const std::vector<MeasuredPoint>& points, const LinkPreset& link) {
  if (points.empty()) throw UsageError("--calibrate: no measured points");
  std::map<std::pair<CollOp, NcclAlgo>, std::vector<Row>> groups;
  for (const MeasuredPoint& p : points) groups[{p.op, p.algo}].push_back(model_row(p, link));
  CalibrationResult result;
  for (const auto& [key, rows] : groups) {
    TermFit fit = fit_rows(rows);
    fit.op = key.first;
    fit.algo = key.second;
    result.calibration[key] = fit.scales;
    result.fits.push_back(fit);
  }
  return result;
}

}  // namespace perflab::collectives
