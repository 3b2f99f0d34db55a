// The halo_conv workload's report section (reports/workload_sections.h):
// the step split into compute and exposed transfer after a run, the
// per-point table and its chart in the sweep reports.
#include <string>
#include <vector>

#include "reports/html_page.h"
#include "reports/render_format.h"
#include "reports/halo_conv_table.h"
#include "reports/workload_sections.h"

namespace perflab::reports {
namespace {

WorkloadSection halo_conv_section() {
  WorkloadSection s;
  s.workload = "halo_conv";
  s.terminal = [](const std::vector<Result>& results) {
    std::string out;
    if (results.size() == 1) out = render_halo_conv_summary(results.front());  // after a run, not a sweep
    return out;
  };
  s.markdown = [](const std::vector<Result>& results) -> std::string {
    const std::vector<HaloConvRow> rows = halo_conv_rows(results);
    if (rows.empty()) return "";
    return "\n## Halo convolution (median step; compute and transfer timed alone; exposed = step - compute "
           "(at least 0); overlap efficiency = (naive - overlap) / transfer, or by how much the overlap was "
           "slower)\n\n" +
           detail::markdown_table(halo_conv_header(), halo_conv_cells(rows));
  };
  s.html = [](const std::vector<Result>& results) -> std::string {
    const std::vector<HaloConvRow> rows = halo_conv_rows(results);
    if (rows.empty()) return "";
    return "<h2>Halo convolution</h2>\n<p>Median step; compute, halo transfer and weight-gradient all-reduce timed "
           "alone; exposed = step - compute (at least 0); overlap efficiency = (naive - overlap) / transfer, or "
           "by how much the overlap was slower.</p>\n" +
           html_table(halo_conv_header(), halo_conv_cells(rows), {0, 1, 4, 5}) + "<div class=\"charts\">" +
           render_bar_chart(halo_conv_chart(rows)) + "</div>\n";
  };
  return s;
}

}  // namespace

PERFLAB_REGISTER_REPORT_SECTION(halo_conv_section());

}  // namespace perflab::reports
