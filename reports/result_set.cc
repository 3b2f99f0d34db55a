// Reading result documents and grouping their runs into points.
#include "reports/result_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "harness/error.h"
#include "harness/result.h"
#include "harness/text.h"

namespace perflab::reports {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

double number_or(const json& j, const char* key, double fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string string_or(const json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

/// Reads one file; an empty string and `doc` set, or the reason it is unusable.
std::string read_one(const fs::path& path, json& doc) {
  std::ifstream in(path);
  if (!in) return "cannot read";
  doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return "not valid JSON";
  std::string problem = validate_result(doc);
  return problem.empty() ? "" : "not a perflab result: " + problem;
}

json point_key(const json& spec) {
  return {{"workload", spec["workload"]},
          {"preset", spec["preset"]},
          {"params", spec["params"]},
          {"backend", spec["backend"]},
          {"threads", spec.value("threads", json())},
          {"toggles_requested", spec["toggles_requested"]}};
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

RunEntry read_run(const json& r, const fs::path& result_path) {
  RunEntry e;
  e.seed = r["seed"].is_number_unsigned() ? r["seed"].get<uint64_t>() : 0;
  e.success = r["status"] == "success";
  e.reason = string_or(r, "reason", "");
  e.time_to_train_s = number_or(r, "time_to_train_s", 0);
  e.throughput = number_or(r, "throughput_samples_per_s", 0);
  e.epochs = number_or(r, "epochs", 0);
  e.iterations = static_cast<int64_t>(number_or(r, "iterations", 0));
  const json& it = r["iteration_ms"];
  if (it.is_object()) {
    e.iteration_ms_mean = number_or(it, "mean", 0);
    e.iteration_ms_n = static_cast<size_t>(number_or(it, "n", 0));
  }
  if (r["quality_curve"].is_array()) {
    for (const auto& q : r["quality_curve"]) {
      if (q.is_object())
        e.quality_curve.push_back({number_or(q, "epoch", 0), number_or(q, "value", 0)});
    }
  }
  e.log = result_path.parent_path() / string_or(r, "log", "");
  e.result = result_path;
  return e;
}

std::vector<ToggleStatus> read_toggles(const json& toggles) {
  std::vector<ToggleStatus> out;
  if (!toggles.is_object()) return out;
  for (const auto& [name, t] : toggles.items()) {
    if (!t.is_object()) continue;
    out.push_back({name, t.value("requested", false), t.value("in_effect", false),
                   string_or(t, "reason", "")});
  }
  return out;
}

}  // namespace

ResultSet load_result_set(const std::vector<fs::path>& paths) {
  std::set<fs::path> files;
  for (const fs::path& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
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
    json doc;
    std::string problem = read_one(f, doc);
    if (problem.empty()) {
      set.results.push_back({f, std::move(doc)});
    } else {
      set.skipped.push_back(fmt::format("{}: {}", f.string(), problem));
    }
  }
  return set;
}

Score Point::score() const {
  std::vector<std::optional<double>> times;
  for (const RunEntry& r : runs) {
    times.push_back(r.success ? std::optional<double>(r.time_to_train_s) : std::nullopt);
  }
  return olympic_mean(times);
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
    json key = point_key(res.doc["spec"]);
    auto [it, inserted] = index.emplace(key, points.size());
    if (inserted) {
      Point p;
      p.spec = key;
      p.toggles = read_toggles(res.doc["toggles"]);
      p.plan = res.doc["plan"];
      const json& quality = res.doc["quality"];
      p.metric = string_or(quality, "metric", "quality");
      if (quality.contains("target") && quality["target"].is_number()) {
        p.target = quality["target"].get<double>();
      }
      points.push_back(std::move(p));
    }
    Point& p = points[it->second];
    p.sources.push_back(res.path);
    for (const auto& r : res.doc["runs"]) p.runs.push_back(read_run(r, res.path));
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
