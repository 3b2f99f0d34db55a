// RunSpec: everything that determines an invocation, resolved and validated
// once from the command line (or a result file), then passed down unchanged.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend.h"
#include "harness/inference_run.h"
#include "harness/params.h"
#include "harness/result_model.h"
#include "harness/toggles.h"
#include "harness/run_mode.h"

namespace perflab {

struct WorkloadInfo;
struct DeviceProbe;

/// What --profile asks for.
enum class ProfileMode { kOff, kKernels, kTrace };
/// "off", "kernels", "trace".
const char* profile_mode_name(ProfileMode mode);

/// The counts a request may ask for. resolve_run_spec checks them for the
/// command line, sweep files and rerun alike; the bounds keep every derived
/// count (warm-up + timed iterations, seeds from the first) inside its type.
inline constexpr int kMaxSeeds = 1000;
inline constexpr int kMaxThreads = 4096;
inline constexpr int kMaxWarmupIterations = 1'000'000'000;
inline constexpr int kMaxIterations = 1'000'000'000;

/// What the user asked for, before validation.
struct RunRequest {
  std::string workload;
  std::string preset;  ///< Empty: the workload's default preset.
  std::map<std::string, std::string> overrides;  ///< --set key=value
  std::string backend = "auto";                  ///< auto | cpu | cuda
  std::map<Toggle, bool> toggles;                ///< Requested toggles (absent: off).
  int seeds = 1;
  uint64_t first_seed = 1;
  int threads = 0;  ///< 0: OMP_NUM_THREADS, else all cores.
  int warmup_iterations = 3;
  std::string mode;     ///< time-to-train | throughput; empty: the workload's default.
  int iterations = 100; ///< Throughput mode: timed iterations after warm-up.
  std::filesystem::path out_dir = "perflab-results";
  std::string profile = "off";  ///< --profile: off | kernels | trace
  bool check_launches = false;  ///< --check-launches (GPU debugging)
  InferenceSettings inference;  ///< --mode inference: LoadGen's scenario and settings (--scenario, ...)
};

/// A validated, fully resolved invocation.
struct RunSpec {
  std::string workload;
  /// An external workload's file (absolute), empty for a built-in one.
  std::string workload_file;
  std::string preset;
  std::map<std::string, std::string> overrides;
  ParamValues params;
  std::string backend_requested;
  Backend backend = Backend::kCpu;
  std::string backend_reason;  ///< How "auto" was resolved.
  ToggleSet toggles;
  std::vector<uint64_t> seeds;
  int threads = 1;
  /// Ranks the run takes: the session's communicator size (Session::resolve),
  /// or the ranks per job a SLURM sweep submits with.
  int ranks = 1;
  int warmup_iterations = 3;
  RunMode mode = RunMode::kTimeToTrain;
  int iterations = 100;  ///< Throughput mode: timed iterations after warm-up.
  /// --profile: kernels (the per-kernel table of a profiled window) or trace
  /// (the table and a Chrome trace); off by default (docs/profiling.md).
  ProfileMode profile = ProfileMode::kOff;
  /// --check-launches: the device is waited for after every kernel launch,
  /// so a fault names its kernel (kernels/cuda/check.h); CUDA graphs off,
  /// times not comparable. The cuda backend only.
  bool check_launches = false;
  /// --mode inference: the LoadGen test each seed runs (its seed is the run's).
  InferenceSettings inference;
  std::filesystem::path out_dir;
  std::string batch_param;          ///< The workload's batch-size parameter (empty: none).
  std::string learning_rate_param;  ///< Its learning-rate parameter (empty: none).

  /// Preset name as logged (`perflab_preset`): the preset, or
  /// "<preset>+overrides" when --set changed anything.
  std::string preset_label() const;
  /// The spec as results record it: to_json(result_spec_of(*this)).
  nlohmann::json to_json() const;
};

/// The spec in the result model's terms (harness/result_model.h): what a
/// result.json records and `perflab rerun` reads back.
ResultSpec result_spec_of(const RunSpec& spec);

/// Validates `request` against `info` and the devices present. Throws
/// UsageError for invalid requests (exit 2) and Error when the requested
/// backend cannot run here (exit 1).
RunSpec resolve_run_spec(const RunRequest& request, const WorkloadInfo& info,
                         const DeviceProbe& devices);

/// Each toggle as requested and as in effect on `backend`, by the
/// workload's toggle rules: a toggle it has no rule for, or whose rule does
/// not list the backend, or whose needed toggle is not in effect, is
/// "requested: on, in effect: off" with the reason.
ToggleSet resolve_toggles(const std::map<Toggle, bool>& requested, const WorkloadInfo& info,
                          Backend backend);

/// What submission_platform says for `spec` on the machine `environment`
/// describes: the GPU for the cuda backend, else the CPU and thread count.
std::string platform_description(const nlohmann::json& environment, const RunSpec& spec);

/// Rebuilds the request recorded in a result's "spec" object.
RunRequest request_from_json(const nlohmann::json& spec);

}  // namespace perflab
