// Throughput reports (see throughput_report.h).
#include "reports/throughput_report.h"

#include <optional>

#include <fmt/format.h>

#include "reports/inference_report.h"
#include "reports/kernel_table.h"
#include "reports/report_sections.h"
#include "reports/ttt_report.h"

namespace perflab::reports {
namespace {

std::string num(const std::optional<double>& v, const char* fmt_spec) {
  if (!v) return "-";
  return fmt::format(fmt::runtime(fmt_spec), *v);
}

/// A timing summary's statistic, or nothing when no iteration was timed.
std::optional<double> stat(const Summary& s, double Summary::*field) {
  if (s.n == 0) return std::nullopt;
  return s.*field;
}

std::string throughput_score_line(const Result& result) {
  if (!result.score.throughput) return "no score: " + result.score.reason;
  return fmt::format("{:.0f} {}/s ({})", *result.score.throughput, result.plan.sample_unit, result.score.method);
}

std::string gate_text(const ResultRun& run) {
  if (!run.correctness) return "-";
  return fmt::format("{}: {}", run.correctness->passed ? "passed" : "FAILED", run.correctness->detail);
}

std::string work_lines(const Result& result) {
  const ResultWork& w = result.work;
  if (!w.recorded) return "";
  std::string md = "\n## Work per iteration\n\n";
  md += fmt::format("- FLOPs: {}; bytes (floor): {}\n", num(w.flops_per_iteration, "{:.4g}"),
                    num(w.bytes_per_iteration, "{:.4g}"));
  md += fmt::format("- median iteration: {} ms; achieved {} TFLOP/s, {} GB/s\n", num(w.median_iteration_ms, "{:.4f}"),
                    num(w.achieved_tflops, "{:.2f}"), num(w.achieved_gbytes_per_s, "{:.1f}"));
  md += fmt::format("- roofline floor: {} ms ({}); measured / floor: {}\n", num(w.floor_ms, "{:.4f}"),
                    w.floor_basis.empty() ? "-" : w.floor_basis, num(w.times_floor, "{:.2f}x"));
  return md;
}

}  // namespace

std::string render_throughput_markdown(const Result& result) {
  std::string md = render_setup_markdown(result);
  md += fmt::format("- mode: throughput, {} timed iterations after {} warm-up, batch {}\n\n", result.spec.iterations,
                    result.spec.warmup_iterations, result.plan.global_batch_size);
  md += render_toggles_markdown(result);
  md += fmt::format(
      "\n## Runs\n\n| # | seed | status | {}/s | iteration p50 (ms) | p99 (ms) | timer | host p50 "
      "(ms) | correctness gate |\n|---|---|---|---|---|---|---|---|---|\n",
      result.plan.sample_unit);
  int i = 0;
  for (const ResultRun& r : result.runs) {
    md += fmt::format("| {} | {} | {} | {:.0f} | {} | {} | {} | {} | {} |\n", i++, r.seed, r.status, r.throughput,
                      num(stat(r.iteration_ms, &Summary::p50), "{:.4f}"),
                      num(stat(r.iteration_ms, &Summary::p99), "{:.4f}"), r.iteration_timer,
                      num(stat(r.host_iteration_ms, &Summary::p50), "{:.4f}"), gate_text(r));
  }
  md += fmt::format("\n**Throughput:** {}\n", throughput_score_line(result));
  md += work_lines(result);
  md += render_execution_markdown(result);
  md += render_parts_markdown(result);
  md += render_profile_markdown(result);
  return md;
}

std::string render_throughput_summary(const Result& result) {
  std::string out;
  int i = 0;
  for (const ResultRun& r : result.runs) {
    out += fmt::format("run {} seed {}: {:<8} {:.0f} {}/s  iteration p50 {} ms ({})  gate {}\n", i++, r.seed,
                       r.status, r.throughput, result.plan.sample_unit,
                       num(stat(r.iteration_ms, &Summary::p50), "{:.4f}"), r.iteration_timer, gate_text(r));
  }
  const ResultWork& w = result.work;
  if (w.floor_ms && w.median_iteration_ms) {
    out += fmt::format("roofline floor {} ms; measured {} ms = {} the floor\n", num(w.floor_ms, "{:.4f}"),
                       num(w.median_iteration_ms, "{:.4f}"), num(w.times_floor, "{:.2f}x"));
  }
  out += render_profile_summary(result);
  out += setup_time_text(result) + "\n";
  out += fmt::format("throughput: {}\n", throughput_score_line(result));
  return out;
}

std::string render_run_markdown(const Result& result) {
  if (result.inference()) return render_inference_markdown(result);
  return (result.throughput() ? render_throughput_markdown(result) : render_ttt_markdown(result)) +
         render_placement_markdown(result) + render_projection_markdown(result);
}

std::string render_run_summary(const Result& result) {
  if (result.inference()) return render_inference_summary(result);
  return render_placement_summary(result) +
         (result.throughput() ? render_throughput_summary(result) : render_ttt_summary(result));
}

std::string render_throughput_markdown(const nlohmann::json& result) {
  return render_throughput_markdown(parse_result(result));
}
std::string render_throughput_summary(const nlohmann::json& result) {
  return render_throughput_summary(parse_result(result));
}
std::string render_run_markdown(const nlohmann::json& result) { return render_run_markdown(parse_result(result)); }
std::string render_run_summary(const nlohmann::json& result) { return render_run_summary(parse_result(result)); }

}  // namespace perflab::reports
