// The table of workload sections (see workload_sections.h). A static table
// rather than self-registration: perflab_reports is a static archive, and a
// section file whose functions nobody else calls would be dropped by the
// linker with its registrar.
#include "reports/workload_sections.h"

#include "reports/collectives_table.h"
#include "reports/halo_conv_table.h"

namespace perflab::reports {
namespace {

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

const std::vector<WorkloadSection>& workload_sections() {
  static const std::vector<WorkloadSection> sections = {collectives_section(), halo_conv_section()};
  return sections;
}

std::string render_workload_terminal(const std::vector<Result>& results) {
  return render(results, &WorkloadSection::terminal);
}

std::string render_workload_markdown(const std::vector<Result>& results) {
  return render(results, &WorkloadSection::markdown);
}

std::string render_workload_html(const std::vector<Result>& results) { return render(results, &WorkloadSection::html); }

}  // namespace perflab::reports
