// `perflab report RESULT_OR_DIR... --out DIR`: time-to-train per point,
// toggle matrix and batch-size sweep tables with charts, as Markdown, CSV,
// JSON and one self-contained HTML file; MLPerf result folders and MLLOG
// files given too are scored as the result summarizer does (mlperf.md).
#include <iostream>

#include "harness/atomic_file.h"
#include "harness/cli/commands.h"
#include "harness/cli/reporting.h"
#include "reports/mlperf_results.h"

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
  auto rcps = std::make_shared<std::string>();
  sub->add_option("--rcps", *rcps, "MLPerf inputs: an RCP file or a folder of rcps_<benchmark>.json; none: no normalisation; default: mlperf_logging's RCPs for the version the results' path names (training_results_v4.0), else the newest");
  sub->footer("Files that are not valid perflab results are listed and skipped, not fatal. MLPerf result\n"
              "folders and MLLOG files are scored as the MLCommons result summarizer does (mlperf.md).");
  return {sub, [inputs, out, title, rcps] {
            std::vector<std::filesystem::path> paths, mlperf;
            for (const auto& p : *inputs) (reports::is_mlperf_input(p) ? mlperf : paths).push_back(p);
            if (!mlperf.empty()) {
              std::vector<reports::MlperfScore> scores;
              for (const auto& p : mlperf) {
                for (auto& s : reports::load_mlperf(p, *rcps)) scores.push_back(std::move(s));
              }
              for (const auto& s : scores) std::cout << reports::mlperf_score_line(s) << "\n";
              ensure_writable_directory(*out);
              write_file_atomically(std::filesystem::path(*out) / "mlperf.md",
                                    reports::render_mlperf_scores_markdown(scores, *title));
              std::cout << (std::filesystem::path(*out) / "mlperf.md").string() << "\n";
            }
            if (!paths.empty() || mlperf.empty()) {
              for (const auto& p : write_reports(paths, *out, *title)) std::cout << p.string() << "\n";
            }
            return 0;
          }};
}

}  // namespace perflab::cli
