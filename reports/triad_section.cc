// The triad workload's report section (reports/workload_sections.h), the
// example of a workload with tables of its own: after a run, STREAM's own
// output lines for the triad (best rate in MB/s, average, minimum and
// maximum time per iteration), so scripts that read STREAM's output read
// ours; in a sweep report, the rate per array size, where the caches show.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reports/html_page.h"
#include "reports/render_format.h"
#include "reports/workload_sections.h"

namespace perflab::reports {
namespace {

constexpr double kBytesPerElement = 24;  // read b and c, write a: three doubles

struct TriadRow {
  int64_t elements = 0;
  double best_mb_s = 0;  ///< STREAM's "Best Rate": bytes over the fastest iteration, 1e6 bytes per MB.
  double avg_s = 0, min_s = 0, max_s = 0;
};

/// One row per run, in array-size order: the iteration times the result
/// recorded (after warm-up), as STREAM reports them.
std::vector<TriadRow> triad_rows(const std::vector<Result>& results) {
  std::vector<TriadRow> rows;
  for (const Result& r : results) {
    for (const ResultRun& run : r.runs) {
      if (run.iteration_ms.n == 0 || run.iteration_ms.min <= 0) continue;
      TriadRow row;
      row.elements = r.plan.global_batch_size;
      row.min_s = run.iteration_ms.min / 1e3;
      row.avg_s = run.iteration_ms.mean / 1e3;
      row.max_s = run.iteration_ms.max / 1e3;
      row.best_mb_s = kBytesPerElement * static_cast<double>(row.elements) / row.min_s / 1e6;
      rows.push_back(row);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TriadRow& a, const TriadRow& b) { return a.elements < b.elements; });
  return rows;
}

std::vector<std::string> triad_header() {
  return {"elements", "bytes per array", "best rate (MB/s)", "avg time (s)", "min time (s)", "max time (s)"};
}

std::vector<std::vector<std::string>> triad_cells(const std::vector<TriadRow>& rows) {
  std::vector<std::vector<std::string>> out;
  for (const TriadRow& r : rows) {
    out.push_back({std::to_string(r.elements), std::to_string(8 * r.elements), fmt::format("{:.1f}", r.best_mb_s),
                   fmt::format("{:.6f}", r.avg_s), fmt::format("{:.6f}", r.min_s), fmt::format("{:.6f}", r.max_s)});
  }
  return out;
}

WorkloadSection triad_section() {
  WorkloadSection s;
  s.workload = "triad";
  s.terminal = [](const std::vector<Result>& results) {
    std::string out;
    const std::vector<TriadRow> rows = triad_rows(results);
    if (rows.empty()) return out;
    out = "Function    Best Rate MB/s  Avg time     Min time     Max time\n";
    for (const TriadRow& r : rows) {
      out += fmt::format("Triad:     {:12.1f}  {:11.6f}  {:11.6f}  {:11.6f}\n", r.best_mb_s, r.avg_s, r.min_s, r.max_s);
    }
    return out;
  };
  s.markdown = [](const std::vector<Result>& results) -> std::string {
    const std::vector<TriadRow> rows = triad_rows(results);
    if (rows.empty()) return "";
    return "\n## Triad (STREAM's columns, one row per run; the rate falls where the arrays leave a cache)\n\n" +
           detail::markdown_table(triad_header(), triad_cells(rows));
  };
  s.html = [](const std::vector<Result>& results) -> std::string {
    const std::vector<TriadRow> rows = triad_rows(results);
    if (rows.empty()) return "";
    return "<h2>Triad</h2>\n<p>STREAM's columns, one row per run; the rate falls where the arrays leave a "
           "cache.</p>\n" +
           html_table(triad_header(), triad_cells(rows), {});
  };
  return s;
}

}  // namespace

PERFLAB_REGISTER_REPORT_SECTION(triad_section());

}  // namespace perflab::reports
