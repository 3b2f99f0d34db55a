// The contracts between the harness and a workload. A workload declares its
// parameters, presets, toggle rules and kind (WorkloadInfo, registry.h),
// prepares its data once per invocation (Benchmark) and, per seed, gives the
// harness either a timed step with a correctness gate (TimedStep: throughput
// workloads) or a model it can also train to a quality target
// (TrainableModel). It never prints, never times itself, never captures CUDA
// graphs and never parses the command line: the harness does all of that.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend.h"
#include "harness/device_step.h"
#include "harness/inference_run.h"
#include "harness/params.h"
#include "harness/run_mode.h"
#include "harness/toggles.h"

namespace perflab {

struct RunContext;
class PartTimer;

/// The work one iteration does, for achieved rates and the roofline floor.
/// The workload counts; the harness computes the floor from the device's
/// peaks (harness/roofline.h), the one place peaks are known.
struct IterationWork {
  double flops = 0;  ///< Floating-point operations per iteration (0: not counted).
  double bytes = 0;  ///< Minimum bytes moved to/from device memory per iteration (0: not counted).
  /// Which peak the FLOPs run at: "tf32", "bf16", "fp32" (empty: FLOPs not
  /// bound by a tensor-core peak; only the bytes give a floor).
  std::string flops_precision;
  /// Lower bound on the iteration time on this machine,
  /// max(flops / peak FLOP/s, bytes / peak bandwidth), when the peaks are known.
  std::optional<double> floor_ms;
  std::string floor_basis;  ///< How floor_ms was computed (peaks used), or why it is absent.
};

/// The outcome of a correctness gate: the workload's output compared against
/// a reference. A failed gate fails the run.
struct CorrectnessReport {
  bool passed = false;
  std::string detail;  ///< What was compared and the worst error found.
};

/// How one iteration's times on the ranks become the iteration's time
/// (nccl-tests' -a: 0 rank 0, 1 mean, 2 min, 3 max).
enum class RankTimes { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

/// What every workload says about one iteration (step).
struct StepPlan {
  int64_t batch_size = 0;              ///< Samples per iteration (the global batch).
  std::string sample_unit = "samples"; ///< Unit of a sample in throughput figures ("sequences").
  std::string precision = "fp32";      ///< Lowest precision in linear layers.
  /// The step has no linear layer but communicates in `precision` (a
  /// collective): it is disclosed as lowest_numerical_precision_in_comm.
  bool precision_is_communication = false;
  /// Logged once as MLLOG keys (opt_name, opt_base_learning_rate, ...).
  nlohmann::json hyperparameters = nlohmann::json::object();
  /// Facts about the prepared data, recorded in the result.
  nlohmann::json data = nlohmann::json::object();
  IterationWork work;  ///< Work per iteration at batch_size.
  /// Device memory one seed's step allocates (0: none, or not estimated):
  /// the harness refuses a plan that cannot fit before anything allocates.
  double device_bytes = 0;
  std::string device_bytes_advice;  ///< What to change when it does not fit.
  /// Several ranks: an iteration takes as long as its slowest rank unless
  /// the workload says otherwise (the collectives benchmark follows -a).
  RankTimes rank_times = RankTimes::kMax;
};

/// What the runner needs, beyond the step, to train to a target.
struct TrainingPlan {
  int64_t train_samples = 0;        ///< Samples in one epoch.
  int64_t eval_samples = 0;         ///< Samples in one evaluation.
  int64_t iterations_per_epoch = 0;
  int max_epochs = 1;               ///< Stop (aborted) after this many epochs.
  double eval_interval_epochs = 1;  ///< Evaluate every this many epochs (may be < 1).
  std::string quality_metric;       ///< e.g. "AUC".
  /// Success when the metric reaches this; NaN: no target is stated (an
  /// external program's own run_stop status decides).
  double quality_target = 0;
  std::optional<double> quality_ceiling;  ///< Best achievable, when known.
};

/// Timing of iterations on a device (CUDA events on the step's stream):
/// start()/stop() bracket one iteration without synchronising; collect_ms()
/// waits for the device and returns the times since the last collect.
/// Created by the harness for a DeviceStep's stream.
class DeviceIterationTimer {
 public:
  virtual ~DeviceIterationTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual std::vector<double> collect_ms() = 0;
};

/// The mean of the losses added since the last take: what a host step's
/// take_loss() returns (0 when none were added).
class LossMean {
 public:
  void add(double loss) {
    sum_ += loss;
    ++count_;
  }
  double take() {
    const double mean = count_ > 0 ? sum_ / static_cast<double>(count_) : 0.0;
    sum_ = 0;
    count_ = 0;
    return mean;
  }

 private:
  double sum_ = 0;
  int64_t count_ = 0;
};

/// One seed's timed step (throughput workloads: transducer, collectives,
/// halo convolution). A host backend implements run_iteration; a device
/// backend returns its DeviceStep and the harness drives it.
class TimedStep {
 public:
  virtual ~TimedStep() = default;
  /// One iteration on the host. `iteration` counts from 0 (warm-up
  /// included); the workload derives its input from it.
  virtual void run_iteration(int64_t iteration);
  /// The device step, or null when iterations run on the host.
  virtual DeviceStep* device_step() { return nullptr; }
  /// Mean of the step's loss over the iterations since the last call (NaN
  /// when the step has none). Called only outside timed windows.
  virtual double take_loss() { return std::numeric_limits<double>::quiet_NaN(); }
  /// The gate, run after the timed iterations (untimed): compares the
  /// step's latest output with a reference.
  virtual CorrectnessReport check_correctness() = 0;
  /// After a non-finite loss: where it started, when the step can tell
  /// (the first iteration whose loss was not finite, the first tensor that
  /// is not); empty otherwise. Called outside timed iterations.
  virtual std::string nonfinite_detail() { return ""; }
  /// Toggles the step found it could not honour as it ran (the SHARP
  /// verdict NCCL's log gives only after the operations ran): each becomes
  /// "requested: on, in effect: off" with the reason. Called after the gate.
  virtual std::vector<std::pair<Toggle, ToggleState>> toggle_outcomes() { return {}; }
  /// Facts the step learned as it ran, recorded with the run (the
  /// algorithm and protocol NCCL chose); an empty object when none.
  virtual nlohmann::json run_facts() { return nlohmann::json::object(); }
  /// Names the parts of the step and has the harness time them alone
  /// (harness/part_timer.h: host clock or CUDA events, median over
  /// repetitions, slowest rank); the harness writes the per-part table.
  /// Called on every rank after the gate (and at the end of a time-to-train
  /// run); none by default.
  virtual void time_parts(PartTimer& /*parts*/) {}
  /// Once the seed's run has ended (untimed, after the last evaluation or
  /// timed iteration): what the workload does with the finished step, such
  /// as writing its trained model. A throw fails the run.
  virtual void end_of_run() {}
};

/// One seed's model of a trainable workload (DLRM): a timed step (its
/// training iteration, so it runs in throughput mode too) that can also be
/// evaluated, so the harness can train it to the quality target.
class TrainableModel : public TimedStep {
 public:
  /// Quality metric on the held-out set (outside timed iterations).
  virtual double evaluate() = 0;
};

/// A workload configured for one invocation: data prepared once, shared by
/// every seed's run.
class Benchmark {
 public:
  virtual ~Benchmark() = default;
  virtual StepPlan step_plan() const = 0;
  /// The training plan of a trainable workload; nullopt for a timed step.
  virtual std::optional<TrainingPlan> training_plan() const { return std::nullopt; }
  /// Initialises one seed's step (untimed: between init_start/init_stop).
  virtual std::unique_ptr<TimedStep> start_step(uint64_t seed) = 0;
  /// --mode inference (WorkloadInfo::serves): one seed's engine, for
  /// batches of at most `max_batch` samples. Null: it does not serve.
  virtual std::unique_ptr<InferenceEngine> start_inference(uint64_t /*seed*/, int /*max_batch*/) { return nullptr; }
};

/// A trainable workload's Benchmark: its seeds' steps are models.
class TrainableBenchmark : public Benchmark {
 public:
  std::optional<TrainingPlan> training_plan() const override { return training(); }
  virtual TrainingPlan training() const = 0;
  virtual std::unique_ptr<TrainableModel> start_model(uint64_t seed) = 0;
  std::unique_ptr<TimedStep> start_step(uint64_t seed) override { return start_model(seed); }
};

}  // namespace perflab
