// An external program's log -> facts -> the run's verdict (see program_log.h).
#include "harness/program_log.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/json_number.h"
#include "harness/mllog_keys.h"
#include "harness/stats.h"

namespace perflab {
namespace {

std::optional<double> number(const nlohmann::json& v) {
  if (!v.is_number()) return std::nullopt;
  const double x = v.get<double>();
  return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}

std::optional<int64_t> count(const nlohmann::json& v) {
  if (!v.is_number()) return std::nullopt;
  std::optional<int64_t> n = json_number<int64_t>(v);
  if (!n || *n < 0) return std::nullopt;
  return n;
}

std::optional<double> metadata_number(const MllogEvent& e, std::string_view key) {
  auto it = e.metadata.find(std::string(key));
  return it == e.metadata.end() ? std::nullopt : number(*it);
}

/// A count in the metadata: a non-negative integer an int64 holds (a cast of
/// another program's 1e300 would be undefined), else nothing.
std::optional<int64_t> metadata_count(const MllogEvent& e, std::string_view key) {
  auto it = e.metadata.find(std::string(key));
  return it == e.metadata.end() ? std::nullopt : count(*it);
}

}  // namespace

ProgramLogFacts program_log_facts(const MllogFile& log, const std::string& quality_key) {
  namespace k = mllog;
  ProgramLogFacts f;
  f.events = log.events.size();
  f.bad_lines = log.bad_lines;
  f.first_problem = log.first_problem;
  std::vector<double> throughputs;
  double last_loss = std::numeric_limits<double>::quiet_NaN();
  auto keep_max = [](auto& slot, auto value) {
    if (!slot || value > *slot) slot = value;
  };
  for (const MllogEvent& e : log.events) {
    if (e.key == k::kInitStart && !f.init_start_ms) f.init_start_ms = e.time_ms;
    if (e.key == k::kInitStop && !f.init_stop_ms) f.init_stop_ms = e.time_ms;
    if (e.key == k::kRunStart && !f.run_start_ms) f.run_start_ms = e.time_ms;
    if (e.key == k::kRunStop) {
      if (++f.run_stops == 1) {
        f.run_stop_ms = e.time_ms;
        auto status = e.metadata.find(std::string(k::kStatus));
        if (status != e.metadata.end() && status->is_string()) f.run_stop_status = status->get<std::string>();
      }
    }
    if (e.key == k::kGlobalBatchSize && !f.global_batch_size) f.global_batch_size = count(e.value);
    if (e.key == k::kTrainSamples && !f.train_samples) f.train_samples = count(e.value);
    if (e.key == k::kEvalSamples && !f.eval_samples) f.eval_samples = count(e.value);
    if (e.key == k::kLowestNumericalPrecisionInLinear && f.precision.empty() && e.value.is_string()) {
      f.precision = e.value.get<std::string>();
    }
    if (e.key.rfind("submission_", 0) == 0 && !f.submission.contains(e.key)) f.submission[e.key] = e.value;
    if (e.key == "throughput") {
      if (std::optional<double> t = number(e.value)) throughputs.push_back(*t);
    }
    if (e.key == "tracked_stats" && e.value.is_object() && e.value.contains("throughput")) {
      if (std::optional<double> t = number(e.value["throughput"])) throughputs.push_back(*t);
    }
    if (e.key == k::kTrainLoss) {
      if (std::optional<double> loss = number(e.value)) last_loss = *loss;
    }
    if (std::optional<int64_t> s = metadata_count(e, k::kSamplesCount)) keep_max(f.samples, *s);
    if (e.key == k::kEpochStop || e.key == quality_key) {
      if (std::optional<double> epoch = metadata_number(e, k::kEpochNum); epoch && *epoch >= 0) {
        keep_max(f.epochs, *epoch);
      }
    }
    if (e.key == quality_key) {
      std::optional<double> value = number(e.value);
      if (!value) continue;
      ResultQualityPoint q;
      q.value = *value;
      q.epoch = metadata_number(e, k::kEpochNum).value_or(std::numeric_limits<double>::quiet_NaN());
      q.samples = metadata_count(e, k::kSamplesCount).value_or(0);
      q.train_loss = last_loss;
      q.elapsed_s = f.run_start_ms ? (e.time_ms - *f.run_start_ms) / 1e3 : 0;
      f.curve.push_back(q);
    }
  }
  // Epochs and samples stated one way or the other: the other follows from
  // the samples in an epoch, when the log states them.
  const double per_epoch = f.train_samples ? static_cast<double>(*f.train_samples) : 0;
  for (ResultQualityPoint& q : f.curve) {
    if (std::isnan(q.epoch)) q.epoch = per_epoch > 0 ? static_cast<double>(q.samples) / per_epoch : 0;
    if (q.samples == 0 && per_epoch > 0) q.samples = static_cast<int64_t>(std::llround(q.epoch * per_epoch));
  }
  if (!f.samples && f.epochs && per_epoch > 0) f.samples = static_cast<int64_t>(std::llround(*f.epochs * per_epoch));
  if (!f.epochs && f.samples && per_epoch > 0) f.epochs = static_cast<double>(*f.samples) / per_epoch;
  if (!throughputs.empty()) f.stated_throughput = percentile(throughputs, 50);
  return f;
}

ProgramVerdict judge_program_run(const ProgramLogFacts& log, const ProcessOutcome& process,
                                 const ProgramQuality& quality, const ComplianceOutcome& compliance) {
  ProgramVerdict v;
  const bool timed = log.run_start_ms && log.run_stop_ms && *log.run_stop_ms >= *log.run_start_ms;
  v.time_to_train_s = timed ? (*log.run_stop_ms - *log.run_start_ms) / 1e3 : process.wall_s;
  if (log.init_start_ms && log.init_stop_ms && *log.init_stop_ms >= *log.init_start_ms) {
    v.init_s = (*log.init_stop_ms - *log.init_start_ms) / 1e3;
  }
  v.samples = log.samples.value_or(0);
  v.epochs = log.epochs;
  if (log.stated_throughput) {
    v.throughput = *log.stated_throughput;
    v.throughput_source = "log: throughput";
  } else if (timed && v.samples > 0 && v.time_to_train_s > 0) {
    v.throughput = static_cast<double>(v.samples) / v.time_to_train_s;
    v.throughput_source = "samples over run time";
  } else {
    v.throughput_source = "none";
  }

  std::optional<double> best;
  for (const ResultQualityPoint& q : log.curve) {
    if (!best || (quality.higher_is_better ? q.value > *best : q.value < *best)) best = q.value;
  }
  const auto reached = [&] {
    if (!quality.target) return true;
    return best && (quality.higher_is_better ? *best >= *quality.target : *best <= *quality.target);
  };
  std::string why;
  if (process.timed_out || process.stopped || !process.ok()) {
    why = "the program " + process.describe();
  } else if (log.file_missing) {
    why = "the program wrote no log file";
  } else if (log.events == 0) {
    why = log.bad_lines > 0 ? fmt::format("its log has no valid :::MLLOG line ({})", log.first_problem)
                            : "the program wrote no :::MLLOG line";
  } else if (!log.run_start_ms) {
    why = "its log has no run_start";
  } else if (log.run_stops == 0) {
    why = log.bad_lines > 0 ? fmt::format("its log has no run_stop and a bad line ({}): truncated?", log.first_problem)
                            : "its log has no run_stop";
  } else if (log.run_stops > 1) {
    why = fmt::format("its log has {} run_stop lines (MLPerf allows one)", log.run_stops);
  } else if (log.bad_lines > 0) {
    why = fmt::format("its log has {} bad :::MLLOG line(s), first {}", log.bad_lines, log.first_problem);
  } else if (log.run_stop_status != mllog::kStatusSuccess) {
    why = log.run_stop_status.empty() ? "its run_stop has no status"
                                      : fmt::format("its run_stop status is {}", log.run_stop_status);
  } else if (!reached()) {
    why = best ? fmt::format("target {} {} {} not reached (best {})", quality.key,
                             quality.higher_is_better ? ">=" : "<=", *quality.target, *best)
               : fmt::format("target {} {} {} not reached (the log has no {})", quality.key,
                             quality.higher_is_better ? ">=" : "<=", *quality.target, quality.key);
  } else if (compliance.status == "failed") {
    why = "its log failed the compliance check: " + compliance.detail;
  }
  v.success = why.empty();
  v.status = v.success ? "success" : "aborted";
  if (v.success) {
    v.reason = quality.target && best ? fmt::format("{} {} {} target {}", quality.key, *best,
                                                    quality.higher_is_better ? ">=" : "<=", *quality.target)
                                      : "run_stop status success";
  } else {
    v.reason = why;
  }
  return v;
}

}  // namespace perflab
