// Dashboard HTML from the history's check and series.
#include "reports/dashboard.h"

#include <fmt/format.h>

#include "reports/html_page.h"
#include "reports/svg_chart.h"

namespace perflab::reports {
namespace {

constexpr const char* kExtraStyle = R"(
tr.slower td { background: #fdecea; font-weight: bold; }
tr.faster td { background: #e8f5e9; }
.verdict-summary { font-size: 1.1em; }
)";

std::string verdicts_section(const Dashboard& d) {
  std::string h = "<h2>Latest verdicts</h2>\n";
  if (!d.latest) return h + "<p class=\"note\">Nothing recorded yet.</p>\n";
  if (!d.check || !d.check->comparison) {
    return h + fmt::format("<p class=\"note\">Run {} (revision {}) has no earlier run on machine {} to compare with.</p>\n",
                           d.latest->id, xml_escape(d.latest->git_revision), xml_escape(d.latest->machine));
  }
  const Comparison& c = *d.check->comparison;
  size_t slower = 0, faster = 0;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> classes;
  for (const CompareRow& r : c.rows) {
    slower += r.verdict == Verdict::kSlower ? 1 : 0;
    faster += r.verdict == Verdict::kFaster ? 1 : 0;
    rows.push_back({r.label, r.metric, fmt::format("{:.4g}", r.base_median), fmt::format("{:.4g}", r.candidate_median),
                    fmt::format("{:+.1f}%", 100 * r.change), fmt::format("{:.3g}", r.test.p_value),
                    verdict_name(r.verdict), r.note});
    classes.push_back(r.verdict == Verdict::kSlower ? "slower" : r.verdict == Verdict::kFaster ? "faster" : "");
  }
  h += fmt::format("<p class=\"verdict-summary\" id=\"summary\">Run {} (revision {}, {}) against {} earlier runs on "
                   "machine {}: <strong>{} slower</strong>, {} faster, {} metrics.</p>\n",
                   d.latest->id, xml_escape(d.latest->git_revision), xml_escape(d.latest->timestamp),
                   d.check->baseline_runs.size(), xml_escape(d.latest->machine), slower, faster, c.rows.size());
  h += html_table({"point", "metric", "baseline median", "latest median", "change", "p", "verdict", "note"}, rows,
                  {0, 1, 6, 7}, classes);
  return h + fmt::format("<p class=\"note\">A verdict needs p &lt; {} (two-sided Mann-Whitney U, latest repetitions "
                         "against the baseline's) and a change of at least {:.1f}%.</p>\n",
                         c.options.alpha, 100 * c.options.threshold);
}

std::string changes_section(const Dashboard& d) {
  std::vector<std::vector<std::string>> rows;
  for (const SeriesChanges& sc : d.series) {
    for (const ChangePoint& cp : sc.changes) {
      const HistoryValue& v = sc.series.values[cp.index];
      rows.push_back({sc.series.name(), sc.series.machine, v.git_revision, std::to_string(v.run_id), v.timestamp,
                      fmt::format("{:+.1f}%", 100 * cp.change), fmt::format("{:.3g}", cp.p_value)});
    }
  }
  std::string h = "<h2>Change points</h2>\n";
  if (rows.empty()) return h + "<p class=\"note\">No change point in any series.</p>\n";
  return h + html_table({"series", "machine", "revision", "run", "timestamp", "change", "p"}, rows, {0, 1, 2, 4});
}

std::string chart(const SeriesChanges& sc) {
  const HistorySeries& s = sc.series;
  LineChart chart;
  chart.title = s.name() + " (machine " + s.machine + ")";
  chart.x_label = "run";
  chart.y_label = s.metric + " (" + s.unit + ")";
  Series line;
  line.name = "median";
  for (const HistoryValue& v : s.values) {
    line.x.push_back(static_cast<double>(v.run_id));
    line.y.push_back(v.median);
    line.tooltips.push_back(fmt::format("run {} ({}, {}): {:.6g} {}", v.run_id, v.git_revision, v.timestamp, v.median,
                                        s.unit));
  }
  chart.series.push_back(std::move(line));
  for (const ChangePoint& cp : sc.changes) {
    const HistoryValue& v = s.values[cp.index];
    chart.markers.emplace_back(static_cast<double>(v.run_id), fmt::format("{} {:+.1f}%", v.git_revision, 100 * cp.change));
  }
  return render_line_chart(chart);
}

}  // namespace

std::string render_dashboard(const Dashboard& d) {
  std::string h = html_page_start(d.title, kExtraStyle);
  h += "<h1>" + xml_escape(d.title) + "</h1>\n";
  h += fmt::format("<p class=\"note\">History {}; {} series.</p>\n", xml_escape(d.database), d.series.size());
  h += verdicts_section(d);
  h += changes_section(d);
  h += "<h2>Trends</h2>\n<div class=\"charts\">\n";
  for (const SeriesChanges& sc : d.series) h += chart(sc);
  return h + "</div>\n</body>\n</html>\n";
}

}  // namespace perflab::reports
