// The contract between the runner and a workload. A workload declares its
// parameters, presets and toggle support (WorkloadInfo, see registry.h),
// prepares its data once per invocation (Benchmark) and trains one model per
// seed (TrainingRun). It never prints, never times itself and never parses
// the command line: the runner does all of that.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend.h"
#include "harness/params.h"
#include "harness/toggles.h"

namespace perflab {

/// How the runner drives a workload.
enum class RunMode {
  kTimeToTrain,  ///< Train until the quality target is reached (MLPerf style).
  kThroughput,   ///< A fixed number of timed iterations after warm-up, then a correctness gate.
};

/// "time-to-train" or "throughput" (as on the command line).
inline const char* run_mode_name(RunMode m) {
  return m == RunMode::kTimeToTrain ? "time-to-train" : "throughput";
}

/// The work one iteration does, for achieved rates and the roofline floor.
struct IterationWork {
  double flops = 0;  ///< Floating-point operations per iteration (0: not counted).
  double bytes = 0;  ///< Minimum bytes moved to/from device memory per iteration (0: not counted).
  /// Lower bound on the iteration time on this machine,
  /// max(flops / peak FLOP/s, bytes / peak bandwidth), when the peaks are known.
  std::optional<double> floor_ms;
  std::string floor_basis;  ///< How floor_ms was computed (peaks used), or why it is absent.
};

/// The outcome of a throughput run's correctness gate: the workload's output
/// compared against a reference. A failed gate fails the run.
struct CorrectnessReport {
  bool passed = false;
  std::string detail;  ///< What was compared and the worst error found.
};

/// What the runner needs to drive a train-to-target run.
struct TrainingPlan {
  int64_t train_samples = 0;       ///< Samples in one epoch.
  int64_t eval_samples = 0;        ///< Samples in one evaluation.
  int64_t global_batch_size = 0;
  int64_t iterations_per_epoch = 0;
  int max_epochs = 1;              ///< Stop (aborted) after this many epochs.
  double eval_interval_epochs = 1; ///< Evaluate every this many epochs (may be < 1).
  std::string quality_metric;      ///< e.g. "AUC".
  double quality_target = 0;       ///< Success when the metric reaches this.
  std::optional<double> quality_ceiling;  ///< Best achievable, when known.
  std::string precision = "fp32";  ///< Lowest precision in linear layers.
  /// Logged once as MLLOG keys (opt_name, opt_base_learning_rate, ...).
  nlohmann::json hyperparameters = nlohmann::json::object();
  /// Facts about the prepared data, recorded in the result.
  nlohmann::json data = nlohmann::json::object();
  /// Work per training iteration at global_batch_size.
  IterationWork work;
  /// Unit of a sample in throughput figures ("samples", "sequences").
  std::string sample_unit = "samples";
};

/// Timing of iterations on a device (CUDA events on the workload's stream):
/// start()/stop() bracket one iteration without synchronising; collect_ms()
/// waits for the device and returns the times since the last collect.
class DeviceIterationTimer {
 public:
  virtual ~DeviceIterationTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual std::vector<double> collect_ms() = 0;
};

/// Everything a workload is configured with.
struct WorkloadConfig {
  ParamValues params;
  Backend backend = Backend::kCpu;
  ToggleSet toggles;  ///< in_effect already decided by the registry's rules.
  int threads = 1;
};

/// One training run (one seed): a freshly initialised model.
class TrainingRun {
 public:
  virtual ~TrainingRun() = default;
  /// One optimizer step. `iteration` counts from 0 across epochs; the
  /// workload derives its batch and learning rate from it.
  virtual void train_iteration(int64_t iteration) = 0;
  /// Mean training loss over the iterations since the last call (may
  /// synchronise with a device; the runner calls it only at block ends).
  virtual double take_training_loss() = 0;
  /// Quality metric on the held-out set.
  virtual double evaluate() = 0;
  /// Waits until every iteration issued so far has finished (device
  /// backends); the runner calls it before reading the clock at the end of
  /// a timed window, never inside one.
  virtual void synchronize() {}
  /// Device-side iteration timer, or null when iterations run on the host.
  virtual DeviceIterationTimer* device_timer() { return nullptr; }
  /// Throughput mode's gate, run after the timed iterations (untimed):
  /// compares the workload's latest output with a reference.
  virtual CorrectnessReport check_correctness() = 0;
};

/// A workload configured for one invocation: data prepared once, shared by
/// every seed's run.
class Benchmark {
 public:
  virtual ~Benchmark() = default;
  virtual TrainingPlan plan() const = 0;
  /// Initialises a model from `seed` (untimed: between init_start/init_stop).
  virtual std::unique_ptr<TrainingRun> start_run(uint64_t seed) = 0;
};

}  // namespace perflab
