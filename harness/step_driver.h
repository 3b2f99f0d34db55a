// The harness's device iteration mechanics, once for every device workload:
// the eager warm-up, one CUDA graph captured per step variant and replayed,
// host synchronisations counted per iteration, and a record of what
// actually ran (graphs in effect = graphs replayed, not graphs requested).
// The CUDA calls sit behind DeviceOps, so the logic is tested on the CPU
// with a fake (tests/harness/step_driver_test.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "harness/activity.h"
#include "harness/device_step.h"
#include "harness/workload.h"

namespace perflab {

/// What a run's device step did.
struct ExecutionRecord {
  bool graphs_in_effect = false;  ///< cuda_graphs in effect by the toggle rules.
  bool graphs_used = false;       ///< Iterations were replayed from captured graphs.
  int graphs_captured = 0;
  int64_t graph_replays = 0;
  std::string graphs_note;        ///< What ran, and why graphs did not when they did not.
  int64_t iterations = 0;
  int64_t syncs_min = 0;          ///< Fewest counted host syncs in one iteration.
  int64_t syncs_max = 0;          ///< Most counted host syncs in one iteration.
  int64_t syncs_total = 0;
  int expected_syncs = 0;         ///< What the step makes by design.
  /// What one iteration ran on the device, counted by CUPTI over one
  /// warm-up iteration (count_at); empty when not counted (launches_note
  /// says why).
  std::optional<int64_t> kernels_per_iteration, copies_per_iteration, memsets_per_iteration;
  int64_t launches_counted_at = -1;  ///< The iteration counted.
  std::string launches_note;
  /// Kernels the step declares per iteration (DeviceStep::launch_plan of
  /// the counted iteration's variant); empty when it declares none.
  std::optional<int64_t> declared_kernels_per_iteration;

  /// Every iteration made exactly the expected number of host syncs.
  bool syncs_as_expected() const;
  /// "host syncs per iteration: 0 (0 in 103 iterations; expected 0); cuda graphs: ..."
  std::string describe() const;
  /// "kernels per iteration: 41 (declared 41), copies 0, memsets 2", or why not counted.
  std::string describe_launches() const;
};

/// The CUDA calls the driver makes (harness/cuda_device_ops.cc); tests
/// supply a fake.
class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  /// Host syncs counted so far (kernels/cuda/host_sync.h).
  virtual int64_t host_sync_count() = 0;
  virtual void begin_capture(void* stream) = 0;
  /// Ends the capture begun on `stream` and keeps its graph, instantiated,
  /// as `variant`'s.
  virtual void end_capture(void* stream, int variant) = 0;
  /// Leaves a capture that failed half-way (the error is being rethrown).
  virtual void abort_capture(void* stream) = 0;
  virtual void launch(void* stream, int variant) = 0;
  /// Waits for the stream (a window boundary, never inside an iteration).
  virtual void synchronize(void* stream) = 0;
  /// CUDA-event timing on `stream`.
  virtual std::unique_ptr<DeviceIterationTimer> make_timer(void* stream) = 0;
  /// Starts recording every kernel, copy and memset the device runs (CUPTI's
  /// activity API). Throws Error with the reason when it cannot (built
  /// without CUPTI, or another tool holds it). One recording at a time.
  virtual void start_activity();
  /// Waits for the device, stops recording, returns what ran since
  /// start_activity.
  virtual ActivityLog stop_activity();
  /// The clock of the activity records, in nanoseconds (phase ranges are
  /// stamped with it so they line up with the device's records).
  virtual uint64_t activity_clock_ns();
  /// Synchronous launch checks on or off for the process (--check-launches;
  /// kernels/cuda/check.h: a debug build keeps them on).
  virtual void set_launch_checks(bool /*synchronous*/) {}
};

/// The CUDA implementation; throws Error in a build without CUDA.
std::unique_ptr<DeviceOps> make_cuda_device_ops();

/// Drives one seed's DeviceStep.
class StepDriver {
 public:
  /// `graphs`: cuda_graphs in effect by the rules. A step that synchronises
  /// the host (expected_host_syncs() > 0) is never captured; the record
  /// says so.
  StepDriver(DeviceStep& step, DeviceOps& ops, bool graphs);
  /// Counts the kernels, copies and memsets of iteration `iteration` with
  /// the ops' activity recording (a warm-up iteration: recording has a
  /// cost); -1 with `why` when no iteration is counted.
  void count_launches_at(int64_t iteration, std::string why = "");
  /// From now on, each iteration's variant's launch plan is added to
  /// declared() (the profiled window's declared work).
  void start_declaring() { declaring_ = true; declared_.clear(); }
  LaunchPlan stop_declaring() {
    declaring_ = false;
    return std::move(declared_);
  }
  /// One iteration: begin, then the step (eager, or every variant captured
  /// at once after the eager iterations, then replayed), then end; counts
  /// the host syncs it made.
  void iterate(int64_t iteration);
  void synchronize() { ops_.synchronize(step_.stream()); }
  DeviceIterationTimer* timer() { return timer_.get(); }
  const ExecutionRecord& record() const { return record_; }

 private:
  void capture_all();
  /// Stops the activity recording of the counted iteration; fills the record.
  void count(int variant);
  /// begin, the step (eager, or captured and replayed), end; the variant.
  int run(int64_t iteration);
  /// The step's launch plan of `variant`, asked once.
  const LaunchPlan& plan_of(int variant);

  DeviceStep& step_;
  DeviceOps& ops_;
  std::unique_ptr<DeviceIterationTimer> timer_;
  bool capture_ = false;
  bool captured_ = false;
  int64_t count_at_ = -1;
  bool declaring_ = false;
  LaunchPlan declared_;
  std::map<int, LaunchPlan> plans_;
  ExecutionRecord record_;
};

}  // namespace perflab
