// Reading result documents and grouping their runs into points.
#include "reports/result_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "base/error.h"
#include "harness/scoring.h"
#include "base/text.h"

namespace perflab::reports {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// What identifies a point: the spec without its seeds, overrides and
/// requested backend.
json point_key(const ResultSpec& spec) {
  json toggles = json::object();
  for (const auto& [name, on] : spec.toggles_requested) toggles[name] = on;
  json key = {{"workload", spec.workload},
              {"preset", spec.preset},
              {"params", spec.params},
              {"backend", spec.backend},
              {"threads", spec.threads ? json(*spec.threads) : json()},
              {"toggles_requested", toggles}};
  // --mode inference: LoadGen's settings tell points apart too (an Offline
  // and a Server run of one spec are two points). Absent otherwise, so other
  // points keep their keys (and the history its ids).
  if (spec.inference.is_object()) key["inference"] = spec.inference;
  return key;
}

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string threads_text(const ResultSpec& spec) { return spec.threads ? std::to_string(*spec.threads) : "null"; }

/// Every (key, text) a point could be labelled with, in label order.
std::vector<std::pair<std::string, std::string>> label_candidates(const ResultSpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("workload", spec.workload);
  out.emplace_back("preset", "preset=" + spec.preset);
  out.emplace_back("backend", "backend=" + spec.backend);
  out.emplace_back("threads", "threads=" + threads_text(spec));
  for (const auto& [k, v] : spec.params.items()) out.emplace_back(k, k + "=" + value_text(v));
  for (const auto& [k, on] : spec.toggles_requested) out.emplace_back(k, k + "=" + on_off(on));
  if (spec.inference.is_object()) {
    for (const auto& [k, v] : spec.inference.items()) out.emplace_back("inference." + k, k + "=" + value_text(v));
  }
  return out;
}

void assign_labels(std::vector<Point>& points) {
  std::map<std::string, std::set<std::string>> seen;
  std::map<std::string, size_t> count;
  for (const Point& p : points) {
    for (const auto& [k, text] : label_candidates(p.spec)) {
      seen[k].insert(text);
      ++count[k];
    }
  }
  for (Point& p : points) {
    std::vector<std::string> texts;
    for (const auto& [k, text] : label_candidates(p.spec)) {
      if (seen[k].size() > 1 || count[k] != points.size()) {
        p.label_parts.emplace_back(k, text);
        texts.push_back(text);
      }
    }
    p.label = texts.empty() ? p.spec.workload + " " + p.spec.preset : join(texts, " ");
  }
}

RunEntry run_entry(const ResultRun& r, const fs::path& result_path) {
  RunEntry e;
  e.seed = r.seed;
  e.success = r.success();
  e.reason = r.reason;
  e.time_to_train_s = r.time_to_train_s;
  e.throughput = r.throughput;
  e.epochs = r.epochs.value_or(0);
  e.iterations = r.iterations;
  e.iteration_ms_mean = r.iteration_ms.mean;
  e.iteration_ms_n = r.iteration_ms.n;
  e.iteration_ms = r.iteration_ms;
  for (const ResultQualityPoint& q : r.quality_curve) e.quality_curve.push_back({q.epoch, q.value});
  e.log = result_path.parent_path() / r.log;
  e.result = result_path;
  e.profile = r.profile;
  if (r.inference) e.inference = *r.inference;
  return e;
}

}  // namespace

ResultSet load_result_set(const std::vector<fs::path>& paths) {
  std::set<fs::path> files;
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        // Hidden folders are work folders (.NAME.partial-PID@HOST) of runs
        // still being written, or folders that are not results: not read.
        if (it->is_directory() && it->path().filename().string().rfind('.', 0) == 0) {
          it.disable_recursion_pending();
          continue;
        }
        if (it->path().filename() == "result.json" && !it->is_directory()) {
          files.insert(it->path().lexically_normal());
        }
      }
      if (ec) throw Error(fmt::format("{}: cannot list: {}", p.string(), ec.message()));
    } else if (fs::exists(p, ec)) {
      files.insert(p.lexically_normal());
    } else {
      throw UsageError(fmt::format("{}: no such file or folder", p.string()));
    }
  }
  ResultSet set;
  for (const fs::path& f : files) {
    try {
      set.results.push_back({f, read_result(f)});
    } catch (const UsageError& e) {
      set.skipped.push_back(e.what());  // "<path>: <reason>"
    }
  }
  return set;
}

namespace {

std::vector<RunOutcome> outcomes_of(const std::vector<RunEntry>& runs) {
  std::vector<RunOutcome> outcomes;
  for (const RunEntry& r : runs) outcomes.push_back({r.seed, r.success, r.time_to_train_s, r.throughput, r.reason});
  return outcomes;
}

}  // namespace

Score Point::score() const { return score_runs(outcomes_of(runs), kind); }

json Point::key() const { return point_key(spec); }

std::optional<double> Point::median_throughput() const {
  if (scored_as_rate(kind)) return score().value;
  return median_passing_throughput(outcomes_of(runs));
}

std::optional<double> Point::param_number(const std::string& name) const { return spec.param_number(name); }

bool Point::is_toggle(const std::string& name) const {
  for (const auto& [k, on] : spec.toggles_requested) {
    if (k == name) return true;
  }
  return false;
}

std::vector<std::string> Point::toggles_on() const {
  std::vector<std::string> on;
  for (const auto& [k, requested] : spec.toggles_requested) {
    if (requested) on.push_back(k);
  }
  return on;
}

std::string Point::title_without(const std::vector<std::string>& drop) const {
  std::vector<std::string> parts = {spec.workload, "preset=" + spec.preset};
  for (const auto& [name, text] : label_parts) {
    if (name != "workload" && name != "preset" && !contains(drop, name)) parts.push_back(text);
  }
  return join(parts, " ");
}

std::vector<Point> group_points(const ResultSet& set) {
  std::vector<Point> points;
  std::map<json, size_t> index;
  for (const LoadedResult& res : set.results) {
    const Result& v = res.view;
    json key = point_key(v.spec);
    auto [it, inserted] = index.emplace(key, points.size());
    if (inserted) {
      Point p;
      p.spec = v.spec;
      p.toggles = v.toggles;
      p.plan = v.plan;
      p.kind = v.kind;
      p.batch_param = v.spec.batch_param;
      p.learning_rate_param = v.spec.learning_rate_param;
      p.metric = v.quality.metric.empty() ? "quality" : v.quality.metric;
      p.target = v.quality.target;
      points.push_back(std::move(p));
    }
    Point& p = points[it->second];
    p.sources.push_back(res.path);
    for (const ResultRun& r : v.runs) p.runs.push_back(run_entry(r, res.path));
  }
  auto order = [](const Point& p) {
    std::vector<bool> toggles;
    for (const auto& [k, on] : p.spec.toggles_requested) toggles.push_back(on);
    return std::make_tuple(p.spec.workload, p.spec.preset, p.spec.params, p.spec.backend,
                           p.spec.threads.value_or(-1), toggles);
  };
  std::stable_sort(points.begin(), points.end(),
                   [&](const Point& a, const Point& b) { return order(a) < order(b); });
  assign_labels(points);
  return points;
}

}  // namespace perflab::reports
