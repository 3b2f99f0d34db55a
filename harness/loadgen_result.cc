#include "harness/loadgen_result.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>

#include "base/error.h"
#include "base/json_number.h"
#include "harness/mllog_reader.h"

namespace perflab {
namespace {

/// The value of the first event with `key`, if it is a number.
std::optional<double> number(const MllogFile& log, const std::string& key) {
  const MllogEvent* e = log.first(key);
  if (e == nullptr || !e->value.is_number()) return std::nullopt;
  return e->value.get<double>();
}

/// A count LoadGen logged: an integer an int64 holds, else nothing (a cast of
/// a damaged log's 1e300 would be undefined).
std::optional<int64_t> logged_count(const MllogFile& log, const std::string& key) {
  const MllogEvent* e = log.first(key);
  return e == nullptr ? std::nullopt : json_number<int64_t>(e->value);
}

std::optional<bool> boolean(const MllogFile& log, const std::string& key) {
  const MllogEvent* e = log.first(key);
  if (e == nullptr || !e->value.is_boolean()) return std::nullopt;
  return e->value.get<bool>();
}

std::string text(const MllogFile& log, const std::string& key) {
  const MllogEvent* e = log.first(key);
  return e != nullptr && e->value.is_string() ? e->value.get<std::string>() : "";
}

/// LoadGen's texts carry trailing blanks and line breaks.
std::string trimmed(std::string s) {
  const auto first = s.find_first_not_of(" \n\t");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \n\t");
  return s.substr(first, last - first + 1);
}

/// "result_99.90_percentile_latency_ns" -> 99.9.
std::optional<double> percentile_of(const std::string& key) {
  constexpr std::string_view prefix = "result_";
  constexpr std::string_view suffix = "_percentile_latency_ns";
  if (key.size() <= prefix.size() + suffix.size() || key.compare(0, prefix.size(), prefix) != 0 ||
      key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  const std::string middle = key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
  char* end = nullptr;
  const double p = std::strtod(middle.c_str(), &end);
  if (end == middle.c_str() || *end != '\0' || !(p > 0 && p < 100)) return std::nullopt;
  return p;
}

template <typename T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}

}  // namespace

std::optional<double> LoadgenOutcome::latency_at(double percentile) const {
  for (const LoadgenPercentile& p : percentiles) {
    if (std::abs(p.percentile - percentile) < 1e-9) return p.latency_ns;
  }
  return std::nullopt;
}

LoadgenOutcome read_loadgen_outcome(const std::filesystem::path& detail_log) {
  const MllogFile log = read_mllog(detail_log);
  const MllogEvent* validity = log.first("result_validity");
  const bool has_verdict = validity != nullptr && validity->value.is_string();
  if (!has_verdict && log.first("power_end") == nullptr) {
    throw UsageError(detail_log.string() +
                     ": no result_validity and no power_end: LoadGen did not finish the test (a truncated or "
                     "foreign log?)");
  }
  LoadgenOutcome o;
  o.loadgen_version = text(log, "loadgen_version");
  o.scenario = text(log, "effective_scenario");
  o.mode = text(log, "effective_test_mode");
  o.verdict = has_verdict ? validity->value.get<std::string>() : "";
  o.invalid_reason = o.verdict == "INVALID" ? trimmed(text(log, "result_invalid_reason")) : "";
  o.min_duration_met = boolean(log, "result_min_duration_met");
  o.min_queries_met = boolean(log, "result_min_queries_met");
  o.early_stopping_met = boolean(log, "early_stopping_met");
  o.performance_constraints_met = boolean(log, "result_perf_constraints_met");
  o.early_stopping_detail = trimmed(text(log, "early_stopping_result"));
  o.query_count = logged_count(log, "result_query_count").value_or(0);
  if (const auto n = logged_count(log, "result_overlatency_query_count")) o.overlatency_query_count = *n;
  o.errors = logged_count(log, "num_errors").value_or(0);

  if (o.scenario == "Offline") {
    o.samples_per_second = number(log, "result_samples_per_second");
  } else if (o.scenario == "Server") {
    o.samples_per_second = number(log, "result_completed_samples_per_sec");
    o.scheduled_samples_per_second = number(log, "result_scheduled_samples_per_sec");
  } else {
    o.samples_per_second = number(log, "result_qps_with_loadgen_overhead");
  }
  o.early_stopping_latency_ss_ns = number(log, "early_stopping_latency_ss");
  o.early_stopping_latency_ms_ns = number(log, "early_stopping_latency_ms");
  o.target_qps = number(log, "effective_target_qps");
  o.target_latency_ns = number(log, "effective_target_latency_ns");
  o.target_latency_percentile = number(log, "effective_target_latency_percentile");
  o.min_latency_ns = number(log, "result_min_latency_ns").value_or(0);
  o.max_latency_ns = number(log, "result_max_latency_ns").value_or(0);
  o.mean_latency_ns = number(log, "result_mean_latency_ns").value_or(0);
  for (const MllogEvent& e : log.events) {
    const auto p = percentile_of(e.key);
    if (p && e.value.is_number()) o.percentiles.push_back({*p, e.value.get<double>()});
  }
  return o;
}

std::optional<float> LoadgenResponse::as_float() const {
  if (data.size() != sizeof(float)) return std::nullopt;
  float value = 0;
  std::memcpy(&value, data.data(), sizeof(value));
  return value;
}

std::vector<LoadgenResponse> read_loadgen_accuracy_log(const std::filesystem::path& path) {
  using nlohmann::json;
  std::ifstream in(path);
  if (!in) throw UsageError(path.string() + ": cannot read LoadGen's accuracy log");
  const json entries = json::parse(in, nullptr, false);
  if (!entries.is_array()) throw UsageError(path.string() + ": not LoadGen's accuracy log (not a JSON array)");
  std::vector<LoadgenResponse> out;
  for (const json& e : entries) {
    const json* index = e.is_object() && e.contains("qsl_idx") ? &e.at("qsl_idx") : nullptr;
    const json* data = e.is_object() && e.contains("data") ? &e.at("data") : nullptr;
    if (!index || !index->is_number_unsigned() || !data || !data->is_string() || data->get<std::string>().size() % 2) {
      throw UsageError(fmt::format("{}: entry {} is not {{qsl_idx, data: hex bytes}}", path.string(), out.size()));
    }
    LoadgenResponse r;
    r.sample = index->get<size_t>();
    const std::string hex = data->get<std::string>();
    for (size_t i = 0; i < hex.size(); i += 2) {
      char* end = nullptr;
      const std::string pair = hex.substr(i, 2);
      const unsigned long byte = std::strtoul(pair.c_str(), &end, 16);
      if (end != pair.c_str() + 2) {
        throw UsageError(fmt::format("{}: entry {} has data that is not hex ('{}')", path.string(), out.size(), pair));
      }
      r.data.push_back(static_cast<unsigned char>(byte));
    }
    out.push_back(std::move(r));
  }
  return out;
}

nlohmann::json loadgen_outcome_to_json(const LoadgenOutcome& o) {
  nlohmann::json j = {{"loadgen_version", o.loadgen_version},
                      {"scenario", o.scenario},
                      {"mode", o.mode},
                      {"verdict", o.verdict},
                      {"valid", o.valid()},
                      {"query_count", o.query_count},
                      {"errors", o.errors},
                      {"min_latency_ns", o.min_latency_ns},
                      {"max_latency_ns", o.max_latency_ns},
                      {"mean_latency_ns", o.mean_latency_ns}};
  if (o.verdict == "INVALID") j["invalid_reason"] = o.invalid_reason;
  put(j, "min_duration_met", o.min_duration_met);
  put(j, "min_queries_met", o.min_queries_met);
  put(j, "early_stopping_met", o.early_stopping_met);
  put(j, "performance_constraints_met", o.performance_constraints_met);
  if (!o.early_stopping_detail.empty()) j["early_stopping_detail"] = o.early_stopping_detail;
  put(j, "overlatency_query_count", o.overlatency_query_count);
  put(j, "samples_per_second", o.samples_per_second);
  put(j, "scheduled_samples_per_second", o.scheduled_samples_per_second);
  put(j, "early_stopping_latency_ss_ns", o.early_stopping_latency_ss_ns);
  put(j, "early_stopping_latency_ms_ns", o.early_stopping_latency_ms_ns);
  put(j, "target_qps", o.target_qps);
  put(j, "target_latency_ns", o.target_latency_ns);
  put(j, "target_latency_percentile", o.target_latency_percentile);
  nlohmann::json percentiles = nlohmann::json::array();
  for (const LoadgenPercentile& p : o.percentiles) {
    percentiles.push_back({{"percentile", p.percentile}, {"latency_ns", p.latency_ns}});
  }
  j["percentiles"] = percentiles;
  return j;
}

}  // namespace perflab
