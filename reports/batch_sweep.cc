// Batch-size sweep table: convergence cost against iteration speed.
#include "reports/batch_sweep.h"

#include <algorithm>
#include <map>
#include <set>

#include "reports/statistics.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

/// The point's batch size, through the parameter its workload declares.
std::optional<int64_t> batch_size_of(const Point& p) {
  if (p.batch_param.empty()) return std::nullopt;
  std::optional<double> b = p.param_number(p.batch_param);
  if (!b) return std::nullopt;
  return static_cast<int64_t>(*b);
}

/// Parameters that may change with the batch size inside one sweep: the
/// workload's batch size and learning rate, and the schedule names.
std::vector<std::string> coupled_params(const Point& p) {
  std::vector<std::string> out(kBatchCoupledParams.begin(), kBatchCoupledParams.end());
  for (const std::string& name : {p.batch_param, p.learning_rate_param}) {
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

BatchSweepRow make_row(const Point& p, int64_t batch) {
  BatchSweepRow row;
  row.point_label = p.label;
  row.batch_size = batch;
  if (!p.learning_rate_param.empty()) row.learning_rate = p.param_number(p.learning_rate_param);
  row.iterations_per_epoch = p.plan.iterations_per_epoch.value_or(0);
  row.runs = p.runs.size();
  std::vector<double> epochs, iterations, iteration_ms;
  for (const RunEntry& r : p.runs) {
    if (r.iteration_ms_n > 0) iteration_ms.push_back(r.iteration_ms_mean);
    if (!r.success) continue;
    ++row.converged;
    epochs.push_back(r.epochs);
    iterations.push_back(static_cast<double>(r.iterations));
  }
  if (!epochs.empty()) {
    row.epochs_mean = mean(epochs);
    row.iterations_mean = mean(iterations);
  }
  if (epochs.size() >= 2) row.epochs_stddev = sample_stddev(epochs);
  if (!iteration_ms.empty()) row.iteration_ms = mean(iteration_ms);
  row.time_to_train = p.score();
  return row;
}

}  // namespace

std::vector<BatchSweep> batch_sweeps(const std::vector<Point>& points) {
  std::map<json, std::vector<const Point*>> groups;
  std::vector<json> order;
  for (const Point& p : points) {
    // Epochs to converge exist only for runs trained to a target.
    if (p.kind != RunMode::kTimeToTrain || !batch_size_of(p)) continue;
    json key = p.key();
    for (const std::string& k : coupled_params(p)) key["params"].erase(k);
    auto [it, inserted] = groups.emplace(key, std::vector<const Point*>{});
    if (inserted) order.push_back(key);
    it->second.push_back(&p);
  }
  std::vector<BatchSweep> out;
  for (const json& key : order) {
    std::vector<const Point*>& group = groups[key];
    std::set<int64_t> sizes;
    for (const Point* p : group) sizes.insert(*batch_size_of(*p));
    if (sizes.size() < 2) continue;
    std::stable_sort(group.begin(), group.end(), [](const Point* a, const Point* b) {
      return *batch_size_of(*a) < *batch_size_of(*b);
    });
    BatchSweep sweep;
    sweep.title = group.front()->title_without(coupled_params(*group.front()));
    for (const Point* p : group) sweep.rows.push_back(make_row(*p, *batch_size_of(*p)));
    for (size_t i = 0; i < sweep.rows.size(); ++i) {
      const std::optional<double>& v = sweep.rows[i].time_to_train.value;
      if (v && (!sweep.best || *v < *sweep.rows[*sweep.best].time_to_train.value)) sweep.best = i;
    }
    if (sweep.best) sweep.rows[*sweep.best].best = true;
    out.push_back(std::move(sweep));
  }
  return out;
}

}  // namespace perflab::reports
