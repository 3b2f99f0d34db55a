// Inference reports (see inference_report.h).
#include "reports/inference_report.h"

#include <optional>

#include <fmt/format.h>

#include "reports/report_sections.h"
#include "reports/workload_sections.h"

namespace perflab::reports {
namespace {

using nlohmann::json;

std::optional<double> number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
  return j.at(key).get<double>();
}

std::string text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : "";
}

std::string ns_as_ms(const std::optional<double>& ns) { return ns ? fmt::format("{:.3f}", *ns / 1e6) : "-"; }

std::string verdict(const json& inference) {
  const std::string v = text(inference, "verdict");
  if (v.empty()) return "none (accuracy run)";
  const std::string reason = text(inference, "invalid_reason");
  return reason.empty() ? v : fmt::format("{}: {}", v, reason);
}

std::string inference_score_line(const Result& result) {
  if (!result.score.throughput) return "no score: " + result.score.reason;
  return fmt::format("{:.0f} samples/s ({}; LoadGen's figure per seed)", *result.score.throughput,
                     result.score.method);
}

}  // namespace

std::optional<double> loadgen_latency_ns(const json& inference, double percentile) {
  if (!inference.is_object() || !inference.contains("percentiles")) return std::nullopt;
  for (const json& p : inference.at("percentiles")) {
    const std::optional<double> at = number(p, "percentile");
    if (at && *at > percentile - 1e-9 && *at < percentile + 1e-9) return number(p, "latency_ns");
  }
  return std::nullopt;
}

std::string render_inference_markdown(const Result& result) {
  std::string md = render_setup_markdown(result);
  const json& s = result.spec.inference;
  md += fmt::format(
      "- mode: inference, MLPerf Inference scenario {} ({} run) driven by MLCommons LoadGen; target {} queries/s, "
      "latency bound {} ms, at least {} ms and {} queries; batches of at most {} samples, waiting at most {} ms for "
      "a fuller one\n\n",
      text(s, "scenario"), text(s, "mode"), number(s, "target_qps").value_or(0),
      number(s, "latency_bound_ms").value_or(0), number(s, "min_duration_ms").value_or(0),
      number(s, "min_query_count").value_or(0), number(s, "max_batch").value_or(0),
      number(s, "max_wait_ms").value_or(0));
  md += "## Runs\n\n| # | seed | LoadGen verdict | samples/s | p50 (ms) | p90 (ms) | p99 (ms) | p99.9 (ms) | "
        "queries | batches (largest) | LoadGen's logs |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  int i = 0;
  for (const ResultRun& r : result.runs) {
    const json inference = r.inference.value_or(json::object());
    const json batches = inference.value("batches", json::object());
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} ({}) | `{}/` |\n", i++, r.seed,
                      verdict(inference), number(inference, "samples_per_second")
                                              ? fmt::format("{:.0f}", *number(inference, "samples_per_second"))
                                              : "-",
                      ns_as_ms(loadgen_latency_ns(inference, 50)), ns_as_ms(loadgen_latency_ns(inference, 90)),
                      ns_as_ms(loadgen_latency_ns(inference, 99)), ns_as_ms(loadgen_latency_ns(inference, 99.9)),
                      number(inference, "query_count").value_or(0),
                      number(batches, "batches").value_or(0), number(batches, "largest").value_or(0),
                      text(inference, "loadgen_folder"));
  }
  md += fmt::format("\n**Throughput:** {}\n", inference_score_line(result));
  md += "\nA run's verdict is LoadGen's: VALID needs its minimum duration and query count, early stopping and "
        "(server) the latency bound at its percentile; each seed's folder holds LoadGen's mlperf_log_summary.txt, "
        "mlperf_log_detail.txt (MLLOG) and mlperf_log_accuracy.json.\n";
  md += render_workload_markdown({result});  // the workload's engine: placement, cache, bytes, time per part
  return md;
}

std::string render_inference_summary(const Result& result) {
  std::string out;
  int i = 0;
  for (const ResultRun& r : result.runs) {
    const json inference = r.inference.value_or(json::object());
    out += fmt::format("run {} seed {}: LoadGen {} {}: {}; {} samples/s, p50 {} ms, p99 {} ms\n", i++, r.seed,
                       text(inference, "scenario"), text(inference, "mode"), verdict(inference),
                       number(inference, "samples_per_second")
                           ? fmt::format("{:.0f}", *number(inference, "samples_per_second"))
                           : "-",
                       ns_as_ms(loadgen_latency_ns(inference, 50)), ns_as_ms(loadgen_latency_ns(inference, 99)));
  }
  out += setup_time_text(result) + "\n";
  out += fmt::format("throughput: {}\n", inference_score_line(result));
  return out;
}

}  // namespace perflab::reports
