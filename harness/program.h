// An external program as a workload: the third kind a workload can be,
// beside a timed step and a trainable model. A workload file
// (workloads/external: NAME.workload.yaml) says what to run; the harness
// runs it (harness/program_run.h): one process per seed, its output
// streamed into the run's folder, a timeout, and its MLLOG read back into
// the same run record a built-in workload's seed gives. The program owns its
// own loops and clocks; perflab owns the seeds, the sweep, the scoring and
// the record, and reads the times from the program's log.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/workload.h"

namespace perflab {

/// The ending that makes a workload name a workload file.
inline constexpr std::string_view kWorkloadFileSuffix = ".workload.yaml";
/// Whether `name` names a workload file (by its ending).
inline bool is_workload_file_name(std::string_view name) {
  return name.size() > kWorkloadFileSuffix.size() &&
         name.substr(name.size() - kWorkloadFileSuffix.size()) == kWorkloadFileSuffix;
}

/// Where one seed's program writes things: its own folder (`{out}`) and the
/// path its MLLOG is expected at (`{mllog}`).
struct ProgramPaths {
  std::filesystem::path out;
  std::filesystem::path mllog;
};

/// What one seed runs: the argument list and the environment it adds, both
/// with their placeholders filled in.
struct ProgramLaunch {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  /// The program writes its MLLOG to ProgramPaths::mllog (the command or
  /// environment names {mllog}); false: perflab reads the ":::MLLOG " lines
  /// from its standard output and error.
  bool writes_log_file = false;
  /// The compliance checker to run on the log (ProgramPaths filled in; exit
  /// status 0: compliant); empty: not checked, for `compliance_off`.
  std::vector<std::string> compliance;
  std::string compliance_off;  ///< Why the log is not checked, when `compliance` is empty.
};

/// The quality metric in the program's log and its target.
struct ProgramQuality {
  std::string key = "eval_accuracy";  ///< The MLLOG key whose values are the quality curve.
  /// The target; unset: the log's run_stop status alone says whether the
  /// run reached it (as MLPerf's reference implementations decide).
  std::optional<double> target;
  bool higher_is_better = true;
};

/// A prepared external workload (WorkloadInfo::create_program).
class Program {
 public:
  virtual ~Program() = default;
  /// The command for `seed` (the run's folders exist when it is called).
  virtual ProgramLaunch launch(uint64_t seed, const ProgramPaths& paths) const = 0;
  virtual ProgramQuality quality() const = 0;
  /// Seconds a run may take before it is stopped (SIGTERM to its process
  /// group, SIGKILL after a grace period) and recorded as failed.
  virtual double timeout_s() const = 0;
  /// The plan as far as the file knows it; the global batch size and the
  /// sample counts are read from the first log that states them.
  virtual StepPlan step_plan() const = 0;
};

}  // namespace perflab
