// `perflab rcp write|check`: reference convergence points in MLPerf's RCP
// format, and MLPerf's check of new runs against them.
#include <iostream>

#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "base/error.h"
#include "reports/mlperf_export.h"
#include "reports/rcp.h"

namespace perflab::cli {
namespace {

std::vector<Result> documents(const std::vector<std::string>& inputs) {
  std::vector<std::filesystem::path> paths(inputs.begin(), inputs.end());
  std::vector<Result> docs;
  for (auto& r : reports::load_result_sources(paths)) docs.push_back(std::move(r.result));
  return docs;
}

/// Checks each batch size's runs (from any number of results) against the
/// RCPs. Exit: 0 all passed, 1 one failed, 3 none failed but one could not
/// be checked.
int check(const std::string& rcp_file, const std::vector<std::string>& inputs,
          const reports::RcpCheckOptions& options) {
  bool failed = false, unchecked = false;
  for (const auto& c : reports::check_rcp_results(reports::read_rcps(rcp_file), documents(inputs), options)) {
    std::cout << fmt::format("batch {}: {}: {}\n", c.batch_size, reports::verdict_name(c.verdict),
                             c.explanation);
    failed |= c.verdict == reports::RcpVerdict::kFailed;
    unchecked |= c.verdict == reports::RcpVerdict::kNotCheckable;
  }
  return failed ? 1 : unchecked ? 3 : 0;
}

}  // namespace

Command add_rcp(CLI::App& app) {
  auto* sub = app.add_subcommand("rcp", "Reference convergence points (MLPerf RCP files)");
  sub->require_subcommand(1);
  auto* write = sub->add_subcommand("write", "Write epochs-to-converge per batch size as RCPs");
  auto* check_cmd = sub->add_subcommand("check", "Check runs against RCPs with MLPerf's rule");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto rcp_file = std::make_shared<std::string>();
  auto options = std::make_shared<reports::RcpCheckOptions>();
  auto full = std::make_shared<bool>(false);
  write->add_option("results", *inputs, "result.json files or sweep folders")->required();
  write->add_option("--out,-o", *out, "RCP file to write (JSON)")->required();
  check_cmd->add_option("rcp", *rcp_file, "RCP file")->required();
  check_cmd->add_option("results", *inputs, "result.json files or sweep folders")->required();
  check_cmd->add_option("--submission-runs", options->submission_runs,
                        "Runs MLPerf requires for this benchmark, 1 to 1000 (default: the benchmark's, else the runs "
                        "given)")
      ->check(CLI::Range(1, 1000));
  check_cmd->add_flag("--full", *full, "Use every RCP, not the pruned set");
  check_cmd->footer("Exit status: 0 passed, 1 failed, 2 invalid input, 3 not checkable.");
  return {sub, [=] {
            if (write->parsed()) {
              auto rcps = reports::build_rcps(documents(*inputs));
              reports::write_rcps(*out, rcps);
              for (const auto& e : rcps) {
                std::cout << fmt::format("{}: {} runs\n", e.key(), e.epochs_to_converge.size());
              }
              std::cout << fmt::format("wrote {}\n", *out);
              return 0;
            }
            options->pass = *full ? reports::RcpPass::kFull : reports::RcpPass::kPruned;
            return check(*rcp_file, *inputs, *options);
          }};
}

}  // namespace perflab::cli
