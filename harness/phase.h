// Named phases of a run (run, iteration, forward, backward, optimizer,
// exchange, evaluation), marked by the harness and by workloads through the
// harness, never with their own NVTX calls. Each phase is an NVTX range (so
// it shows in Nsight Systems; free without a tool attached) and, while a
// profiled window records (harness/profile_window.h), a range in the
// Chrome trace on the same clock as the device's records.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "harness/activity.h"

namespace perflab {

/// Marks the scope as phase `name` (a string literal or one that outlives
/// the scope).
class ScopedPhase {
 public:
  explicit ScopedPhase(const char* name);
  ~ScopedPhase();
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  class PhaseRecording* recording_ = nullptr;  ///< The recording it opened a range in.
};

/// Collects this thread's phases as range records while it lives, stamped
/// by `clock` (nanoseconds, the device activity's clock). One per thread at
/// a time; the harness makes it around a profiled window.
class PhaseRecording {
 public:
  explicit PhaseRecording(std::function<uint64_t()> clock);
  ~PhaseRecording();
  PhaseRecording(const PhaseRecording&) = delete;
  PhaseRecording& operator=(const PhaseRecording&) = delete;

  /// The ranges closed so far (a range still open is not included).
  std::vector<ActivityRecord> take();

  // Used by ScopedPhase.
  void push(const char* name);
  void pop();

 private:
  std::function<uint64_t()> clock_;
  std::vector<ActivityRecord> open_;
  std::vector<ActivityRecord> closed_;
  PhaseRecording* previous_ = nullptr;
};

}  // namespace perflab
