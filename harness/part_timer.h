// The harness's clock for the parts of a step timed alone. A workload says
// what its parts are (TimedStep::time_parts); the harness times them, on
// every rank, after the correctness gate, and writes the per-part table
// into the result (runs[].parts) and the reports. Each repetition of a part
// is an NVTX range and a profiled phase of the part's name, so a trace
// shows the same names as the table.
#pragma once

#include <chrono>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "harness/result_model.h"

namespace perflab {

class DeviceOps;

/// The harness's clock for a part that cannot be run alone, only inside the
/// iterations (host time blocked in communication): time() adds a stretch
/// to the current iteration's total, end_iteration() closes it. Its
/// per-iteration totals go to PartTimer::samples in time_parts.
class PartStopwatch {
 public:
  /// Runs `work` and adds its host time to the current iteration.
  template <typename Work>
  void time(Work&& work) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    current_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  void end_iteration() {
    ms_per_iteration_.push_back(current_ms_);
    current_ms_ = 0;
  }
  const std::vector<double>& ms_per_iteration() const { return ms_per_iteration_; }
  double total_ms() const { return std::accumulate(ms_per_iteration_.begin(), ms_per_iteration_.end(), 0.0); }

 private:
  double current_ms_ = 0;
  std::vector<double> ms_per_iteration_;
};

class PartTimer {
 public:
  /// `ops`: the step's device (CUDA events), or null for a host step;
  /// `warmup`: iterations samples() leaves out (the run's --warmup).
  PartTimer(collectives::Communicator& comm, DeviceOps* ops, int repetitions = kRepetitions, int64_t warmup = 0);

  /// Repetitions of each part timed alone.
  static constexpr int kRepetitions = 3;

  /// Times `part` on the host clock: it returns when its work is done.
  /// Collective: every rank times the same parts in the same order; a
  /// repetition's time is the slowest rank's, the part's the median.
  void host(const std::string& name, const std::function<void()>& part);
  /// Times work `enqueue` puts on `stream` (a cudaStream_t; work on other
  /// streams joined back to it) between two CUDA events: the device's time.
  /// Collective, like host(). On a host step (no device) it throws Error.
  void device(const std::string& name, void* stream, const std::function<void()>& enqueue);
  /// A part measured inside the iterations, one value per training
  /// iteration of this rank (say, host time blocked in communication): the
  /// median over the iterations after the warm-up, the slowest rank's.
  /// Collective.
  void samples(const std::string& name, const std::vector<double>& ms_per_iteration);

  /// The parts timed so far, in the order they were timed.
  const std::vector<ResultPart>& parts() const { return parts_; }

 private:
  void add(const std::string& name, std::vector<double> ms, const std::string& clock);

  collectives::Communicator& comm_;
  DeviceOps* ops_;
  int repetitions_;
  int64_t warmup_;
  std::vector<ResultPart> parts_;
};

}  // namespace perflab
