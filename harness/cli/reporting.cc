// Report writing shared by `perflab report` and sweeps.
#include "harness/cli/reporting.h"

#include <iostream>

#include "harness/atomic_file.h"
#include "base/text.h"
#include "reports/render.h"
#include "reports/result_set.h"

namespace perflab::cli {

std::vector<std::filesystem::path> write_reports(const std::vector<std::filesystem::path>& inputs,
                                                 const std::filesystem::path& out_dir,
                                                 const std::string& title) {
  reports::ResultSet set = reports::load_result_set(inputs);
  for (const auto& line : set.skipped) std::cerr << "perflab: skipped " << one_line(line) << "\n";
  reports::SweepReport report = reports::make_sweep_report(set, title);
  ensure_writable_directory(out_dir);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"report.md", reports::render_sweep_markdown(report)},
      {"report.csv", reports::render_sweep_csv(report)},
      {"report.json", reports::render_sweep_json(report)},
      {"report.html", reports::render_sweep_html(report)}};
  std::vector<std::filesystem::path> written;
  for (const auto& [name, text] : files) {
    write_file_atomically(out_dir / name, text);
    written.push_back(out_dir / name);
  }
  return written;
}

}  // namespace perflab::cli
