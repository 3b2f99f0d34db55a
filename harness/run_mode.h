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

/// Each mode's names: on the command line and in result specs (`name`),
/// and as the result document's `kind`.
struct RunModeNames {
  RunMode mode;
  const char* name;
  const char* kind;
};
inline constexpr RunModeNames kRunModes[] = {{RunMode::kTimeToTrain, "time-to-train", "time_to_train"},
                                             {RunMode::kThroughput, "throughput", "throughput"},
                                             {RunMode::kInference, "inference", "inference"}};

/// "time-to-train", "throughput" or "inference".
inline const char* run_mode_name(RunMode m) {
  for (const RunModeNames& n : kRunModes) {
    if (n.mode == m) return n.name;
  }
  return "unknown";
}

/// The valid values of --mode, as listed in error messages.
inline constexpr const char* kRunModeNames = "time-to-train, throughput, inference";

/// The result document's `kind` for a mode: "time_to_train", "throughput" or "inference".
inline const char* result_kind(RunMode m) {
  for (const RunModeNames& n : kRunModes) {
    if (n.mode == m) return n.kind;
  }
  return "unknown";
}

/// The mode named by `text` ("time-to-train", "throughput", "inference"), if any.
inline std::optional<RunMode> parse_run_mode(const std::string& text) {
  for (const RunModeNames& n : kRunModes) {
    if (text == n.name) return n.mode;
  }
  return std::nullopt;
}

/// Whether a mode's runs are scored as a rate (samples/s): throughput, and
/// inference (LoadGen's figure); time to train is scored in seconds.
inline bool scored_as_rate(RunMode m) { return m == RunMode::kThroughput || m == RunMode::kInference; }

/// The mode of a result document's `kind`, if it names one.
inline std::optional<RunMode> mode_of_result_kind(const std::string& kind) {
  for (const RunModeNames& n : kRunModes) {
    if (kind == n.kind) return n.mode;
  }
  return std::nullopt;
}

}  // namespace perflab
