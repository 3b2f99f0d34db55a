// StepDriver: warm-up, capture, replay and sync counting (see step_driver.h).
#include "harness/step_driver.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/error.h"

namespace perflab {

bool ExecutionRecord::syncs_as_expected() const {
  return iterations == 0 || (syncs_min == expected_syncs && syncs_max == expected_syncs);
}

std::string ExecutionRecord::describe() const {
  const std::string per = syncs_min == syncs_max ? fmt::format("{}", syncs_max)
                                                 : fmt::format("{} to {}", syncs_min, syncs_max);
  return fmt::format("host syncs per iteration: {} ({} in {} iterations; expected {}{}); cuda graphs: {}",
                     per, syncs_total, iterations, expected_syncs,
                     syncs_as_expected() ? "" : ": VIOLATED", graphs_note);
}

StepDriver::StepDriver(DeviceStep& step, DeviceOps& ops, bool graphs)
    : step_(step), ops_(ops), timer_(ops.make_timer(step.stream())) {
  record_.graphs_in_effect = graphs;
  record_.expected_syncs = step.expected_host_syncs();
  if (!graphs) {
    record_.graphs_note = "off";
  } else if (record_.expected_syncs > 0) {
    record_.graphs_note = fmt::format(
        "not used: the step synchronises the host ({} per iteration), which a graph cannot hold",
        record_.expected_syncs);
  } else {
    capture_ = true;
    record_.graphs_note = fmt::format("not used: no iteration ran after the {} eager ones",
                                      step.eager_iterations());
  }
}

void StepDriver::capture_all() {
  // enqueue(variant) depends only on the variant, so every variant can be
  // captured now: one (warm-up) iteration pays for all instantiations.
  void* stream = step_.stream();
  for (int v = 0; v < step_.variants(); ++v) {
    ops_.begin_capture(stream);
    try {
      step_.enqueue(v);
    } catch (...) {
      ops_.abort_capture(stream);
      throw;
    }
    ops_.end_capture(stream, v);
    ++record_.graphs_captured;
  }
  captured_ = true;
}

void StepDriver::iterate(int64_t iteration) {
  const int64_t before = ops_.host_sync_count();
  const int variant = step_.begin(iteration);
  if (variant < 0 || variant >= step_.variants()) {
    throw Error(fmt::format("internal: step variant {} outside [0, {})", variant, step_.variants()));
  }
  if (capture_ && iteration >= step_.eager_iterations()) {
    if (!captured_) capture_all();
    ops_.launch(step_.stream(), variant);
    ++record_.graph_replays;
    if (!record_.graphs_used) {
      record_.graphs_used = true;
      record_.graphs_note = fmt::format(
          "in use: after {} eager iterations, {} captured graph(s) (one per step variant) replayed",
          step_.eager_iterations(), step_.variants());
    }
  } else {
    step_.enqueue(variant);
  }
  step_.end(iteration, variant);
  const int64_t syncs = ops_.host_sync_count() - before;
  record_.syncs_min = record_.iterations == 0 ? syncs : std::min(record_.syncs_min, syncs);
  record_.syncs_max = std::max(record_.syncs_max, syncs);
  record_.syncs_total += syncs;
  ++record_.iterations;
}

}  // namespace perflab
