#include "reports/throughput_report.h"

#include <fmt/format.h>

#include "reports/report_sections.h"
#include "reports/ttt_report.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

std::string num(const json& v, const char* fmt_spec) {
  if (!v.is_number()) return "-";
  return fmt::format(fmt::runtime(fmt_spec), v.get<double>());
}

std::string unit(const json& result) {
  return result["plan"].value("sample_unit", std::string("samples"));
}

std::string score_line(const json& result) {
  const json& score = result["score"];
  if (!score["throughput_samples_per_s"].is_number()) {
    return "no score: " + score["reason"].get<std::string>();
  }
  return fmt::format("{:.0f} {}/s ({})", score["throughput_samples_per_s"].get<double>(),
                     unit(result), score["method"].get<std::string>());
}

std::string gate_text(const json& run) {
  const json& c = run["correctness"];
  if (!c.is_object()) return "-";
  return fmt::format("{}: {}", c["passed"].get<bool>() ? "passed" : "FAILED",
                     c["detail"].get<std::string>());
}

std::string work_lines(const json& result) {
  if (!result.contains("work")) return "";
  const json& w = result["work"];
  std::string md = "\n## Work per iteration\n\n";
  md += fmt::format("- FLOPs: {}; bytes (floor): {}\n", num(w["flops_per_iteration"], "{:.4g}"),
                    num(w["bytes_per_iteration"], "{:.4g}"));
  md += fmt::format("- median iteration: {} ms; achieved {} TFLOP/s, {} GB/s\n",
                    num(w["median_iteration_ms"], "{:.4f}"), num(w["achieved_tflops"], "{:.2f}"),
                    num(w["achieved_gbytes_per_s"], "{:.1f}"));
  md += fmt::format("- roofline floor: {} ms ({}); measured / floor: {}\n",
                    num(w["floor_ms"], "{:.4f}"), w.value("floor_basis", std::string("-")),
                    num(w["times_floor"], "{:.2f}x"));
  return md;
}

}  // namespace

std::string render_throughput_markdown(const json& result) {
  std::string md = render_setup_markdown(result);
  const json& spec = result["spec"];
  md += fmt::format("- mode: throughput, {} timed iterations after {} warm-up, batch {}\n\n",
                    spec.value("iterations", 0), spec["warmup_iterations"].get<int>(),
                    result["plan"]["global_batch_size"].get<int64_t>());
  md += render_toggles_markdown(result);
  md += fmt::format(
      "\n## Runs\n\n| # | seed | status | {}/s | iteration p50 (ms) | p99 (ms) | timer | host p50 "
      "(ms) | correctness gate |\n|---|---|---|---|---|---|---|---|---|\n",
      unit(result));
  int i = 0;
  for (const auto& r : result["runs"]) {
    md += fmt::format("| {} | {} | {} | {:.0f} | {} | {} | {} | {} | {} |\n", i++,
                      r["seed"].get<uint64_t>(), r["status"].get<std::string>(),
                      r["throughput_samples_per_s"].get<double>(), num(r["iteration_ms"]["p50"], "{:.4f}"),
                      num(r["iteration_ms"]["p99"], "{:.4f}"), r.value("iteration_timer", std::string("-")),
                      num(r["host_iteration_ms"]["p50"], "{:.4f}"), gate_text(r));
  }
  md += fmt::format("\n**Throughput:** {}\n", score_line(result));
  md += work_lines(result);
  return md;
}

std::string render_throughput_summary(const json& result) {
  std::string out;
  int i = 0;
  for (const auto& r : result["runs"]) {
    out += fmt::format("run {} seed {}: {:<8} {:.0f} {}/s  iteration p50 {} ms ({})  gate {}\n", i++,
                       r["seed"].get<uint64_t>(), r["status"].get<std::string>(),
                       r["throughput_samples_per_s"].get<double>(), unit(result),
                       num(r["iteration_ms"]["p50"], "{:.4f}"), r.value("iteration_timer", std::string("-")),
                       gate_text(r));
  }
  const json& w = result.value("work", json::object());
  if (w.value("floor_ms", json()).is_number() && w.value("median_iteration_ms", json()).is_number()) {
    out += fmt::format("roofline floor {} ms; measured {} ms = {} the floor\n", num(w["floor_ms"], "{:.4f}"),
                       num(w["median_iteration_ms"], "{:.4f}"), num(w["times_floor"], "{:.2f}x"));
  }
  out += fmt::format("throughput: {}\n", score_line(result));
  return out;
}

std::string render_run_markdown(const json& result) {
  return result.value("kind", std::string()) == "throughput" ? render_throughput_markdown(result)
                                                             : render_ttt_markdown(result);
}

std::string render_run_summary(const json& result) {
  return result.value("kind", std::string()) == "throughput" ? render_throughput_summary(result)
                                                             : render_ttt_summary(result);
}

}  // namespace perflab::reports
