// `perflab history record|list|trend|check|export`: the nightly history in
// one SQLite file (reports/history_db.h).
#include <iostream>
#include <regex>

#include <fmt/format.h>

#include "harness/atomic_file.h"
#include "harness/cli/commands.h"
#include "base/error.h"
#include "base/utc_time.h"
#include "reports/dashboard.h"
#include "reports/history_report.h"

namespace perflab::cli {
namespace {

/// A UTC time as the history stores them, or a prefix of one: 2026-01-31,
/// 2026-01-31T08, 2026-01-31T08:30, 2026-01-31T08:30:00Z. Anything else
/// compared as text against the stored times (--since garbage listed all).
CLI::Validator utc_time_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        static const std::regex kTime(R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}(:[0-9]{2}(:[0-9]{2})?)?Z?)?$)");
        if (std::regex_match(text, kTime)) return std::string();
        return fmt::format("'{}' is not a UTC time such as 2026-01-31 or 2026-01-31T08:30:00Z", text);
      },
      "UTC");
}

struct HistoryArgs {
  std::string db = "perflab-history.sqlite";
  std::vector<std::string> inputs;
  std::string machine, revision, metric, point, since, out, rcps;
  size_t baseline = 10;
  double threshold = 5, alpha = 0.05;
  bool openmetrics = false;
  reports::ChangePointOptions changes;
};

int record(const HistoryArgs& a) {
  const std::vector<std::filesystem::path> paths(a.inputs.begin(), a.inputs.end());
  reports::MetricInput in = reports::load_metric_input(paths, "RESULTS", a.rcps);
  for (const auto& s : in.skipped) std::cerr << "perflab: skipped " << s << "\n";
  reports::NewHistoryRun run;
  run.timestamp = !in.created.empty() ? in.created : utc_now("%Y-%m-%dT%H:%M:%SZ");  // MLPerf logs carry no date of ours
  run.git_revision = !a.revision.empty() ? a.revision : in.environment.value("git_revision", std::string("unknown"));
  run.machine = !a.machine.empty() ? a.machine : reports::machine_fingerprint(in.environment);
  run.environment = in.environment;
  run.sources = a.inputs;
  run.metrics = std::move(in.samples);
  reports::HistoryDb db(a.db, true);
  std::vector<std::string> continued;
  const int64_t id = db.record(run, &continued);
  std::cout << fmt::format("recorded run {}: {} metrics, revision {}, machine {}, {}\n", id, run.metrics.size(),
                           run.git_revision, run.machine, run.timestamp);
  for (const auto& line : continued) std::cout << "continues " << line << "\n";
  for (const auto& s : in.scores) std::cout << s << "\n";
  return 0;
}

int list(const HistoryArgs& a) {
  reports::HistoryDb db(a.db, false);
  std::cout << fmt::format("{:>6}  {:<20}  {:<12}  {:<16}  {:>7}\n", "run", "timestamp", "revision", "machine", "metrics");
  for (const auto& r : db.runs(a.since)) {
    std::cout << fmt::format("{:>6}  {:<20}  {:<12}  {:<16}  {:>7}\n", r.id, r.timestamp, r.git_revision.substr(0, 12),
                             r.machine, r.metrics);
  }
  return 0;
}

int trend(const HistoryArgs& a) {
  reports::HistoryDb db(a.db, false);
  // Change points need the whole series (their cache covers it); --since only trims the output.
  auto series = db.series({a.metric, a.point, a.machine, "", std::nullopt});
  if (series.empty()) throw UsageError(fmt::format("{}: no series of metric '{}'{}", a.db, a.metric,
                                                   a.point.empty() ? "" : " matching '" + a.point + "'"));
  std::cout << reports::render_trend(reports::series_changes(db, std::move(series), a.changes), a.since);
  return 0;
}

/// The latest run against its rolling baseline.
reports::HistoryCheck latest_check(reports::HistoryDb& db, const reports::HistoryRun& latest, const HistoryArgs& a) {
  return reports::check_history(db.series({"", "", latest.machine, "", latest.id}), latest.id, a.baseline,
                                {a.threshold / 100, a.alpha});
}

int check(const HistoryArgs& a) {
  reports::HistoryDb db(a.db, false);
  const auto latest = db.latest_run();
  if (!latest) throw UsageError(fmt::format("{}: no run recorded yet", a.db));
  const auto c = latest_check(db, *latest, a);
  if (!c.comparison) {
    std::cout << fmt::format("run {}: no earlier run on machine {} to compare with; nothing checked\n", latest->id,
                             latest->machine);
    return 0;
  }
  std::cout << fmt::format("run {} (revision {}) against {} earlier runs on machine {}:\n", latest->id,
                           latest->git_revision, c.baseline_runs.size(), latest->machine);
  std::cout << reports::render_compare_console(*c.comparison);
  return c.comparison->regressed() ? 1 : 0;
}

int export_metrics(const HistoryArgs& a) {
  if (!a.openmetrics) throw UsageError("history export: choose a format (--openmetrics)");
  reports::HistoryDb db(a.db, false);
  const std::string text = reports::render_openmetrics(db.series({a.metric, a.point, a.machine, "", std::nullopt}));
  if (a.out.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(a.out, text);  // The textfile collector must never read half a file.
  }
  return 0;
}

int dashboard(const HistoryArgs& a) {
  reports::HistoryDb db(a.db, false);
  reports::Dashboard d;
  d.database = a.db;
  d.latest = db.latest_run();
  if (d.latest) d.check = latest_check(db, *d.latest, a);
  d.series = reports::series_changes(db, db.series({a.metric, a.point, a.machine, "", std::nullopt}), a.changes);
  write_file_atomically(a.out, reports::render_dashboard(d));
  std::cout << a.out << "\n";
  return 0;
}

}  // namespace

Command add_history(CLI::App& app) {
  auto* sub = app.add_subcommand("history", "Nightly history in one SQLite file: record, list, trend, check, dashboard, export");
  sub->require_subcommand(1);
  auto a = std::make_shared<HistoryArgs>();
  sub->add_option("--db", a->db, "History database (SQLite)")->capture_default_str();
  auto* rec = sub->add_subcommand("record", "Record results (files or folders) as one run");
  rec->add_option("results", a->inputs, "result.json files or folders; MLPerf result folders or MLLOG files")->required();
  rec->add_option("--machine", a->machine, "Machine name (default: a fingerprint of host, CPU and GPUs)");
  rec->add_option("--revision", a->revision, "Git revision measured (default: the results')");
  rec->add_option("--rcps", a->rcps, "MLPerf inputs: an RCP file or a folder of rcps_<benchmark>.json; none: no normalisation; default: mlperf_logging's RCPs for the version the results' path names (training_results_v4.0), else the newest");
  auto* lst = sub->add_subcommand("list", "List recorded runs");
  lst->add_option("--since", a->since, "Runs from this UTC time on (e.g. 2026-01-31)")->check(utc_time_text());
  auto* trd = sub->add_subcommand("trend", "A metric over the runs, with its change points");
  trd->add_option("metric", a->metric, "time_to_train_s, throughput, iteration_ms_p50, _p90, _p99")->required();
  trd->add_option("--since", a->since, "Show runs from this UTC time on")->check(utc_time_text());
  trd->add_option("--point", a->point, "Only points whose label contains this");
  trd->add_option("--machine", a->machine, "Only this machine fingerprint");
  trd->add_option("--window", a->changes.window, "Change points: values analysed at most")->capture_default_str();
  trd->add_option("--p-value", a->changes.p_value, "Change points: significance level")->capture_default_str();
  trd->add_option("--min-magnitude", a->changes.min_magnitude, "Change points: smallest relative change")
      ->capture_default_str();
  auto* chk = sub->add_subcommand("check", "The latest run against the runs before it on the same machine");
  chk->add_option("--baseline", a->baseline, "Earlier runs in the rolling baseline")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  chk->add_option("--threshold", a->threshold, "Smallest change that counts, in percent")->capture_default_str();
  chk->add_option("--alpha", a->alpha, "Significance level of the U test")->capture_default_str();
  chk->footer("Exit status: 0 nothing slower, 1 a metric got slower, 2 invalid input.");
  auto* dash = sub->add_subcommand("dashboard", "One self-contained HTML page: latest verdicts, change points, trends");
  dash->add_option("--out,-o", a->out, "HTML file to write")->required();
  dash->add_option("--baseline", a->baseline, "Earlier runs in the rolling baseline")->capture_default_str()
      ->check(CLI::Range(1, 1000));
  dash->add_option("--threshold", a->threshold, "Smallest change that counts, in percent")->capture_default_str();
  auto* exp = sub->add_subcommand("export", "Export the latest values");
  exp->add_flag("--openmetrics", a->openmetrics, "Prometheus / OpenMetrics text exposition")->required();
  exp->add_option("--out,-o", a->out, "File to write (atomically; default: standard output)");
  exp->add_option("--metric", a->metric, "Only this metric");
  return {sub, [=] {
            if (rec->parsed()) return record(*a);
            if (lst->parsed()) return list(*a);
            if (trd->parsed()) return trend(*a);
            if (chk->parsed()) return check(*a);
            if (dash->parsed()) return dashboard(*a);
            return export_metrics(*a);
          }};
}

}  // namespace perflab::cli
