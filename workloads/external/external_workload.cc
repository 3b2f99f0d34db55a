// A workload file as a workload: its WorkloadInfo, its Program (the command
// for each seed) and the loader that makes `perflab run NAME.workload.yaml`
// and a sweep file's `workload: NAME.workload.yaml` find it.
#include <unistd.h>

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "base/error.h"
#include "harness/registry.h"
#include "harness/run_context.h"
#include "harness/subprocess.h"
#include "workloads/external/workload_file.h"

namespace perflab::external {
namespace fs = std::filesystem;
namespace {

/// A parameter's value as the program gets it: text as typed for strings,
/// numbers as JSON writes them (shortest exact form).
std::string param_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

class ExternalProgram : public Program {
 public:
  ExternalProgram(WorkloadFile file, RunSpec spec) : file_(std::move(file)), spec_(std::move(spec)) {
    // The program must be there before any run starts: a sweep resolves and
    // prepares its points first.
    const std::string program = fill_placeholders(file_.command.front(), values(1, {"", ""}));
    if (!find_program(program)) {
      throw UsageError(fmt::format("{}: command: '{}' is not an executable found on PATH", file_.path.string(),
                                   program));
    }
  }

  ProgramLaunch launch(uint64_t seed, const ProgramPaths& paths) const override {
    const std::map<std::string, std::string> v = values(seed, paths);
    ProgramLaunch out;
    for (const std::string& a : file_.command) out.argv.push_back(fill_placeholders(a, v));
    for (const auto& [name, value] : file_.env) out.env.emplace_back(name, fill_placeholders(value, v));
    for (const ToggleMapping& m : file_.toggles) {
      const Switch& s = on(m) ? m.on : m.off;
      for (const std::string& a : s.args) out.argv.push_back(fill_placeholders(a, v));
      for (const auto& [name, value] : s.env) out.env.emplace_back(name, fill_placeholders(value, v));
    }
    out.writes_log_file = file_.writes_log_file;
    for (const std::string& a : file_.compliance) out.compliance.push_back(fill_placeholders(a, v));
    if (out.compliance.empty()) out.compliance_off = "compliance: off in the workload file";
    return out;
  }

  ProgramQuality quality() const override { return file_.quality; }
  double timeout_s() const override { return file_.timeout_s; }

  StepPlan step_plan() const override {
    StepPlan plan;
    plan.batch_size = 0;  // from the logs' global_batch_size
    plan.precision = "unstated";  // unless a log states lowest_numerical_precision_in_linear
    plan.data = {{"workload_file", file_.path.string()}, {"command", file_.command}};
    plan.work.floor_basis = "an external program: perflab does not count its work";
    return plan;
  }

 private:
  bool on(const ToggleMapping& m) const {
    if (m.toggle) return spec_.toggles[*m.toggle].requested;
    return spec_.params.get_string(m.name) == "on";
  }

  std::map<std::string, std::string> values(uint64_t seed, const ProgramPaths& paths) const {
    std::map<std::string, std::string> v;
    for (const auto& [name, value] : spec_.params.json().items()) v[name] = param_text(value);
    v["seed"] = std::to_string(seed);
    v["out"] = paths.out.string();
    v["mllog"] = paths.mllog.string();
    v["workload_dir"] = file_.path.parent_path().string();
    v["perflab"] = this_executable();
    v["backend"] = backend_name(spec_.backend);
    v["threads"] = std::to_string(spec_.threads);
    return v;
  }

  WorkloadFile file_;
  RunSpec spec_;
};

}  // namespace

WorkloadInfo workload_info(const WorkloadFile& file) {
  WorkloadInfo info;
  info.name = file.name;
  info.summary = file.summary;
  info.source = file.path.string();
  info.params = file.params;
  info.presets = file.presets;
  info.default_preset = "default";
  info.backends = file.backends;
  info.batch_param = file.batch_param;
  info.learning_rate_param = file.learning_rate_param;
  for (const ToggleMapping& m : file.toggles) {
    if (!m.toggle) continue;
    ToggleRule rule;
    rule.toggle = *m.toggle;
    rule.backends = file.backends;
    rule.needs_nothing = true;  // what the program needs is its own business
    info.toggle_rules.push_back(rule);
  }
  info.create_program = [file](const RunContext& ctx) -> std::unique_ptr<Program> {
    return std::make_unique<ExternalProgram>(file, ctx.spec);
  };
  return info;
}

namespace {

WorkloadLoader workload_file_loader() {
  WorkloadLoader loader;
  loader.what = fmt::format("a workload file (NAME{})", kWorkloadFileSuffix);
  loader.claims = [](const std::string& name) { return is_workload_file_name(name); };
  loader.load = [](const std::string& name) { return workload_info(read_workload_file(name)); };
  return loader;
}

PERFLAB_REGISTER_WORKLOAD_LOADER(workload_file_loader());

}  // namespace
}  // namespace perflab::external
