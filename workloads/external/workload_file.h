// Workload files: an external program that writes MLPerf logs, described in
// YAML, becomes a perflab workload (harness/program.h). Every error names
// the file and line. docs/external-workloads.md documents every key; the
// smallest file is
//
//   command: [python3, "{workload_dir}/train.py", --seed, "{seed}", --log, "{mllog}"]
//
// and `perflab run path/to/NAME.workload.yaml` runs it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend.h"
#include "harness/params.h"
#include "harness/program.h"
#include "harness/registry.h"
#include "harness/toggles.h"

namespace perflab::external {

using Env = std::vector<std::pair<std::string, std::string>>;

/// What one state of a toggle adds to the program's command line and environment.
struct Switch {
  std::vector<std::string> args;
  Env env;
};

/// A toggle the file maps: one of perflab's (`toggle` set) or one of the
/// program's own, which becomes an on/off parameter of the same name.
struct ToggleMapping {
  std::string name;
  std::optional<Toggle> toggle;
  Switch on;
  Switch off;
};

struct WorkloadFile {
  std::filesystem::path path;  ///< Absolute.
  std::string name;            ///< `name:`, or the file name without .workload.yaml.
  std::string summary;
  std::vector<std::string> command;  ///< With placeholders.
  Env env;                           ///< With placeholders.
  std::vector<ParamSpec> params;     ///< Declared, then one per program-named toggle.
  std::vector<Preset> presets;       ///< "default" first (the declared defaults).
  std::vector<ToggleMapping> toggles;
  ProgramQuality quality;
  double timeout_s = 3600;
  /// The compliance checker's command (placeholders as the command's); empty when off.
  std::vector<std::string> compliance;
  std::vector<Backend> backends = {Backend::kCpu, Backend::kCuda};
  std::string batch_param;
  std::string learning_rate_param;
  /// The command or environment names {mllog}: the program writes its log
  /// there; otherwise perflab reads the log from its output.
  bool writes_log_file = false;
};

/// Parses a workload file's text; `path` names it in errors and anchors
/// {workload_dir}. Throws UsageError "path:line: reason".
WorkloadFile parse_workload_file(const std::string& yaml, const std::filesystem::path& path);
/// Reads and parses a file; UsageError "path: cannot read" when it cannot be read.
WorkloadFile read_workload_file(const std::filesystem::path& path);

/// Fills "{name}" placeholders from `values` ("{{" and "}}" are literal
/// braces). Throws UsageError naming an unknown placeholder.
std::string fill_placeholders(const std::string& text, const std::map<std::string, std::string>& values);

/// The WorkloadInfo a file defines: its parameters, presets, toggle rules
/// and a create_program factory.
WorkloadInfo workload_info(const WorkloadFile& file);

}  // namespace perflab::external
