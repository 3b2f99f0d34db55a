// Self-registering workloads. A workload's registration file defines a
// WorkloadInfo and registers it at static-initialisation time:
//
//   PERFLAB_REGISTER_WORKLOAD(dlrm_info());
//
// Registration units must be linked as OBJECT libraries (see workloads/).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/workload.h"

namespace perflab {

struct WorkloadInfo {
  std::string name;
  std::string summary;  ///< One line: what it measures.
  std::vector<ParamSpec> params;
  std::vector<Preset> presets;
  std::string default_preset;
  std::vector<Backend> backends;  ///< Backends this workload implements.
  /// Run modes this workload supports; the first is the default.
  std::vector<RunMode> modes = {RunMode::kTimeToTrain};
  /// Empty when `toggle` can be honoured on `backend`, else the reason it
  /// cannot (recorded as "requested: on, in effect: off (reason)").
  std::function<std::string(Toggle toggle, Backend backend)> toggle_unsupported;
  /// Empty when `toggle` can take effect together with the other toggles
  /// in effect (`toggles`), else the reason it cannot (e.g. graph capture
  /// needs the sync-free iteration). Optional; asked after toggle_unsupported.
  std::function<std::string(Toggle toggle, Backend backend, const ToggleSet& toggles)> toggle_conflict;
  /// Prepares data and configuration; throws UsageError for bad inputs.
  std::function<std::unique_ptr<Benchmark>(const WorkloadConfig&)> create;
  /// Rules file for the compliance checker, per preset (relative to the
  /// source tree), empty when none is shipped.
  std::function<std::string(const std::string& preset)> rules_file;

  const Preset* find_preset(const std::string& preset) const;
};

class Registry {
 public:
  static Registry& instance();
  void add(WorkloadInfo info);
  /// Throws UsageError naming the valid workloads.
  const WorkloadInfo& get(const std::string& name) const;
  const std::vector<WorkloadInfo>& all() const { return workloads_; }
  std::vector<std::string> names() const;

 private:
  std::vector<WorkloadInfo> workloads_;
};

namespace detail {
struct Registrar {
  explicit Registrar(WorkloadInfo info) { Registry::instance().add(std::move(info)); }
};
}  // namespace detail

#define PERFLAB_CONCAT_INNER(a, b) a##b
#define PERFLAB_CONCAT(a, b) PERFLAB_CONCAT_INNER(a, b)
/// Registers a WorkloadInfo at static-initialisation time.
#define PERFLAB_REGISTER_WORKLOAD(info_expr)                               \
  static const ::perflab::detail::Registrar PERFLAB_CONCAT(perflab_registrar_, \
                                                           __LINE__)(info_expr)

}  // namespace perflab
