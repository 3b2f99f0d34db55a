// The workload registry.
#include "harness/registry.h"

#include <stdexcept>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"

namespace perflab {

const Preset* WorkloadInfo::find_preset(const std::string& preset) const {
  for (const auto& p : presets) {
    if (p.name == preset) return &p;
  }
  return nullptr;
}

std::vector<RunMode> WorkloadInfo::modes() const {
  if (kind() == WorkloadKind::kTimedStep) return {RunMode::kThroughput};
  return {RunMode::kTimeToTrain, RunMode::kThroughput};
}

const ToggleRule* WorkloadInfo::toggle_rule(Toggle toggle) const {
  for (const auto& rule : toggle_rules) {
    if (rule.toggle == toggle) return &rule;
  }
  return nullptr;
}

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(WorkloadInfo info) {
  if (static_cast<bool>(info.create_timed_step) == static_cast<bool>(info.create_trainable)) {
    throw std::logic_error(fmt::format("workload {}: set exactly one of create_timed_step and create_trainable",
                                       info.name));
  }
  workloads_.push_back(std::move(info));
}

std::optional<Toggle> default_toggle_need(Toggle toggle) {
  if (toggle == Toggle::kCudaGraphs) return Toggle::kSyncFree;
  return std::nullopt;
}

const WorkloadInfo& Registry::get(const std::string& name) const {
  for (const auto& w : workloads_) {
    if (w.name == name) return w;
  }
  throw UsageError(
      fmt::format("unknown workload '{}'; valid workloads: {}", name, join(names(), ", ")));
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& w : workloads_) out.push_back(w.name);
  return out;
}

}  // namespace perflab
