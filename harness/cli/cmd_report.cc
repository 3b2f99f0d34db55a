// `perflab report RESULT_OR_DIR... --out DIR`: time-to-train per point,
// toggle matrix and batch-size sweep tables with charts, as Markdown, CSV,
// JSON and one self-contained HTML file.
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/cli/reporting.h"

namespace perflab::cli {

Command add_report(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "report", "Reports over results: time to train, toggle matrix, batch-size sweep");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>("perflab-report");
  auto title = std::make_shared<std::string>("perflab report");
  sub->add_option("results", *inputs, "result.json files or folders searched for them")->required();
  sub->add_option("--out,-o", *out, "Folder for report.{md,csv,json,html}")->capture_default_str();
  sub->add_option("--title", *title, "Report title")->capture_default_str();
  sub->footer("Files that are not valid perflab results are listed and skipped, not fatal.");
  return {sub, [inputs, out, title] {
            std::vector<std::filesystem::path> paths(inputs->begin(), inputs->end());
            for (const auto& p : write_reports(paths, *out, *title)) std::cout << p.string() << "\n";
            return 0;
          }};
}

}  // namespace perflab::cli
