// The registry of workload sections (see workload_sections.h).
#include "reports/workload_sections.h"

#include <algorithm>
#include <utility>

namespace perflab::reports {
namespace {

std::vector<WorkloadSection>& registry() {
  static std::vector<WorkloadSection> sections;
  return sections;
}

using Renderer = SectionRenderer WorkloadSection::*;

std::string render(const std::vector<Result>& results, Renderer which) {
  std::string out;
  for (const WorkloadSection& section : workload_sections()) {
    std::vector<Result> own;
    for (const Result& r : results) {
      if (r.spec.workload == section.workload) own.push_back(r);
    }
    const SectionRenderer& renderer = section.*which;
    if (!own.empty() && renderer) out += renderer(own);
  }
  return out;
}

}  // namespace

detail::SectionRegistrar::SectionRegistrar(WorkloadSection section) { registry().push_back(std::move(section)); }

std::vector<WorkloadSection> workload_sections() {
  // By name, so the reports' order does not depend on static initialisation.
  std::vector<WorkloadSection> out = registry();
  std::stable_sort(out.begin(), out.end(),
                   [](const WorkloadSection& a, const WorkloadSection& b) { return a.workload < b.workload; });
  return out;
}

std::string render_workload_terminal(const std::vector<Result>& results) {
  return render(results, &WorkloadSection::terminal);
}

std::string render_workload_markdown(const std::vector<Result>& results) {
  return render(results, &WorkloadSection::markdown);
}

std::string render_workload_html(const std::vector<Result>& results) { return render(results, &WorkloadSection::html); }

}  // namespace perflab::reports
