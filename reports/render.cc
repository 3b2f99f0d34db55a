// Building a sweep report from a result set, and its Markdown rendering.
#include "reports/render.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "harness/stats.h"
#include "reports/inference_report.h"
#include "reports/render_format.h"
#include "reports/workload_sections.h"

namespace perflab::reports {
namespace {

using detail::ci_text;
using detail::converged;
using detail::fixed;
using detail::last_qualities;
using detail::cell;
using detail::markdown_table;
using detail::mean_sd;
using detail::run_times;
using detail::score_text;
using detail::speedup_text;


/// A run's LoadGen latency at `percentile`, in ms; empty when not reported.
std::optional<double> loadgen_latency_ms(const RunEntry& e, double percentile) {
  const std::optional<double> ns = loadgen_latency_ns(e.inference, percentile);
  return ns ? std::optional<double>(*ns / 1e6) : std::nullopt;
}

std::string inference_table(const SweepReport& r) {
  std::string md =
      "| point | scenario | runs | VALID | samples/s (median) | p50 (ms, median of runs) | p99 (ms, median of runs) "
      "|\n|---|---|---|---|---|---|---|\n";
  for (const Point& p : r.points) {
    if (p.kind != RunMode::kInference) continue;
    int valid = 0;
    std::vector<double> p50, p99;
    std::string scenario = "-";
    for (const RunEntry& e : p.runs) {
      if (!e.inference.is_object()) continue;
      scenario = e.inference.value("scenario", std::string("-"));
      if (e.inference.value("valid", false)) ++valid;
      if (const auto v = loadgen_latency_ms(e, 50)) p50.push_back(*v);
      if (const auto v = loadgen_latency_ms(e, 99)) p99.push_back(*v);
    }
    auto median_of = [](std::vector<double> v) -> std::optional<double> {
      if (v.empty()) return std::nullopt;
      return percentile(v, 50);
    };
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", cell(p.label), cell(scenario), p.runs.size(), valid,
                      fixed(p.median_throughput(), 0), fixed(median_of(p50), 3), fixed(median_of(p99), 3));
  }
  return md;
}

std::string throughput_table(const SweepReport& r) {
  std::string md =
      "| point | runs | passed the correctness gate | samples/s (median) | iteration (ms, mean of "
      "runs) |\n|---|---|---|---|---|\n";
  for (const Point& p : r.points) {
    if (p.kind != RunMode::kThroughput) continue;
    md += fmt::format("| {} | {} | {} | {} | {} |\n", cell(p.label), p.runs.size(), converged(p),
                      fixed(p.median_throughput(), 0), fixed(detail::mean_iteration_ms(p), 4));
  }
  return md;
}

std::string points_table(const SweepReport& r) {
  std::string md =
      "| point | runs | converged | time to train (s) | per-run times (s) | samples/s (median) | "
      "last "
      "quality per run |\n|---|---|---|---|---|---|---|\n";
  for (const Point& p : r.points) {
    if (p.kind != RunMode::kTimeToTrain) continue;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} {} |\n", cell(p.label), p.runs.size(),
                      converged(p), cell(score_text(p.score())), run_times(p),
                      fixed(p.median_throughput(), 0), cell(p.metric), last_qualities(p));
  }
  return md;
}

std::string matrix_table(const ToggleMatrix& m) {
  const int d = m.time_to_train ? 2 : 0;
  std::string md = fmt::format(
      "| toggles requested | runs | converged | {} | 95% CI of mean | speedup | in effect | not in "
      "effect (why) |\n|---|---|---|---|---|---|---|---|\n",
      m.value_name());
  for (const ToggleMatrixRow& row : m.rows) {
    std::string not_in = toggles_not_in_effect(row.toggles);
    md += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(row.combination), row.runs,
        row.succeeded,
        row.value ? fixed(row.value, d) : cell("no score (" + row.no_value_reason + ")"),
        ci_text(row.ci, d), speedup_text(row.speedup), cell(toggles_in_effect(row.toggles)),
        not_in.empty() ? "-" : cell(not_in));
  }
  if (!m.has_baseline) md += "\nNo all-off row: speedups are n/a.\n";
  return md;
}

std::string sweep_table(const BatchSweep& s) {
  std::string md =
      "| batch size | learning rate | iterations/epoch | epochs to converge (mean ± sd) | "
      "iterations "
      "(mean) | iteration (ms) | time to train (s) | converged | |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const BatchSweepRow& row : s.rows) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {}/{} | {} |\n", row.batch_size,
                      row.learning_rate ? fmt::format("{}", *row.learning_rate) : "-",
                      row.iterations_per_epoch, mean_sd(row.epochs_mean, row.epochs_stddev, 2),
                      fixed(row.iterations_mean, 0), fixed(row.iteration_ms, 3),
                      cell(score_text(row.time_to_train)), row.converged, row.runs,
                      row.best ? "**best**" : "");
  }
  return md;
}

}  // namespace

SweepReport make_sweep_report(const ResultSet& set, std::string title) {
  SweepReport r;
  r.title = std::move(title);
  r.results = set.results.size();
  r.points = group_points(set);
  for (const Point& p : r.points) r.runs += p.runs.size();
  r.toggle_matrices = toggle_matrices(r.points);
  r.batch_sweeps = batch_sweeps(r.points);
  r.skipped = set.skipped;
  for (const LoadedResult& l : set.results) r.read.push_back(l.view);
  return r;
}

std::string render_sweep_markdown(const SweepReport& r) {
  std::string md = fmt::format("# {}\n\n", r.title);
  md += fmt::format("{} result file(s), {} run(s), {} point(s); {} file(s) skipped.\n\n", r.results,
                    r.runs, r.points.size(), r.skipped.size());
  bool any_ttt = false, any_throughput = false, any_inference = false;
  for (const Point& p : r.points) {
    (p.kind == RunMode::kTimeToTrain ? any_ttt : p.kind == RunMode::kThroughput ? any_throughput : any_inference) = true;
  }
  if (any_ttt) {
    md +=
        "Time to train is the olympic mean over a point's runs (an aborted run counts as the "
        "slowest; more than one gives no score).\n\n";
    md += "## Time to train per point\n\n" + points_table(r);
  }
  if (any_throughput) {
    md += "\n## Throughput per point\n\nThroughput runs time a fixed number of iterations; a run "
          "that fails its correctness gate is not counted.\n\n" +
          throughput_table(r);
  }
  if (any_inference) {
    md += "\n## Inference per point\n\nMLPerf Inference scenarios run by MLCommons LoadGen (--mode inference): "
          "samples/s and latencies are LoadGen's; VALID counts the runs LoadGen judged valid.\n\n" +
          inference_table(r);
  }
  for (const ToggleMatrix& m : r.toggle_matrices) {
    md += fmt::format("\n## Toggle matrix: {}\n\n", m.title) + matrix_table(m);
  }
  for (const BatchSweep& s : r.batch_sweeps) {
    md += fmt::format("\n## Batch-size sweep: {}\n\n", s.title) + sweep_table(s);
  }
  md += render_workload_markdown(r.read);
  if (!r.skipped.empty()) {
    md += "\n## Skipped files\n\n";
    for (const std::string& s : r.skipped) md += "- " + s + "\n";
  }
  return md;
}

}  // namespace perflab::reports
