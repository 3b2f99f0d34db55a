// One self-contained HTML page: inline CSS, tables and inline SVG charts;
// no scripts, nothing fetched. Every piece of text is escaped.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reports/render.h"
#include "reports/render_format.h"
#include "reports/html_page.h"
#include "reports/svg_chart.h"
#include "reports/workload_sections.h"

namespace perflab::reports {
namespace {

using detail::ci_text;
using detail::converged;
using detail::fixed;
using detail::last_qualities;
using detail::mean_sd;
using detail::run_times;
using detail::score_text;
using detail::speedup_text;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string esc(const std::string& s) { return xml_escape(s); }

/// A table whose highlighted rows are the best ones.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::vector<size_t>& text_columns, const std::vector<bool>& highlight = {}) {
  std::vector<std::string> classes;
  for (bool h : highlight) classes.push_back(h ? "best" : "");
  return html_table(header, rows, text_columns, classes);
}

std::string quality_chart(const Point& p) {
  LineChart chart;
  chart.title = p.label + ": " + p.metric + " by epoch";
  chart.width = 540;
  chart.x_label = "epoch";
  chart.y_label = p.metric;
  for (const RunEntry& r : p.runs) {
    Series s;
    s.name = fmt::format("seed {}{}", r.seed, r.success ? "" : " (aborted)");
    for (const CurvePoint& q : r.quality_curve) {
      s.x.push_back(q.epoch);
      s.y.push_back(q.value);
      s.tooltips.push_back(
          fmt::format("seed {}: epoch {:.3f}, {} {:.4f}", r.seed, q.epoch, p.metric, q.value));
    }
    chart.series.push_back(std::move(s));
  }
  if (p.target) {
    chart.reference_y = p.target;
    chart.reference_label = fmt::format("target {:.4f}", *p.target);
  }
  return render_line_chart(chart);
}

std::string matrix_chart(const ToggleMatrix& m) {
  BarChart chart;
  chart.title = "Toggle matrix: " + m.title;
  chart.y_label = m.time_to_train ? "mean time to train (s)" : "mean throughput (samples/s)";
  size_t best = m.rows.size();
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const auto& v = m.rows[i].value;
    if (!v) continue;
    if (best == m.rows.size() ||
        (m.time_to_train ? *v < *m.rows[best].value : *v > *m.rows[best].value)) {
      best = i;
    }
  }
  for (size_t i = 0; i < m.rows.size(); ++i) {
    const ToggleMatrixRow& row = m.rows[i];
    Bar b;
    b.label = row.combination;
    for (char& ch : b.label) ch = ch == '+' ? '\n' : ch;
    b.value = row.ci.n ? row.ci.mean : 0;
    if (row.ci.n >= 2) {
      b.low = row.ci.low;
      b.high = row.ci.high;
    }
    b.annotation = row.ci.n ? speedup_text(row.speedup) : "no data";
    b.highlight = i == best;
    b.tooltip = fmt::format("{}: mean {}, 95% CI {}, score {}, speedup {}", row.combination,
                            fixed(row.ci.n ? std::optional<double>(row.ci.mean) : std::nullopt, 3),
                            ci_text(row.ci, 3), fixed(row.value, 3), speedup_text(row.speedup));
    chart.bars.push_back(std::move(b));
  }
  return render_bar_chart(chart);
}

std::string sweep_chart(const BatchSweep& s) {
  LineChart chart;
  chart.title = "Batch-size sweep: " + s.title;
  chart.x_label = "batch size (log2)";
  chart.y_label = "epochs to converge (mean)";
  chart.y_right_label = "time to train (s)";
  chart.log2_x = true;
  Series epochs{"epochs to converge", {}, {}, false, false, {}};
  Series ttt{"time to train (s)", {}, {}, true, true, {}};
  for (const BatchSweepRow& r : s.rows) {
    const double b = static_cast<double>(r.batch_size);
    epochs.x.push_back(b);
    epochs.y.push_back(r.epochs_mean.value_or(kNaN));
    epochs.tooltips.push_back(fmt::format("batch {}: {} epochs", r.batch_size,
                                          mean_sd(r.epochs_mean, r.epochs_stddev, 2)));
    ttt.x.push_back(b);
    ttt.y.push_back(r.time_to_train.value.value_or(kNaN));
    ttt.tooltips.push_back(fmt::format("batch {}: {} s{}", r.batch_size,
                                       score_text(r.time_to_train), r.best ? " (best)" : ""));
  }
  chart.series = {std::move(epochs), std::move(ttt)};
  return render_line_chart(chart);
}

std::string throughput_section(const SweepReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Point& p : r.points) {
    if (!scored_as_rate(p.kind)) continue;
    rows.push_back({p.label, std::to_string(p.runs.size()), std::to_string(converged(p)),
                    fixed(p.median_throughput(), 0), fixed(detail::mean_iteration_ms(p), 4)});
  }
  if (rows.empty()) return "";
  std::string h = "<h2>Throughput per point</h2>\n";
  return h + table({"point", "runs", "passed the correctness gate", "samples/s (median)",
                    "iteration (ms, mean of runs)"},
                   rows, {0});
}

std::string points_section(const SweepReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Point& p : r.points) {
    if (scored_as_rate(p.kind)) continue;
    rows.push_back({p.label, std::to_string(p.runs.size()), std::to_string(converged(p)),
                    score_text(p.score()), run_times(p), fixed(p.median_throughput(), 0),
                    p.metric + " " + last_qualities(p)});
  }
  if (rows.empty()) return throughput_section(r);
  std::string h = throughput_section(r) + "<h2>Time to train per point</h2>\n";
  h += table({"point", "runs", "converged", "time to train (s)", "per-run times (s)",
              "samples/s (median)", "last quality per run"},
             rows, {0, 4, 6});
  h += "<div class=\"charts\">\n";
  for (const Point& p : r.points) {
    if (p.kind == RunMode::kTimeToTrain) h += quality_chart(p);
  }
  return h + "</div>\n";
}

std::string matrix_section(const ToggleMatrix& m) {
  const int d = m.time_to_train ? 2 : 0;
  std::vector<std::vector<std::string>> rows;
  for (const ToggleMatrixRow& row : m.rows) {
    std::string not_in = toggles_not_in_effect(row.toggles);
    rows.push_back({row.combination, std::to_string(row.runs), std::to_string(row.succeeded),
                    row.value ? fixed(row.value, d) : "no score (" + row.no_value_reason + ")",
                    ci_text(row.ci, d), speedup_text(row.speedup), toggles_in_effect(row.toggles),
                    not_in.empty() ? "-" : not_in});
  }
  std::string h = "<h2>Toggle matrix: " + esc(m.title) + "</h2>\n";
  h += table({"toggles requested", "runs", "converged", m.value_name(), "95% CI of mean", "speedup",
              "in effect", "not in effect (why)"},
             rows, {0, 6, 7});
  if (!m.has_baseline) h += "<p class=\"note\">No all-off row: speedups are n/a.</p>\n";
  h += "<p class=\"note\">Bars: mean over converged runs with its 95% t interval; label: speedup "
       "of the score over the all-off row.</p>\n";
  return h + matrix_chart(m);
}

std::string sweep_section(const BatchSweep& s) {
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> best;
  for (const BatchSweepRow& row : s.rows) {
    rows.push_back({std::to_string(row.batch_size),
                    row.learning_rate ? fmt::format("{}", *row.learning_rate) : "-",
                    std::to_string(row.iterations_per_epoch),
                    mean_sd(row.epochs_mean, row.epochs_stddev, 2), fixed(row.iterations_mean, 0),
                    fixed(row.iteration_ms, 3), score_text(row.time_to_train),
                    fmt::format("{}/{}", row.converged, row.runs), row.best ? "best" : ""});
    best.push_back(row.best);
  }
  std::string h = "<h2>Batch-size sweep: " + esc(s.title) + "</h2>\n";
  h += table({"batch size", "learning rate", "iterations/epoch", "epochs to converge (mean ± sd)",
              "iterations (mean)", "iteration (ms)", "time to train (s)", "converged", ""},
             rows, {8}, best);
  return h + sweep_chart(s);
}

}  // namespace

std::string render_sweep_html(const SweepReport& r) {
  std::string h = html_page_start(r.title);
  h += "<h1>" + esc(r.title) + "</h1>\n";
  h += fmt::format(
      "<p>{} result file(s), {} run(s), {} point(s); {} file(s) skipped. Time to train is the "
      "olympic mean over a point's runs (an aborted run counts as the slowest; more than one "
      "gives no score).</p>\n",
      r.results, r.runs, r.points.size(), r.skipped.size());
  h += points_section(r);
  for (const ToggleMatrix& m : r.toggle_matrices) h += matrix_section(m);
  for (const BatchSweep& s : r.batch_sweeps) h += sweep_section(s);
  h += render_workload_html(r.read);
  if (!r.skipped.empty()) {
    h += "<h2>Skipped files</h2>\n<ul>\n";
    for (const std::string& s : r.skipped) h += "<li>" + esc(s) + "</li>\n";
    h += "</ul>\n";
  }
  return h + "</body>\n</html>\n";
}

}  // namespace perflab::reports
