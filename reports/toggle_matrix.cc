// Toggle matrix: rows per toggle combination, CI and speedup over all-off.
#include "reports/toggle_matrix.h"

#include <fmt/format.h>

#include <map>

#include "base/text.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

ToggleMatrixRow make_row(const Point& p, bool time_to_train) {
  ToggleMatrixRow row;
  const std::vector<std::string> on = p.toggles_on();
  row.combination = on.empty() ? "all off" : join(on, "+");
  row.baseline = on.empty();
  row.point_label = p.label;
  row.toggles = p.toggles;
  row.runs = p.runs.size();
  std::vector<double> samples;
  for (const RunEntry& r : p.runs) {
    if (r.success) ++row.succeeded;
    // The interval, like the value, counts only runs that passed their gate
    // (reached the target, or passed the correctness check).
    if (!r.success) continue;
    samples.push_back(time_to_train ? r.time_to_train_s : r.throughput);
  }
  row.ci = mean_confidence_interval(samples);
  // Values as scoring rules them (harness/scoring.h): a throughput median
  // counts only runs that passed their gate.
  const Score s = p.score();
  if (time_to_train) {
    row.value = s.value;
    row.no_value_reason = s.reason;
  } else {
    row.value = p.median_throughput();
    if (!row.value) row.no_value_reason = scored_as_rate(p.kind) ? s.reason : "no run passed";
  }
  return row;
}

}  // namespace

std::string ToggleMatrix::value_name() const {
  return time_to_train ? "time to train (s)" : "throughput (samples/s)";
}

std::vector<ToggleMatrix> toggle_matrices(const std::vector<Point>& points) {
  std::map<json, std::vector<const Point*>> groups;
  std::vector<json> order;
  for (const Point& p : points) {
    json key = p.key();
    key.erase("toggles_requested");
    auto [it, inserted] = groups.emplace(key, std::vector<const Point*>{});
    if (inserted) order.push_back(key);
    it->second.push_back(&p);
  }
  std::vector<ToggleMatrix> out;
  for (const json& key : order) {
    const std::vector<const Point*>& group = groups[key];
    if (group.size() < 2) continue;
    ToggleMatrix m;
    std::vector<std::string> toggle_keys;
    for (const auto& [k, on] : group.front()->spec.toggles_requested) toggle_keys.push_back(k);
    m.title = group.front()->title_without(toggle_keys);
    for (const Point* p : group) {
      if (!p->target) m.time_to_train = false;
    }
    for (const Point* p : group) m.rows.push_back(make_row(*p, m.time_to_train));
    const ToggleMatrixRow* base = nullptr;
    for (const ToggleMatrixRow& r : m.rows) {
      if (r.baseline) base = &r;
    }
    m.has_baseline = base != nullptr;
    if (base && base->value && *base->value > 0) {
      for (ToggleMatrixRow& r : m.rows) {
        if (!r.value || *r.value <= 0) continue;
        r.speedup = m.time_to_train ? *base->value / *r.value : *r.value / *base->value;
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string toggles_in_effect(const std::vector<ToggleStatus>& toggles) {
  std::vector<std::string> names;
  for (const ToggleStatus& t : toggles) {
    if (t.in_effect) names.push_back(t.name);
  }
  return names.empty() ? "none" : join(names, ", ");
}

std::string toggles_not_in_effect(const std::vector<ToggleStatus>& toggles) {
  std::vector<std::string> parts;
  for (const ToggleStatus& t : toggles) {
    if (t.requested && !t.in_effect) {
      parts.push_back(t.reason.empty() ? t.name : fmt::format("{} ({})", t.name, t.reason));
    }
  }
  return join(parts, "; ");
}

}  // namespace perflab::reports
