// Self-registering workloads. A workload's registration file defines a
// WorkloadInfo and registers it at static-initialisation time:
//
//   PERFLAB_REGISTER_WORKLOAD(dlrm_info());
//
// Registration units must be linked as OBJECT libraries (see workloads/).
#pragma once

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/program.h"
#include "harness/run_context.h"
#include "harness/workload.h"

namespace perflab {

/// Where a toggle can be honoured, declared once by the workload as data;
/// the harness applies the rules when it resolves a spec (run_spec.cc).
struct ToggleRule {
  Toggle toggle = Toggle::kFused;
  std::vector<Backend> backends;  ///< Backends whose implementation honours it.
  std::string unsupported;        ///< Why not, on every other backend.
  /// Another toggle that must be in effect for this one to take effect, and
  /// why. Unset, the harness's default applies (default_toggle_need: CUDA
  /// graphs need the sync-free step, as a step that synchronises with the
  /// host inside its iteration cannot be captured); `needs_why` alone
  /// words the default's reason for this workload.
  std::optional<Toggle> needs;
  std::string needs_why;
  /// Overrides the default: this toggle needs no other.
  bool needs_nothing = false;
};

/// The harness's default need of `toggle` (cuda_graphs: sync_free), if any.
std::optional<Toggle> default_toggle_need(Toggle toggle);

/// What a workload's seeds give the harness.
enum class WorkloadKind {
  kTimedStep,  ///< A timed step with a correctness gate: throughput mode only.
  kTrainable,  ///< A model trained to a quality target: time to train (default) and throughput.
  kProgram,    ///< An external program that writes MLLOG (harness/program.h): time to train.
};

struct WorkloadInfo {
  std::string name;
  std::string summary;  ///< One line: what it measures.
  std::vector<ParamSpec> params;
  std::vector<Preset> presets;
  std::string default_preset;
  std::vector<Backend> backends;  ///< Backends this workload implements.
  /// The toggles it can honour; a toggle without a rule is reported as not
  /// in effect ("<workload> has no <toggle> variant").
  std::vector<ToggleRule> toggle_rules;
  /// Its batch-size, learning-rate and warm-up parameters (empty: none), so
  /// sweeps' learning-rate rules and batch-size reports work for any workload.
  std::string batch_param;
  std::string learning_rate_param;
  std::string warmup_param;
  /// What its seeds give the harness, by the factory it sets (exactly one;
  /// Registry::add checks): a timed step with a correctness gate
  /// (throughput mode only), or a model trained to a quality target (time
  /// to train by default, and throughput). Each prepares data and
  /// configuration and throws UsageError for bad inputs.
  std::function<std::unique_ptr<Benchmark>(const RunContext&)> create_timed_step;
  std::function<std::unique_ptr<TrainableBenchmark>(const RunContext&)> create_trainable;
  /// An external program run once per seed, whose MLLOG the harness reads
  /// (harness/program.h; workloads/external's workload files).
  std::function<std::unique_ptr<Program>(const RunContext&)> create_program;
  /// The file that defined it (absolute), empty for a built-in workload.
  std::string source;
  /// The command line of the tool this workload mirrors (nccl-tests for
  /// collectives), turned into perflab's flags before `perflab run
  /// <workload> ...` is parsed; empty: none. Gets and returns the arguments
  /// after the workload's name.
  std::function<std::vector<std::string>(const std::vector<std::string>&)> translate_args;
  /// Rules file for the compliance checker, per preset (relative to the
  /// source tree), empty when none is shipped.
  std::function<std::string(const std::string& preset)> rules_file;
  /// Whether its Benchmark serves (Benchmark::start_inference): --mode
  /// inference drives it with MLCommons LoadGen (harness/inference_run.h).
  bool serves = false;

  /// Which factory it set.
  WorkloadKind kind() const {
    if (create_program) return WorkloadKind::kProgram;
    return create_trainable ? WorkloadKind::kTrainable : WorkloadKind::kTimedStep;
  }
  /// Run modes, the default first: time to train and throughput for a
  /// trainable workload, throughput for a timed step; inference last when
  /// it serves.
  std::vector<RunMode> modes() const;
  /// The rule of `toggle`, or null.
  const ToggleRule* toggle_rule(Toggle toggle) const;
  const Preset* find_preset(const std::string& preset) const;
};

/// Makes workloads from files: `claims` says whether a name is such a file
/// (by its ending: "NAME.workload.yaml"), `load` reads it and returns the
/// workload it defines, with `source` set to the file's absolute path;
/// throws UsageError ("file:line: reason") for a file that is not valid.
struct WorkloadLoader {
  std::string what;  ///< For messages: "a workload file (NAME.workload.yaml)".
  std::function<bool(const std::string& name)> claims;
  std::function<WorkloadInfo(const std::string& name)> load;
};

class Registry {
 public:
  static Registry& instance();
  /// Throws std::logic_error for a registration that sets no factory or
  /// more than one (a programming error, found at start-up).
  void add(WorkloadInfo info);
  void add_loader(WorkloadLoader loader);
  /// A registered workload by name, or one a loader makes from the file
  /// `name` names (loaded once per process and kept: references stay
  /// valid). Throws UsageError naming the valid workloads.
  const WorkloadInfo& get(const std::string& name) const;
  /// The registered (built-in) workloads.
  const std::vector<WorkloadInfo>& all() const { return workloads_; }
  std::vector<std::string> names() const;

 private:
  std::vector<WorkloadInfo> workloads_;
  std::vector<WorkloadLoader> loaders_;
  /// Workloads loaded from files, by the name they were asked for and by
  /// their absolute path (a list: references to its elements stay valid).
  mutable std::list<WorkloadInfo> loaded_;
  mutable std::map<std::string, const WorkloadInfo*> loaded_by_name_;
};

namespace detail {
struct LoaderRegistrar {
  explicit LoaderRegistrar(WorkloadLoader loader) { Registry::instance().add_loader(std::move(loader)); }
};
}  // namespace detail

namespace detail {
struct Registrar {
  explicit Registrar(WorkloadInfo info) { Registry::instance().add(std::move(info)); }
};
}  // namespace detail

#define PERFLAB_CONCAT_INNER(a, b) a##b
#define PERFLAB_CONCAT(a, b) PERFLAB_CONCAT_INNER(a, b)
// The registrars' names take __COUNTER__, not __LINE__: in a unity batch
// (PERFLAB_UNITY_BUILD) two files' registrations may sit on the same line.
/// Registers a WorkloadLoader at static-initialisation time.
#define PERFLAB_REGISTER_WORKLOAD_LOADER(loader_expr)                                  \
  static const ::perflab::detail::LoaderRegistrar PERFLAB_CONCAT(perflab_loader_, \
                                                                 __COUNTER__)(loader_expr)
/// Registers a WorkloadInfo at static-initialisation time.
#define PERFLAB_REGISTER_WORKLOAD(info_expr)                               \
  static const ::perflab::detail::Registrar PERFLAB_CONCAT(perflab_registrar_, \
                                                           __COUNTER__)(info_expr)

}  // namespace perflab
