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
  // A program trains to its target; perflab does not drive its iterations.
  if (kind() == WorkloadKind::kProgram) return {RunMode::kTimeToTrain};
  std::vector<RunMode> modes;
  if (kind() == WorkloadKind::kTimedStep) {
    modes = {RunMode::kThroughput};
  } else {
    modes = {RunMode::kTimeToTrain, RunMode::kThroughput};
  }
  if (serves) modes.push_back(RunMode::kInference);
  return modes;
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
  const int factories = static_cast<int>(static_cast<bool>(info.create_timed_step)) +
                        static_cast<int>(static_cast<bool>(info.create_trainable)) +
                        static_cast<int>(static_cast<bool>(info.create_program));
  if (factories != 1) {
    throw std::logic_error(fmt::format(
        "workload {}: set exactly one of create_timed_step, create_trainable and create_program", info.name));
  }
  workloads_.push_back(std::move(info));
}

void Registry::add_loader(WorkloadLoader loader) { loaders_.push_back(std::move(loader)); }

std::optional<Toggle> default_toggle_need(Toggle toggle) {
  if (toggle == Toggle::kCudaGraphs) return Toggle::kSyncFree;
  return std::nullopt;
}

const WorkloadInfo& Registry::get(const std::string& name) const {
  for (const auto& w : workloads_) {
    if (w.name == name) return w;
  }
  if (auto it = loaded_by_name_.find(name); it != loaded_by_name_.end()) return *it->second;
  for (const WorkloadLoader& loader : loaders_) {
    if (!loader.claims(name)) continue;
    WorkloadInfo info = loader.load(name);
    // The same file asked for by another name (relative, absolute) is the
    // same workload: loaded once.
    if (auto it = loaded_by_name_.find(info.source); it != loaded_by_name_.end()) {
      loaded_by_name_[name] = it->second;
      return *it->second;
    }
    const WorkloadInfo& kept = loaded_.emplace_back(std::move(info));
    loaded_by_name_[name] = &kept;
    loaded_by_name_[kept.source] = &kept;
    return kept;
  }
  std::string files;
  for (const WorkloadLoader& loader : loaders_) files += ", or " + loader.what;
  throw UsageError(
      fmt::format("unknown workload '{}'; valid workloads: {}{}", name, join(names(), ", "), files));
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& w : workloads_) out.push_back(w.name);
  return out;
}

}  // namespace perflab
