// `perflab list`: workloads, their parameters (defaults, ranges), presets,
// toggles and the backends available on this machine.
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/device.h"
#include "harness/registry.h"
#include "base/text.h"

namespace perflab::cli {
namespace {

std::string range_of(const ParamSpec& p) {
  if (!p.choices.empty()) return join(p.choices, " | ");
  if (p.type == ParamType::kString) return "text";
  std::string lo = p.min ? bound_text(p, *p.min) : "";
  std::string hi = p.max ? bound_text(p, *p.max) : "";
  return fmt::format("{} [{}..{}]", param_type_name(p.type), lo, hi);
}

void print_workload(std::ostream& out, const WorkloadInfo& w) {
  std::vector<std::string> backends;
  for (Backend b : w.backends) backends.push_back(backend_name(b));
  std::vector<std::string> modes;
  for (RunMode m : w.modes()) modes.push_back(run_mode_name(m));
  out << fmt::format("\nWorkload {}: {}\n", w.name, w.summary);
  if (!w.source.empty()) out << fmt::format("  file: {} (an external program)\n", w.source);
  out << fmt::format("  backends: {}\n  modes: {} (first is the default)\n", join(backends, ", "), join(modes, ", "));
  if (w.kind() == WorkloadKind::kProgram) {
    std::vector<std::string> mapped;
    for (const ToggleRule& rule : w.toggle_rules) mapped.push_back(toggle_flag(rule.toggle));
    out << fmt::format("  toggles passed to the program: {}\n", mapped.empty() ? "none" : join(mapped, " "));
  } else {
    out << "  toggles in effect:";
    bool any = false;
    for (const ToggleRule& rule : w.toggle_rules) {
      for (Backend b : rule.backends) {
        if (std::find(w.backends.begin(), w.backends.end(), b) == w.backends.end()) continue;
        out << fmt::format(" {} ({}{})", toggle_flag(rule.toggle), backend_name(b),
                           rule.needs ? fmt::format(", needs {}", toggle_flag(*rule.needs)) : "");
        any = true;
      }
    }
    out << (any ? "\n" : " none on the backends built so far\n");
  }
  out << "  presets:\n";
  for (const Preset& p : w.presets) {
    out << fmt::format("    {:<8}{} {}\n", p.name, p.name == w.default_preset ? "*" : " ", p.help);
  }
  out << fmt::format("  parameters (default shown; presets override):\n");
  for (const ParamSpec& p : w.params) {
    out << fmt::format("    {:<22} {:<14} {:<24} {}\n", p.name, p.default_value, range_of(p), p.help);
  }
}

int list_command(const std::vector<std::string>& names) {
  // The workloads asked for (names or workload files) are found before
  // anything is printed: a bad one is one error line.
  std::vector<const WorkloadInfo*> workloads;
  for (const std::string& name : names) workloads.push_back(&Registry::instance().get(name));
  if (names.empty()) {
    for (const WorkloadInfo& w : Registry::instance().all()) workloads.push_back(&w);
  }
  DeviceProbe devices = probe_devices();
  std::ostream& out = std::cout;
  out << "Backends on this machine:\n";
  out << "  cpu   available\n";
  out << fmt::format("  cuda  {}\n", devices.available
                                         ? fmt::format("available ({} device(s))", devices.devices.size())
                                         : "not available: " + devices.reason);
  out << "\nToggles (--NAME on|off; a toggle a backend cannot honour is recorded as not in effect):\n";
  for (Toggle t : kAllToggles) out << fmt::format("  --{:<12} {}\n", toggle_flag(t), toggle_help(t));

  for (const WorkloadInfo* w : workloads) print_workload(out, *w);
  if (names.empty()) {
    out << "\nYour own program as a workload: a NAME.workload.yaml file (docs/external-workloads.md);\n"
           "perflab list FILE shows its parameters and toggles.\n";
  }
  return 0;
}

}  // namespace

Command add_list(CLI::App& app) {
  auto* sub = app.add_subcommand("list", "List workloads, parameters, presets, toggles and backends");
  auto names = std::make_shared<std::vector<std::string>>();
  sub->add_option("workloads", *names, "Only these: workload names or workload files (NAME.workload.yaml)");
  return {sub, [names] { return list_command(*names); }};
}

}  // namespace perflab::cli
