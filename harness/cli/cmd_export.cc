// `perflab export --mlperf DIR RESULT...`: an MLPerf-style results folder.
#include <iostream>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "reports/mlperf_export.h"

namespace perflab::cli {

Command add_export(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "export", "Lay results out as an MLPerf results folder (results/, systems/)");
  auto dir = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto options = std::make_shared<reports::MlperfExportOptions>();
  sub->add_option("--mlperf", *dir, "Folder to create")->required();
  sub->add_option("results", *inputs, "result.json files or folders holding them")->required();
  sub->add_option("--system", options->system_name, "System name (default: the results' host)");
  sub->add_option("--division", options->division, "closed | open")
      ->capture_default_str()
      ->check(CLI::IsMember({"closed", "open"}));
  return {sub, [dir, inputs, options] {
            std::vector<std::filesystem::path> paths(inputs->begin(), inputs->end());
            reports::ExportSummary s =
                reports::export_mlperf(reports::load_result_sources(paths), *dir, *options);
            for (const auto& [benchmark, count] : s.benchmarks) {
              std::cout << fmt::format("{}/results/{}/{}: {} result file(s)\n", s.out_dir.string(),
                                       s.system_name, benchmark, count);
            }
            std::cout << fmt::format("{}/systems/{}.json\n", s.out_dir.string(), s.system_name);
            return 0;
          }};
}

}  // namespace perflab::cli
