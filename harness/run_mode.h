// Run modes: how the harness drives a workload. A leaf header: results,
// reports and the runner all name modes through it.
#pragma once

#include <optional>
#include <string>

namespace perflab {

/// How the runner drives a workload.
enum class RunMode {
  kTimeToTrain,  ///< Train until the quality target is reached (MLPerf style).
  kThroughput,   ///< A fixed number of timed iterations after warm-up, then a correctness gate.
};

/// "time-to-train" or "throughput" (as on the command line and in result specs).
inline const char* run_mode_name(RunMode m) {
  return m == RunMode::kTimeToTrain ? "time-to-train" : "throughput";
}

/// The valid values of --mode, as listed in error messages.
inline constexpr const char* kRunModeNames = "time-to-train, throughput";

/// The result document's `kind` for a mode: "time_to_train" or "throughput".
inline const char* result_kind(RunMode m) {
  return m == RunMode::kTimeToTrain ? "time_to_train" : "throughput";
}

/// The mode named by `text` ("time-to-train", "throughput"), if any.
inline std::optional<RunMode> parse_run_mode(const std::string& text) {
  if (text == "time-to-train") return RunMode::kTimeToTrain;
  if (text == "throughput") return RunMode::kThroughput;
  return std::nullopt;
}

/// The mode of a result document's `kind`, if it names one.
inline std::optional<RunMode> mode_of_result_kind(const std::string& kind) {
  if (kind == "time_to_train") return RunMode::kTimeToTrain;
  if (kind == "throughput") return RunMode::kThroughput;
  return std::nullopt;
}

}  // namespace perflab
