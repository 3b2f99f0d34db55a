// The workload registry.
#include "harness/registry.h"

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
  if (kind == WorkloadKind::kTimedStep) return {RunMode::kThroughput};
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

void Registry::add(WorkloadInfo info) { workloads_.push_back(std::move(info)); }

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
