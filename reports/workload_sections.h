// A workload's own sections of perflab's output: what its results add to
// the terminal after `perflab run` or `perflab sweep`, and to the sweep
// report (Markdown and HTML). The CLI and the sweep renderers make one call
// each and never name a workload. A workload with tables of its own adds
// one file, reports/<name>_section.cc, that registers its section:
//
//   PERFLAB_REGISTER_REPORT_SECTION(triad_section());
//
// The *_section.cc files are built as an OBJECT library handed to every
// executable that links perflab_report_sections (reports/CMakeLists.txt),
// the workloads' pattern, so the linker cannot drop a registration.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/registry.h"  // PERFLAB_CONCAT
#include "harness/result_model.h"

namespace perflab::reports {

/// Renders one workload's section from its results (only its own are
/// passed, never none); "" when there is nothing to show.
using SectionRenderer = std::function<std::string(const std::vector<Result>& results)>;

struct WorkloadSection {
  std::string workload;  ///< Whose results it renders (Result::spec.workload).
  SectionRenderer terminal;  ///< After a run (one result) or a sweep (all of them).
  SectionRenderer markdown;  ///< The sweep report's section, heading included.
  SectionRenderer html;      ///< Likewise in the HTML report.
};

/// Every registered section, by workload name.
std::vector<WorkloadSection> workload_sections();

namespace detail {
struct SectionRegistrar {
  explicit SectionRegistrar(WorkloadSection section);
};
}  // namespace detail

/// Each section that has results of its workload among `results`, rendered
/// for the terminal, Markdown or HTML and joined in order.
std::string render_workload_terminal(const std::vector<Result>& results);
std::string render_workload_markdown(const std::vector<Result>& results);
std::string render_workload_html(const std::vector<Result>& results);

}  // namespace perflab::reports

/// Registers a workload's report section at static-initialisation time.
#define PERFLAB_REGISTER_REPORT_SECTION(section_expr)                                           \
  static const ::perflab::reports::detail::SectionRegistrar PERFLAB_CONCAT(perflab_section_, \
                                                                             __COUNTER__)(section_expr)
