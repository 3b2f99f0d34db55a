// Time-to-train reports.
#include "reports/ttt_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "harness/stats.h"
#include "reports/report_sections.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

std::string score_line(const json& result) {
  const json& score = result["score"];
  if (score["time_to_train_s"].is_null()) return "no score: " + score["reason"].get<std::string>();
  return fmt::format("{:.3f} s ({})", score["time_to_train_s"].get<double>(),
                     score["method"].get<std::string>());
}

double median_throughput(const json& result) {
  std::vector<double> t;
  for (const auto& r : result["runs"]) t.push_back(r["throughput_samples_per_s"].get<double>());
  return percentile(t, 50);
}

std::string last_quality(const json& run) {
  const json& curve = run["quality_curve"];
  if (curve.empty()) return "-";
  return fmt::format("{:.4f}", curve.back()["value"].get<double>());
}

}  // namespace

std::string render_ttt_markdown(const json& result) {
  const json& quality = result["quality"];
  std::string md = render_setup_markdown(result);
  std::string ceiling = quality["ceiling"].is_null()
                            ? std::string("unknown")
                            : fmt::format("{:.4f}", quality["ceiling"].get<double>());
  md += fmt::format("- quality target: {} >= {:.4f} (best achievable: {})\n\n",
                    quality["metric"].get<std::string>(), quality["target"].get<double>(), ceiling);
  md += render_toggles_markdown(result);
  md += "\n## Runs\n\n| # | seed | status | time to train (s) | epochs | last ";
  md += quality["metric"].get<std::string>();
  md += " | samples/s | iteration p50 (ms) | p99 (ms) |\n|---|---|---|---|---|---|---|---|---|\n";
  int i = 0;
  for (const auto& r : result["runs"]) {
    md +=
        fmt::format("| {} | {} | {} | {:.3f} | {:.2f} | {} | {:.0f} | {:.3f} | {:.3f} |\n", i++,
                    r["seed"].get<uint64_t>(), r["status"].get<std::string>(),
                    r["time_to_train_s"].get<double>(), r["epochs"].get<double>(), last_quality(r),
                    r["throughput_samples_per_s"].get<double>(),
                    r["iteration_ms"]["p50"].get<double>(), r["iteration_ms"]["p99"].get<double>());
  }
  md += fmt::format("\n**Time to train:** {}  \n", score_line(result));
  md +=
      fmt::format("**Throughput:** {:.0f} samples/s (median over runs, training iterations only)\n",
                  median_throughput(result));

  md += "\n## Quality curves\n\n| run | epoch | samples | " + quality["metric"].get<std::string>() +
        " | train loss | elapsed (s) |\n|---|---|---|---|---|---|\n";
  i = 0;
  for (const auto& r : result["runs"]) {
    for (const auto& q : r["quality_curve"]) {
      md += fmt::format("| {} | {:.3f} | {} | {:.4f} | {:.4f} | {:.2f} |\n", i,
                        q["epoch"].get<double>(), q["samples"].get<int64_t>(),
                        q["value"].get<double>(), q["train_loss"].get<double>(),
                        q["elapsed_s"].get<double>());
    }
    ++i;
  }
  md += "\nAborted runs:\n\n";
  bool any = false;
  i = 0;
  for (const auto& r : result["runs"]) {
    if (r["status"] != "success") {
      md += fmt::format("- run {} (seed {}): {}\n", i, r["seed"].get<uint64_t>(),
                        r["reason"].get<std::string>());
      any = true;
    }
    ++i;
  }
  if (!any) md += "- none\n";
  return md;
}

std::string render_ttt_summary(const json& result) {
  std::string out;
  int i = 0;
  for (const auto& r : result["runs"]) {
    out += fmt::format("run {} seed {}: {:<8} {:8.3f} s  {:.2f} epochs  {} {}  {:.0f} samples/s\n",
                       i++, r["seed"].get<uint64_t>(), r["status"].get<std::string>(),
                       r["time_to_train_s"].get<double>(), r["epochs"].get<double>(),
                       result["quality"]["metric"].get<std::string>(), last_quality(r),
                       r["throughput_samples_per_s"].get<double>());
  }
  out += fmt::format("time to train: {}\n", score_line(result));
  return out;
}

}  // namespace perflab::reports
