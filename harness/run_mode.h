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
  kInference,    ///< An MLPerf Inference scenario driven by MLCommons LoadGen (harness/inference_run.h).
};

/// "time-to-train", "throughput" or "inference" (as on the command line and in result specs).
inline const char* run_mode_name(RunMode m) {
  switch (m) {
    case RunMode::kTimeToTrain:
      return "time-to-train";
    case RunMode::kThroughput:
      return "throughput";
    case RunMode::kInference:
      return "inference";
  }
  return "unknown";
}

/// The valid values of --mode, as listed in error messages.
inline constexpr const char* kRunModeNames = "time-to-train, throughput, inference";

/// The result document's `kind` for a mode: "time_to_train", "throughput" or "inference".
inline const char* result_kind(RunMode m) {
  switch (m) {
    case RunMode::kTimeToTrain:
      return "time_to_train";
    case RunMode::kThroughput:
      return "throughput";
    case RunMode::kInference:
      return "inference";
  }
  return "unknown";
}

/// The mode named by `text` ("time-to-train", "throughput", "inference"), if any.
inline std::optional<RunMode> parse_run_mode(const std::string& text) {
  if (text == "time-to-train") return RunMode::kTimeToTrain;
  if (text == "throughput") return RunMode::kThroughput;
  if (text == "inference") return RunMode::kInference;
  return std::nullopt;
}

/// Whether a mode's runs are scored as a rate (samples/s): throughput, and
/// inference (LoadGen's figure); time to train is scored in seconds.
inline bool scored_as_rate(RunMode m) { return m == RunMode::kThroughput || m == RunMode::kInference; }

/// The mode of a result document's `kind`, if it names one.
inline std::optional<RunMode> mode_of_result_kind(const std::string& kind) {
  if (kind == "time_to_train") return RunMode::kTimeToTrain;
  if (kind == "throughput") return RunMode::kThroughput;
  if (kind == "inference") return RunMode::kInference;
  return std::nullopt;
}

}  // namespace perflab
