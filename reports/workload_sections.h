// A workload's own sections of perflab's output: what its results add to
// the terminal after `perflab run` or `perflab sweep`, and to the sweep
// report (Markdown and HTML). The CLI and the sweep renderers make one call
// each and never name a workload; a workload with its own tables writes
// them in a file of reports/ and lists its section in the table of
// reports/workload_sections.cc (one line).
#pragma once

#include <functional>
#include <string>
#include <vector>

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

/// Every workload's section, in the order the reports show them.
const std::vector<WorkloadSection>& workload_sections();

/// Each section that has results of its workload among `results`, rendered
/// for the terminal, Markdown or HTML and joined in order.
std::string render_workload_terminal(const std::vector<Result>& results);
std::string render_workload_markdown(const std::vector<Result>& results);
std::string render_workload_html(const std::vector<Result>& results);

}  // namespace perflab::reports
