// Reading result documents and grouping their runs into points.
#include "reports/result_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "harness/error.h"
#include "harness/scoring.h"
#include "harness/text.h"

namespace perflab::reports {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// What identifies a point: the spec without its seeds, overrides and
/// requested backend.
json point_key(const SpecView& spec) {
  json toggles = json::object();
  for (const auto& [name, on] : spec.toggles_requested) toggles[name] = on;
  return {{"workload", spec.workload},
          {"preset", spec.preset},
          {"params", spec.params},
          {"backend", spec.backend},
          {"threads", spec.threads ? json(*spec.threads) : json()},
          {"toggles_requested", toggles}};
}

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// Every (key, text) a point could be labelled with, in label order.
std::vector<std::pair<std::string, std::string>> label_candidates(const json& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("workload", value_text(spec["workload"]));
  out.emplace_back("preset", "preset=" + value_text(spec["preset"]));
  out.emplace_back("backend", "backend=" + value_text(spec["backend"]));
  out.emplace_back("threads", "threads=" + value_text(spec["threads"]));
  for (const auto& [k, v] : spec["params"].items()) out.emplace_back(k, k + "=" + value_text(v));
  for (const auto& [k, v] : spec["toggles_requested"].items()) {
    out.emplace_back(k, k + "=" + on_off(v.is_boolean() && v.get<bool>()));
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
    p.label = texts.empty() ? value_text(p.spec["workload"]) + " " + value_text(p.spec["preset"])
                            : join(texts, " ");
  }
}

RunEntry run_entry(const RunView& r, const fs::path& result_path) {
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
  for (const QualityPointView& q : r.quality_curve) e.quality_curve.push_back({q.epoch, q.value});
  e.log = result_path.parent_path() / r.log;
  e.result = result_path;
  e.profile = r.profile;
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
      set.results.push_back({f, read_result_view(f)});
    } catch (const UsageError& e) {
      set.skipped.push_back(e.what());  // "<path>: <reason>"
    }
  }
  return set;
}

Score Point::score() const {
  std::vector<RunOutcome> outcomes;
  for (const RunEntry& r : runs) outcomes.push_back({r.seed, r.success, r.time_to_train_s, r.throughput, r.reason});
  return score_runs(outcomes, kind);
}

double Point::median_throughput() const {
  std::vector<double> t;
  for (const RunEntry& r : runs) t.push_back(r.throughput);
  return percentile(t, 50);
}

std::optional<double> Point::param_number(const std::string& key) const {
  const json& params = spec["params"];
  auto it = params.find(key);
  if (it == params.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string Point::spec_text(const std::string& key) const {
  auto it = spec.find(key);
  return it == spec.end() ? "" : value_text(*it);
}

bool Point::is_toggle(const std::string& key) const {
  return spec["toggles_requested"].is_object() && spec["toggles_requested"].contains(key);
}

std::string Point::title_without(const std::vector<std::string>& drop) const {
  std::vector<std::string> parts = {value_text(spec["workload"]),
                                    "preset=" + value_text(spec["preset"])};
  for (const auto& [key, text] : label_parts) {
    if (key != "workload" && key != "preset" && !contains(drop, key)) parts.push_back(text);
  }
  return join(parts, " ");
}

std::vector<Point> group_points(const ResultSet& set) {
  std::vector<Point> points;
  std::map<json, size_t> index;
  for (const LoadedResult& res : set.results) {
    const ResultView& v = res.view;
    json key = point_key(v.spec);
    auto [it, inserted] = index.emplace(key, points.size());
    if (inserted) {
      Point p;
      p.spec = key;
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
    for (const RunView& r : v.runs) p.runs.push_back(run_entry(r, res.path));
  }
  auto order = [](const Point& p) {
    std::vector<bool> toggles;
    for (const auto& [k, v] : p.spec["toggles_requested"].items()) {
      toggles.push_back(v.is_boolean() && v.get<bool>());
    }
    return std::make_tuple(p.spec["workload"], p.spec["preset"], p.spec["params"],
                           p.spec["backend"], p.spec["threads"], toggles);
  };
  std::stable_sort(points.begin(), points.end(),
                   [&](const Point& a, const Point& b) { return order(a) < order(b); });
  assign_labels(points);
  return points;
}

}  // namespace perflab::reports
