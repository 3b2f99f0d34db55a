// Time-to-train reports.
#include "reports/ttt_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "harness/scoring.h"
#include "reports/report_sections.h"

namespace perflab::reports {
namespace {

std::string ttt_score_line(const Result& result) {
  if (!result.score.time_to_train_s) return "no score: " + result.score.reason;
  return fmt::format("{:.3f} s ({})", *result.score.time_to_train_s, result.score.method);
}

/// The median samples/s of the runs that reached the target (harness/scoring.h).
std::string median_throughput(const Result& result) {
  std::vector<RunOutcome> outcomes;
  for (const ResultRun& r : result.runs) outcomes.push_back({r.seed, r.success(), r.time_to_train_s, r.throughput, r.reason});
  const std::optional<double> median = median_passing_throughput(outcomes);
  return median ? fmt::format("{:.0f} samples/s (median over the runs that reached the target, training iterations only)", *median)
                : std::string("- (no run reached the target)");
}

std::string last_quality(const ResultRun& run) {
  if (run.quality_curve.empty()) return "-";
  return fmt::format("{:.4f}", run.quality_curve.back().value);
}

}  // namespace

std::string render_ttt_markdown(const Result& result) {
  const ResultQuality& quality = result.quality;
  std::string md = render_setup_markdown(result);
  std::string ceiling = quality.ceiling ? fmt::format("{:.4f}", *quality.ceiling) : std::string("unknown");
  if (quality.target) {
    md += fmt::format("- quality target: {} >= {:.4f} (best achievable: {})\n\n", quality.metric, *quality.target,
                      ceiling);
  } else {
    md += fmt::format("- quality target: the program's own ({} is its metric; its run_stop status says whether "
                      "it reached it)\n\n",
                      quality.metric);
  }
  md += render_toggles_markdown(result);
  md += "\n## Runs\n\n| # | seed | status | time to train (s) | epochs | last ";
  md += quality.metric;
  md += " | samples/s | iteration p50 (ms) | p99 (ms) |\n|---|---|---|---|---|---|---|---|---|\n";
  int i = 0;
  for (const ResultRun& r : result.runs) {
    // An external program's iterations are its own: not timed by perflab.
    const std::string p50 = r.iteration_ms.n > 0 ? fmt::format("{:.3f}", r.iteration_ms.p50) : "-";
    const std::string p99 = r.iteration_ms.n > 0 ? fmt::format("{:.3f}", r.iteration_ms.p99) : "-";
    md += fmt::format("| {} | {} | {} | {:.3f} | {} | {} | {:.0f} | {} | {} |\n", i++, r.seed, r.status,
                      r.time_to_train_s, r.epochs ? fmt::format("{:.2f}", *r.epochs) : "-", last_quality(r),
                      r.throughput, p50, p99);
  }
  md += fmt::format("\n**Time to train:** {}  \n", ttt_score_line(result));
  md +=
      fmt::format("**Throughput:** {}\n", median_throughput(result));

  md += "\n## Quality curves\n\n| run | epoch | samples | " + quality.metric +
        " | train loss | elapsed (s) |\n|---|---|---|---|---|---|\n";
  i = 0;
  for (const ResultRun& r : result.runs) {
    for (const ResultQualityPoint& q : r.quality_curve) {
      const std::string loss = std::isnan(q.train_loss) ? "-" : fmt::format("{:.4f}", q.train_loss);
      md += fmt::format("| {} | {:.3f} | {} | {:.4f} | {} | {:.2f} |\n", i, q.epoch, q.samples, q.value, loss,
                        q.elapsed_s);
    }
    ++i;
  }
  md += render_parts_markdown(result);
  md += render_program_markdown(result);
  md += "\nAborted runs:\n\n";
  bool any = false;
  i = 0;
  for (const ResultRun& r : result.runs) {
    if (!r.success()) {
      md += fmt::format("- run {} (seed {}): {}\n", i, r.seed, r.reason);
      any = true;
    }
    ++i;
  }
  if (!any) md += "- none\n";
  md += render_execution_markdown(result);
  return md;
}

std::string render_ttt_summary(const Result& result) {
  std::string out;
  int i = 0;
  for (const ResultRun& r : result.runs) {
    out += fmt::format("run {} seed {}: {:<8} {:8.3f} s  {:.2f} epochs  {} {}  {:.0f} samples/s\n", i++, r.seed,
                       r.status, r.time_to_train_s, r.epochs.value_or(0), result.quality.metric, last_quality(r),
                       r.throughput);
  }
  out += setup_time_text(result) + "\n";
  out += fmt::format("time to train: {}\n", ttt_score_line(result));
  return out;
}

std::string render_ttt_markdown(const nlohmann::json& result) { return render_ttt_markdown(parse_result(result)); }
std::string render_ttt_summary(const nlohmann::json& result) { return render_ttt_summary(parse_result(result)); }

}  // namespace perflab::reports
