// StepDriver: warm-up, capture, replay and sync counting (see step_driver.h).
#include "harness/step_driver.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "base/error.h"

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

std::string ExecutionRecord::describe_launches() const {
  if (!kernels_per_iteration) return "kernels per iteration: not counted (" + launches_note + ")";
  std::string declared =
      declared_kernels_per_iteration ? fmt::format(" (declared {})", *declared_kernels_per_iteration) : "";
  return fmt::format("kernels per iteration: {}{}, copies {}, memsets {}", *kernels_per_iteration, declared,
                     copies_per_iteration.value_or(0), memsets_per_iteration.value_or(0));
}

void DeviceOps::start_activity() {
  throw Error("device activity cannot be recorded: this build has no CUPTI (built without CUDA)");
}

ActivityLog DeviceOps::stop_activity() { return {}; }

uint64_t DeviceOps::activity_clock_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
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

void StepDriver::count_launches_at(int64_t iteration, std::string why) {
  count_at_ = iteration;
  record_.launches_counted_at = iteration;
  record_.launches_note = iteration < 0 ? std::move(why) : fmt::format("iteration {} not reached", iteration);
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
  // The counted iteration is all of it: begin's work (waits, any value it
  // writes on the device) as well as the step's.
  bool counting = false;
  if (iteration == count_at_) {
    try {
      ops_.start_activity();
      counting = true;
    } catch (const Error& e) {
      record_.launches_note = e.what();  // counting is a record, never a failure
    }
  }
  int variant = 0;
  try {
    variant = run(iteration);
  } catch (...) {
    if (counting) {
      try {
        ops_.stop_activity();  // leave no recording behind the error
      } catch (...) {
      }
    }
    throw;
  }
  if (counting) count(variant);
  const int64_t syncs = ops_.host_sync_count() - before;
  record_.syncs_min = record_.iterations == 0 ? syncs : std::min(record_.syncs_min, syncs);
  record_.syncs_max = std::max(record_.syncs_max, syncs);
  record_.syncs_total += syncs;
  ++record_.iterations;
}

const LaunchPlan& StepDriver::plan_of(int variant) {
  auto it = plans_.find(variant);
  if (it == plans_.end()) it = plans_.emplace(variant, step_.launch_plan(variant)).first;
  return it->second;
}

int StepDriver::run(int64_t iteration) {
  const int variant = step_.begin(iteration);
  if (variant < 0 || variant >= step_.variants()) {
    throw Error(fmt::format("internal: step variant {} outside [0, {})", variant, step_.variants()));
  }
  if (declaring_) {
    const LaunchPlan& plan = plan_of(variant);  // built once per variant: no host work per iteration
    declared_.insert(declared_.end(), plan.begin(), plan.end());
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
  return variant;
}

void StepDriver::count(int variant) {
  const ActivityLog log = ops_.stop_activity();
  int64_t kernels = 0, copies = 0, memsets = 0;
  for (const ActivityRecord& r : log.records) {
    kernels += r.kind == ActivityKind::kKernel;
    copies += r.kind == ActivityKind::kMemcpy;
    memsets += r.kind == ActivityKind::kMemset;
  }
  record_.kernels_per_iteration = kernels;
  record_.copies_per_iteration = copies;
  record_.memsets_per_iteration = memsets;
  record_.launches_note = log.dropped > 0 ? fmt::format("CUPTI dropped {} records: an undercount", log.dropped)
                                          : fmt::format("counted by CUPTI over iteration {}", count_at_);
  const LaunchPlan& plan = plan_of(variant);
  if (!plan.empty()) record_.declared_kernels_per_iteration = static_cast<int64_t>(plan.size());
}

}  // namespace perflab
