// `perflab compare BASE CANDIDATE`: per point and metric, medians, change,
// a Mann-Whitney U test and a verdict; exit 1 when something got slower.
// Points profiled on both sides also get their kernels compared.
#include <iostream>

#include "harness/cli/commands.h"
#include "reports/compare.h"
#include "reports/kernel_compare.h"

namespace perflab::cli {

Command add_compare(CLI::App& app) {
  auto* sub = app.add_subcommand("compare", "Compare two sets of results: medians, U test, verdict per metric");
  auto base = std::make_shared<std::string>();
  auto candidate = std::make_shared<std::string>();
  auto threshold = std::make_shared<double>(5);
  auto alpha = std::make_shared<double>(0.05);
  auto markdown = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto rcps = std::make_shared<std::string>();
  sub->add_option("base", *base, "Base: a result.json, or a folder searched for them (sweeps too); or MLPerf results / an MLLOG file")->required();
  sub->add_option("candidate", *candidate, "Candidate: likewise")->required();
  sub->add_option("--threshold", *threshold, "Smallest change of the medians that counts, in percent")
      ->capture_default_str();
  sub->add_option("--alpha", *alpha, "Significance level of the two-sided Mann-Whitney U test")
      ->capture_default_str();
  sub->add_flag("--markdown", *markdown, "Print a Markdown table");
  sub->add_flag("--json", *json, "Print JSON");
  sub->add_option("--rcps", *rcps,
                  "MLPerf inputs: an RCP file or a folder of rcps_<benchmark>.json; none: no normalisation; default: mlperf_logging's RCPs for the version the results' path names (training_results_v4.0), else the newest");
  sub->footer("Exit status: 0 nothing slower, 1 a metric got slower, 2 invalid input.");
  return {sub, [=] {
            const auto b = reports::load_metric_input({*base}, "BASE", *rcps);
            const auto c = reports::load_metric_input({*candidate}, "CANDIDATE", *rcps);
            for (const auto* in : {&b, &c}) {
              for (const auto& s : in->skipped) std::cerr << "perflab: skipped " << s << "\n";
            }
            const auto comparison = reports::compare_samples(b.samples, c.samples, {*threshold / 100, *alpha});
            const auto kernels = reports::compare_kernels(b.profiles, c.profiles);
            if (*json) {
              auto doc = reports::compare_to_json(comparison);
              doc["scores"] = {{"base", b.scores}, {"candidate", c.scores}};
              doc["kernels"] = reports::kernel_compare_to_json(kernels);
              std::cout << doc.dump(2) << "\n";
              return comparison.regressed() ? 1 : 0;
            }
            for (const auto& s : b.scores) std::cout << "BASE " << s << "\n";
            for (const auto& s : c.scores) std::cout << "CANDIDATE " << s << "\n";
            std::cout << (*markdown ? reports::render_compare_markdown(comparison)
                                    : reports::render_compare_console(comparison));
            std::cout << (*markdown ? reports::render_kernel_compare_markdown(kernels)
                                    : reports::render_kernel_compare_console(kernels));
            return comparison.regressed() ? 1 : 0;
          }};
}

}  // namespace perflab::cli
