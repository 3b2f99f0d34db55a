// Points -> per-metric repetitions.
#include "reports/metric_samples.h"

#include <functional>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/stats.h"
#include "base/text.h"
#include "reports/mlperf_results.h"

namespace perflab::reports {
namespace {

struct MetricDef {
  const char* name;
  const char* unit;
  bool lower_is_better;
  bool successful_only;
  std::function<std::optional<double>(const RunEntry&)> value;
};

const std::vector<MetricDef>& definitions() {
  static const std::vector<MetricDef> defs = {
      {"time_to_train_s", "s", true, true, [](const RunEntry& r) { return std::optional(r.time_to_train_s); }},
      {"throughput", "samples/s", false, true, [](const RunEntry& r) { return std::optional(r.throughput); }},
      {"iteration_ms_p50", "ms", true, false,
       [](const RunEntry& r) { return r.iteration_ms.n ? std::optional(r.iteration_ms.p50) : std::nullopt; }},
      {"iteration_ms_p90", "ms", true, false,
       [](const RunEntry& r) { return r.iteration_ms.n ? std::optional(r.iteration_ms.p90) : std::nullopt; }},
      {"iteration_ms_p99", "ms", true, false,
       [](const RunEntry& r) { return r.iteration_ms.n ? std::optional(r.iteration_ms.p99) : std::nullopt; }},
  };
  return defs;
}

}  // namespace

std::vector<std::string> set_params_of(const Point& point) {
  std::vector<std::string> names;
  for (const auto& [name, value] : point.spec.overrides) names.push_back(name);
  return names;
}

std::vector<MetricSamples> metric_samples(const std::vector<Point>& points) {
  std::vector<MetricSamples> out;
  for (const Point& p : points) {
    for (const MetricDef& d : definitions()) {
      if (std::string(d.name) == "time_to_train_s" && p.kind != RunMode::kTimeToTrain) continue;
      MetricSamples m{p.key().dump(), p.label, d.name, d.unit, d.lower_is_better, {}, 0, set_params_of(p)};
      for (const RunEntry& r : p.runs) {
        if (d.successful_only && !r.success) {
          ++m.failed;
          continue;
        }
        if (auto v = d.value(r)) m.values.push_back(*v);
      }
      if (!m.values.empty()) out.push_back(std::move(m));
    }
  }
  return out;
}

MetricInput load_metric_input(const std::vector<std::filesystem::path>& paths, const std::string& what,
                               const std::filesystem::path& rcps) {
  MetricInput in;
  std::vector<std::filesystem::path> perflab_paths;
  for (const auto& p : paths) {
    if (!is_mlperf_input(p)) {
      perflab_paths.push_back(p);
      continue;
    }
    for (const MlperfScore& s : load_mlperf(p, rcps)) {
      in.scores.push_back(mlperf_score_line(s));
      for (auto& m : mlperf_metric_samples({s})) in.samples.push_back(std::move(m));
    }
  }
  ResultSet set = load_result_set(perflab_paths);
  in.skipped = set.skipped;
  const std::vector<Point> points = group_points(set);
  for (auto& m : metric_samples(points)) in.samples.push_back(std::move(m));
  for (const Point& p : points) {
    PointProfiles profiled{p.key().dump(), p.label, {}, set_params_of(p)};
    for (const RunEntry& r : p.runs) {
      if (r.profile) profiled.runs.push_back(*r.profile);
    }
    if (!profiled.runs.empty()) in.profiles.push_back(std::move(profiled));
  }
  for (const LoadedResult& r : set.results) {
    if (in.created.empty() || r.view.created > in.created) {
      in.created = r.view.created;
      in.environment = r.view.environment;
    }
  }
  if (in.samples.empty()) {
    std::vector<std::string> names;
    for (const auto& p : paths) names.push_back(p.string());
    // Say why when files were there but unusable (the first reason).
    throw UsageError(fmt::format("{} ({}): no perflab result with a metric found{}", what, join(names, ", "),
                                 in.skipped.empty() ? "" : " (skipped " + in.skipped.front() + ")"));
  }
  return in;
}

double median(const std::vector<double>& values) { return percentile(values, 50); }

}  // namespace perflab::reports
