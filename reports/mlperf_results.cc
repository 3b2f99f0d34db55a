// MLPerf result folders: runs from logs, the summarizer's score, RCP normalisation.
#include "reports/mlperf_results.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/mlperf_benchmarks.h"
#include "harness/scoring.h"
#include "harness/subprocess.h"

namespace perflab::reports {
namespace fs = std::filesystem;

namespace {

bool is_result_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.rfind("result_", 0) == 0 && p.extension() == ".txt";
}

void apply_rcps(MlperfScore& s, const fs::path& rcps) {
  fs::path file = rcps;
  std::error_code ec;
  if (fs::is_directory(rcps, ec)) file = rcps / ("rcps_" + s.benchmark + ".json");
  if (!fs::exists(file, ec)) {
    s.rcp_note = fmt::format("no RCPs for {} in {}", s.benchmark, rcps.string());
    return;
  }
  std::optional<int64_t> batch;
  std::vector<std::optional<double>> converged;
  for (const MlperfRun& r : s.runs) {
    if (!batch) batch = r.global_batch_size;
    converged.push_back(r.ok ? r.converged_at : std::nullopt);
  }
  if (!batch) {
    s.rcp_note = "no global_batch_size in the logs: RCP check not possible";
    return;
  }
  RcpCheckOptions options;
  options.submission_runs = mlperf_benchmark(s.benchmark).submission_runs;
  const RcpCheck c = check_rcp(read_rcps(file), s.benchmark, *batch, converged, options);
  s.rcp_note = fmt::format("RCP check {}: {}", verdict_name(c.verdict), c.explanation);
  if (c.verdict == RcpVerdict::kPassed) s.rcp_factor = c.normalization_factor;
  s.normalized_minutes = normalized_score(s.olympic_minutes, s.rcp_factor);
}

/// rcp_checker's folder of the mlperf_logging that `python3` imports, asked
/// once per process; empty when python3 or the package is missing.
const fs::path& installed_rcp_checker() {
  static const fs::path folder = [] {
    if (!find_program("python3")) return fs::path();
    try {
      const ProgramOutput out = run_program(
          {"python3", "-c", "import os, mlperf_logging.rcp_checker as r; print(os.path.dirname(r.__file__))"});
      std::string dir = out.out;
      while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
      return out.exit_status == 0 ? fs::path(dir) : fs::path();
    } catch (const Error&) {
      return fs::path();
    }
  }();
  return folder;
}

/// "4.0.0" from a path component such as "training_results_v4.0" or "v4.0.1".
std::optional<std::string> version_in_path(const fs::path& results) {
  static const std::regex version(R"((?:^|[^0-9A-Za-z])v([0-9]+)\.([0-9]+)(?:\.([0-9]+))?(?:$|[^0-9]))");
  std::error_code ec;
  const fs::path absolute = fs::absolute(results, ec);
  std::optional<std::string> found, results_folder;
  for (const fs::path& part : ec ? results : absolute) {
    std::smatch m;
    const std::string name = part.string();
    if (std::regex_search(name, m, version)) {
      const std::string v = fmt::format("{}.{}.{}", m[1].str(), m[2].str(), m[3].matched ? m[3].str() : "0");
      found = v;
      // MLCommons' result repositories: training_results_v4.0.
      if (name.rfind("training_results_v", 0) == 0) results_folder = v;
    }
  }
  return results_folder ? results_folder : found;  // a results repository's, else the innermost
}

/// (major, minor, patch) of "training_4.1.0"; nullopt for other names.
std::optional<std::tuple<int, int, int>> training_version(const std::string& folder) {
  static const std::regex name(R"(training_([0-9]+)\.([0-9]+)\.([0-9]+))");
  std::smatch m;
  if (!std::regex_match(folder, m, name)) return std::nullopt;
  return std::make_tuple(std::stoi(m[1].str()), std::stoi(m[2].str()), std::stoi(m[3].str()));
}

MlperfScore score(std::string system, std::string benchmark, std::vector<MlperfRun> runs, const fs::path& rcps) {
  MlperfScore s;
  s.system = std::move(system);
  s.benchmark = std::move(benchmark);
  s.runs = std::move(runs);
  s.dropped_each_end = mlperf_dropped_scores(s.benchmark);
  std::vector<double> minutes;
  for (const MlperfRun& r : s.runs) {
    if (r.ok) minutes.push_back(r.minutes);
    else ++s.failed;
  }
  s.olympic_minutes = mlperf_olympic_average(minutes, s.failed, s.dropped_each_end);
  if (!s.olympic_minutes) {
    s.no_score_reason = s.failed > s.dropped_each_end
                            ? fmt::format("{} runs failed, more than the {} MLPerf drops", s.failed, s.dropped_each_end)
                            : fmt::format("{} runs are too few to drop {} from each end", minutes.size(), s.dropped_each_end);
  }
  if (rcps.empty()) {
    const RcpSource source = default_rcps(s.runs.empty() ? fs::path() : s.runs.front().file, s.benchmark);
    if (source.path.empty()) {
      s.rcp_note = source.note;
    } else {
      apply_rcps(s, source.path);
      s.rcp_note = source.note + "; " + s.rcp_note;
    }
  } else if (rcps != kNoRcps) {
    apply_rcps(s, rcps);
  }
  return s;
}

}  // namespace

RcpSource default_rcps_in(const fs::path& checker, const fs::path& results, const std::string& benchmark) {
  const std::string file = "rcps_" + benchmark + ".json";
  std::error_code ec;
  if (const std::optional<std::string> v = version_in_path(results)) {
    // The version the results are for: its RCPs, or none (as its summarizer).
    const fs::path folder = checker / ("training_" + *v);
    if (fs::exists(folder / file, ec)) {
      return {folder, fmt::format("mlperf_logging's training_{} RCPs (the version the results' path names)", *v)};
    }
    if (fs::is_directory(folder, ec)) {
      return {{}, fmt::format("no RCP normalisation: mlperf_logging's training_{} (the version the results' path "
                              "names) has no RCPs for {}",
                              *v, benchmark)};
    }
  }
  const std::optional<std::string> named = version_in_path(results);
  std::optional<std::tuple<int, int, int>> newest;
  fs::path best;
  for (auto it = fs::directory_iterator(checker, ec); !ec && it != fs::end(it); it.increment(ec)) {
    const auto v = training_version(it->path().filename().string());
    if (v && fs::exists(it->path() / file, ec) && (!newest || *v > *newest)) {
      newest = v;
      best = it->path();
    }
  }
  if (best.empty()) {
    return {{}, fmt::format("no RCP normalisation: mlperf_logging ({}) has no RCPs for {}", checker.string(), benchmark)};
  }
  return {best, fmt::format("mlperf_logging's {} RCPs (the newest for {}{}; --rcps picks another version)",
                            best.filename().string(), benchmark,
                            named ? fmt::format("; this mlperf_logging has no training_{}, which the path names", *named)
                                  : "")};
}

RcpSource default_rcps(const fs::path& results, const std::string& benchmark) {
  const fs::path& checker = installed_rcp_checker();
  if (checker.empty()) {
    return {{}, "no RCP normalisation: mlperf_logging is not installed (python3 -m pip install mlperf-logging) "
                "and no --rcps was given"};
  }
  return default_rcps_in(checker, results, benchmark);
}

size_t mlperf_dropped_scores(const std::string& benchmark) { return mlperf_benchmark(benchmark).dropped_each_end; }

MlperfRun mlperf_run(const MllogFile& log, const fs::path& file, const std::string& benchmark) {
  MlperfRun r;
  r.file = file;
  r.benchmark = benchmark;
  if (const MllogEvent* b = log.first("submission_benchmark"); b != nullptr && b->value.is_string()) {
    r.benchmark = b->value.get<std::string>();
  }
  if (const MllogEvent* g = log.first("global_batch_size"); g != nullptr && g->value.is_number_integer()) {
    r.global_batch_size = g->value.get<int64_t>();
  }
  const MllogEvent* start = log.first("run_start");
  const MllogEvent* stop = log.first("run_stop");
  // A status of the wrong type is a bad line, named, not an exception.
  const nlohmann::json* status = nullptr;
  if (stop != nullptr) {
    if (auto it = stop->metadata.find("status"); it != stop->metadata.end()) status = &*it;
  }
  if (log.bad_lines > 0) r.problem = "a bad :::MLLOG line (" + log.first_problem + ")";
  else if (start == nullptr) r.problem = "no run_start";
  else if (stop == nullptr) r.problem = "no run_stop";
  else if (status != nullptr && !status->is_string()) {
    r.problem = fmt::format("line {}: run_stop's metadata.status is {}, not a string", stop->line, status->type_name());
  } else if (status == nullptr || status->get<std::string>() != "success") {
    r.problem = "run_stop status '" + (status == nullptr ? std::string() : status->get<std::string>()) + "'";
  }
  if (start != nullptr && stop != nullptr) r.minutes = (stop->time_ms - start->time_ms) / 60000.0;
  if (r.problem.empty() && !std::isfinite(r.minutes)) r.problem = "run_start or run_stop time_ms out of range";
  if (r.problem.empty() && r.minutes < 0) {
    r.problem = fmt::format("run_stop (line {}, time_ms {}) comes before run_start (line {}, time_ms {})",
                            stop->line, stop->time_ms, start->line, start->time_ms);
  }
  r.ok = r.problem.empty();
  if (!r.ok) return r;
  const char* field = mlperf_benchmark(r.benchmark).counts_samples ? "samples_count" : "epoch_num";
  for (const MllogEvent& e : log.events) {
    if (e.line > stop->line) break;
    if ((e.key == "eval_accuracy" || e.key == "eval_error") && e.metadata.contains(field) &&
        e.metadata[field].is_number()) {
      const double v = e.metadata[field].get<double>();
      r.converged_at = mlperf_benchmark(r.benchmark).counts_samples ? v : std::round(v * 1000.0) / 1000.0;
    }
  }
  return r;
}

bool is_mlperf_input(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return fs::exists(path, ec) && path.extension() != ".json";
  bool results = false;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it->path().filename() == "result.json") return false;
    results |= is_result_file(it->path());
  }
  return results;
}

std::vector<MlperfScore> load_mlperf(const fs::path& path, const fs::path& rcps) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    const MlperfRun run = mlperf_run(read_mllog(path), path, path.stem().string());
    return {score("-", run.benchmark, {run}, rcps)};
  }
  std::map<std::pair<std::string, std::string>, std::vector<fs::path>> groups;  // (system, benchmark) -> files
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (!is_result_file(it->path()) || it->is_directory()) continue;
    const fs::path folder = it->path().parent_path();
    groups[{folder.parent_path().filename().string(), folder.filename().string()}].push_back(it->path());
  }
  if (ec) throw Error(fmt::format("{}: cannot list: {}", path.string(), ec.message()));
  if (groups.empty()) throw UsageError(fmt::format("{}: no MLPerf result_*.txt files", path.string()));
  std::vector<MlperfScore> out;
  for (auto& [key, files] : groups) {
    std::sort(files.begin(), files.end());
    std::vector<MlperfRun> runs;
    for (const fs::path& f : files) runs.push_back(mlperf_run(read_mllog(f), f, key.second));
    out.push_back(score(key.first, key.second, std::move(runs), rcps));
  }
  return out;
}

std::vector<MetricSamples> mlperf_metric_samples(const std::vector<MlperfScore>& scores) {
  std::vector<MetricSamples> out;
  for (const MlperfScore& s : scores) {
    const std::string point = "mlperf:" + s.system + "/" + s.benchmark;
    const std::string label = s.benchmark + (s.system == "-" ? "" : " on " + s.system);
    MetricSamples t{point, label, "time_to_train_min", "min", true, {}, s.failed};
    for (const MlperfRun& r : s.runs) {
      if (r.ok) t.values.push_back(r.minutes);
    }
    if (!t.values.empty()) out.push_back(std::move(t));
    if (s.olympic_minutes) out.push_back({point, label, "score_min", "min", true, {*s.olympic_minutes}, 0});
    if (s.normalized_minutes) out.push_back({point, label, "normalized_score_min", "min", true, {*s.normalized_minutes}, 0});
  }
  return out;
}

std::string mlperf_score_line(const MlperfScore& s) {
  std::string line = fmt::format("{} on {}: {} runs, {} failed; ", s.benchmark, s.system, s.runs.size(), s.failed);
  line += s.olympic_minutes ? fmt::format("olympic mean {:.6f} min", *s.olympic_minutes) : "no score (" + s.no_score_reason + ")";
  if (s.normalized_minutes) line += fmt::format("; normalised {:.6f} min (RCP factor {:.6f})", *s.normalized_minutes, s.rcp_factor);
  if (!s.rcp_note.empty()) line += "; " + s.rcp_note;
  return line;
}

std::string render_mlperf_scores_markdown(const std::vector<MlperfScore>& scores, const std::string& title) {
  auto cell = [](std::string text) {
    std::string out;
    for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string md = "# " + title + "\n\nScored as mlperf_logging's result summarizer scores them: minutes from "
                   "run_start to run_stop; a failed run counts as the slowest; the olympic mean drops the "
                   "benchmark's number of scores at each end (4 for unet3d, 1 otherwise).\n\n";
  md += "| system | benchmark | runs | failed | olympic mean (min) | normalised (min) | RCP |\n|---|---|--:|--:|--:|--:|---|\n";
  for (const MlperfScore& s : scores) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", cell(s.system), cell(s.benchmark), s.runs.size(), s.failed,
                      s.olympic_minutes ? fmt::format("{:.6f}", *s.olympic_minutes) : "no score: " + s.no_score_reason,
                      s.normalized_minutes ? fmt::format("{:.6f}", *s.normalized_minutes) : "-", cell(s.rcp_note));
  }
  for (const MlperfScore& s : scores) {
    md += fmt::format("\n## {} on {}\n\n| run | minutes | status |\n|---|--:|---|\n", cell(s.benchmark), cell(s.system));
    for (const MlperfRun& r : s.runs) {
      md += fmt::format("| {} | {:.4f} | {} |\n", cell(r.file.filename().string()), r.minutes,
                        r.ok ? "success" : cell(r.problem));
    }
  }
  return md;
}

}  // namespace perflab::reports
