// The collectives workload's report section (reports/workload_sections.h):
// nccl-tests' table in the terminal after a run or sweep, and the table with
// its bus-bandwidth chart in the sweep reports.
#include <string>
#include <vector>

#include "reports/html_page.h"
#include "reports/render_format.h"
#include "reports/collectives_table.h"
#include "reports/workload_sections.h"

namespace perflab::reports {
namespace {

WorkloadSection collectives_section() {
  WorkloadSection s;
  s.workload = "collectives";
  s.terminal = render_collectives_table;
  s.markdown = [](const std::vector<Result>& results) -> std::string {
    const std::vector<CollectivesRow> rows = collectives_rows(results);
    if (rows.empty()) return "";
    return "\n## Collectives (nccl-tests' columns; time per operation, median of the timed iterations)\n\n" +
           detail::markdown_table(collectives_header(), collectives_cells(rows));
  };
  s.html = [](const std::vector<Result>& results) -> std::string {
    const std::vector<CollectivesRow> rows = collectives_rows(results);
    if (rows.empty()) return "";
    return "<h2>Collectives</h2>\n<p>nccl-tests' columns: time per operation (median of the timed iterations), "
           "algorithm and bus bandwidth, wrong elements.</p>\n" +
           html_table(collectives_header(), collectives_cells(rows), {0, 3, 4, 15}) + "<div class=\"charts\">" +
           render_line_chart(collectives_chart(rows)) + "</div>\n";
  };
  return s;
}

}  // namespace

PERFLAB_REGISTER_REPORT_SECTION(collectives_section());

}  // namespace perflab::reports
