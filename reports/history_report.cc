// history check / trend / export over the series of the history database.
#include "reports/history_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "harness/sweep.h"

namespace perflab::reports {

HistoryCheck check_history(const std::vector<HistorySeries>& series, int64_t latest_run, size_t baseline_runs,
                           const CompareOptions& options) {
  HistoryCheck check;
  check.latest_run = latest_run;
  std::vector<MetricSamples> base, latest;
  std::set<int64_t> used;
  for (const HistorySeries& s : series) {
    auto at = std::find_if(s.values.begin(), s.values.end(), [&](const HistoryValue& v) { return v.run_id == latest_run; });
    if (at == s.values.end()) continue;
    check.machine = s.machine;
    MetricSamples b{s.point, s.label, s.metric, s.unit, s.lower_is_better, {}, 0, {}, false};
    const auto first = at - std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(baseline_runs), at - s.values.begin());
    for (auto it = first; it != at; ++it) {
      b.values.insert(b.values.end(), it->samples.begin(), it->samples.end());
      b.failed += it->failed;
      used.insert(it->run_id);
    }
    if (b.values.empty()) continue;
    latest.push_back({s.point, s.label, s.metric, s.unit, s.lower_is_better, at->samples, at->failed, {}, false});
    base.push_back(std::move(b));
  }
  check.baseline_runs.assign(used.begin(), used.end());
  if (!base.empty()) check.comparison = compare_samples(base, latest, options);
  return check;
}

std::vector<SeriesChanges> series_changes(HistoryDb& db, std::vector<HistorySeries> series,
                                          const ChangePointOptions& options) {
  options.validate();
  std::vector<SeriesChanges> out;
  const std::string key = options.key();
  for (HistorySeries& s : series) {
    std::vector<double> values;
    for (const HistoryValue& v : s.values) values.push_back(v.median);
    ChangePointState state;
    if (auto cached = db.cached_state(s, key)) {
      if (auto parsed = ChangePointState::from_json(*cached)) state = *parsed;
    }
    const size_t before = state.analyzed;
    state = update_change_points(values, std::move(state), options);
    if (state.analyzed != before) db.store_state(s, key, state.to_json());
    out.push_back({std::move(s), state.found});
  }
  return out;
}

std::string render_trend(const std::vector<SeriesChanges>& all, const std::string& since) {
  std::string out;
  for (const SeriesChanges& sc : all) {
    const HistorySeries& s = sc.series;
    out += fmt::format("{} ({}, {} is better) on machine {}\n", s.name(), s.unit,
                       s.lower_is_better ? "lower" : "higher", s.machine);
    out += fmt::format("  {:>6}  {:<20}  {:<12}  {:>12}  {:>3}\n", "run", "timestamp", "revision", "median", "n");
    std::map<size_t, const ChangePoint*> at;
    for (const ChangePoint& c : sc.changes) at[c.index] = &c;
    for (size_t i = 0; i < s.values.size(); ++i) {
      const HistoryValue& v = s.values[i];
      if (v.timestamp < since) continue;
      std::string mark;
      if (auto it = at.find(i); it != at.end()) {
        mark = fmt::format("  <- change {:+.1f}% at {} (p = {:.3g})", 100 * it->second->change, v.git_revision,
                           it->second->p_value);
      }
      out += fmt::format("  {:>6}  {:<20}  {:<12}  {:>12.6g}  {:>3}{}\n", v.run_id, v.timestamp,
                         v.git_revision.substr(0, 12), v.median, v.samples.size(), mark);
    }
    if (sc.changes.empty()) out += "  no change point\n";
  }
  if (all.empty()) out += "no series match\n";
  return out;
}

namespace {

/// Prometheus label value escaping: backslash, double quote, newline.
std::string label_value(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

/// [a-zA-Z0-9_] kept, anything else as '_'.
std::string name_part(const std::string& text) {
  std::string out;
  for (char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_') ? c : '_';
  return out;
}

std::string point_id(const std::string& point) { return stable_hash(point).substr(8); }

/// The quantile of "iteration_ms_p50" (0.5), when the metric is one.
std::optional<std::string> iteration_quantile(const std::string& metric) {
  const std::string prefix = "iteration_ms_p";
  if (metric.rfind(prefix, 0) != 0 || metric.size() == prefix.size()) return std::nullopt;
  const std::string digits = metric.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 3) return std::nullopt;
  return fmt::format("{:g}", std::stod(digits) / 100);
}

}  // namespace

OpenMetricsName openmetrics_name(const std::string& metric, const std::string& unit) {
  if (metric == "time_to_train_s") {
    return {"perflab_time_to_train_seconds", "gauge", 1, "", "time to train (run_start to run_stop), seconds"};
  }
  if (metric == "time_to_train_min") {
    return {"perflab_time_to_train_seconds", "gauge", 60, "", "time to train (run_start to run_stop), seconds"};
  }
  if (metric == "score_min") {
    return {"perflab_mlperf_score_seconds", "gauge", 60, "", "MLPerf score: olympic mean time to train, seconds"};
  }
  if (metric == "normalized_score_min") {
    return {"perflab_mlperf_normalized_score_seconds", "gauge", 60, "",
            "MLPerf score normalised by the reference convergence points, seconds"};
  }
  if (metric == "throughput") {
    return {"perflab_throughput_per_second", "gauge", 1, "", "throughput: samples (see the unit label) per second"};
  }
  if (auto q = iteration_quantile(metric)) {
    return {"perflab_iteration_seconds", "summary", 1e-3, *q, "time of one iteration (quantiles over a run), seconds"};
  }
  return {"perflab_" + name_part(metric), "gauge", 1, "", fmt::format("perflab metric {} ({})", metric, unit)};
}

std::string render_openmetrics(const std::vector<HistorySeries>& series) {
  struct Family {
    OpenMetricsName name;
    std::vector<const HistorySeries*> members;
  };
  std::map<std::string, Family> families;  // by name: each family's samples contiguous
  for (const HistorySeries& s : series) {
    if (s.values.empty()) continue;
    const OpenMetricsName name = openmetrics_name(s.metric, s.unit);
    Family& f = families[name.family];
    if (f.members.empty()) f.name = name;
    f.members.push_back(&s);
  }
  std::string out;
  for (auto& [family, f] : families) {
    // One label set's samples together (a summary's quantiles of one point
    // and machine are one metric point), in a fixed order.
    std::stable_sort(f.members.begin(), f.members.end(), [](const HistorySeries* a, const HistorySeries* b) {
      return std::tie(a->point, a->machine, a->label) < std::tie(b->point, b->machine, b->label);
    });
    out += fmt::format("# HELP {} {}; the latest recorded median of each point\n", family, f.name.help);
    out += fmt::format("# TYPE {} {}\n", family, f.name.type);
    for (const HistorySeries* s : f.members) {
      const HistoryValue& v = s->values.back();
      const OpenMetricsName n = openmetrics_name(s->metric, s->unit);
      if (!std::isfinite(v.median)) continue;
      std::string labels = fmt::format("point=\"{}\",point_id=\"{}\",machine=\"{}\",revision=\"{}\"",
                                       label_value(s->label), point_id(s->point), label_value(s->machine),
                                       label_value(v.git_revision));
      if (s->metric == "throughput") {
        // "sequences/s" -> unit="sequences": what a sample is.
        const std::string what = s->unit.substr(0, s->unit.find('/'));
        labels += fmt::format(",unit=\"{}\"", label_value(what));
      }
      if (!n.quantile.empty()) labels += fmt::format(",quantile=\"{}\"", n.quantile);
      out += fmt::format("{}{{{}}} {}\n", family, labels, fmt::format("{}", v.median * n.scale));
    }
  }
  out += "# EOF\n";
  return out;
}

}  // namespace perflab::reports
