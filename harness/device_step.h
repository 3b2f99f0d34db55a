// A device workload's iteration, split the way the harness needs to run it:
// host work before the step (stage input, write per-iteration scalars on the
// device), the step itself enqueued on one stream (what a CUDA graph
// captures), and host work after it (record events, prefetch). The harness
// (harness/step_driver.h) runs the eager warm-up, captures one graph per
// variant and replays it, counts host synchronisations and times the step
// with CUDA events; the workload only enqueues. Host-only header: the
// stream is a cudaStream_t passed as void*.
#pragma once

#include <cstdint>

#include "harness/launch_plan.h"

namespace perflab {

class DeviceStep {
 public:
  virtual ~DeviceStep() = default;
  /// The stream the step is enqueued on (a cudaStream_t).
  virtual void* stream() = 0;
  /// Host work before iteration `iteration`'s step, outside any capture
  /// (stream-ordered waits, input staging, scalars written on the device).
  /// Returns the variant, in [0, variants()), whose step this iteration runs:
  /// iterations of one variant replay one captured graph.
  virtual int begin(int64_t iteration) = 0;
  /// Enqueues the step of `variant` on stream(). Never allocates and, in a
  /// step that expects no host syncs, never synchronises: it may be captured.
  virtual void enqueue(int variant) = 0;
  /// Host work after the step (events, prefetching the next input).
  virtual void end(int64_t /*iteration*/, int /*variant*/) {}
  /// Distinct steps (graphs) the iterations cycle through.
  virtual int variants() const { return 1; }
  /// Host synchronisations one iteration makes by design (counted through
  /// kernels/cuda/host_sync.h): 0 for a sync-free step. The harness fails
  /// the gate when the count differs, and captures no graph of a step that
  /// synchronises.
  virtual int expected_host_syncs() const = 0;
  /// Eager iterations before the first capture (kernels loaded, library
  /// heuristics and allocations settled).
  virtual int eager_iterations() const { return 2; }
  /// The kernels variant `variant`'s step launches, in order, with their
  /// work (harness/launch_plan.h): the profiler's per-kernel floors and the
  /// launch count a CPU test checks. Empty: not declared.
  virtual LaunchPlan launch_plan(int /*variant*/) { return {}; }
};

}  // namespace perflab
